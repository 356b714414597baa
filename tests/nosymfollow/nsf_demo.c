// SPDX-License-Identifier: GPL-2.0
/*
 * The tour's nosymfollow demo: a tmpfs holding a file and a symbolic link
 * to it, walked through before and after a bind remount with MS_NOSYMFOLLOW,
 * and after mount_setattr(2) clears MOUNT_ATTR_NOSYMFOLLOW again.  On such
 * a mount, following a link fails with ELOOP while readlink(2) still reads
 * it.  Every line printed is what the calls returned; an outcome other than
 * the documented one prints UNEXPECTED and the program exits 1.
 */
#include "nsf_util.h"

#define DIR	"/mnt/nsf-demo"

static int failures;

static void expect(bool ok, const char *what)
{
	if (!ok) {
		printf("UNEXPECTED: %s\n", what);
		failures++;
	}
}

/* Open DIR/link and print what happened: 0 when it opened, or the errno. */
static int follow(void)
{
	char buf[64] = "";
	ssize_t n;
	int fd, err;

	fd = open(DIR "/link", O_RDONLY);
	if (fd < 0) {
		err = errno;
		printf("  open(\"link\"): %s\n", strerror(err));
		return err;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	printf("  open(\"link\"): reads \"%s\"\n", buf);
	close(fd);
	return 0;
}

static void show_link(void)
{
	char buf[64];
	ssize_t n = readlink(DIR "/link", buf, sizeof(buf) - 1);

	if (n < 0) {
		printf("  readlink(\"link\"): %s\n", strerror(errno));
		expect(false, "readlink must work on any mount");
		return;
	}
	buf[n] = '\0';
	printf("  readlink(\"link\"): \"%s\"\n", buf);
}

static bool flag_shown(void)
{
	char opts[256];
	struct statfs sf;
	bool in_mountinfo, in_statfs;

	mount_opts(DIR, opts, sizeof(opts));
	in_mountinfo = shown_nosymfollow(DIR);
	in_statfs = !statfs(DIR, &sf) && (sf.f_flags & ST_NOSYMFOLLOW);
	printf("  mountinfo options \"%s\", statfs ST_NOSYMFOLLOW %s\n", opts,
	       in_statfs ? "set" : "clear");
	expect(in_mountinfo == in_statfs, "mountinfo and statfs disagree");
	return in_mountinfo;
}

int main(void)
{
	int fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (enter_mntns() || (mkdir(DIR, 0755) && errno != EEXIST) ||
	    mount("tmpfs", DIR, "tmpfs", 0, "size=1m")) {
		printf("UNEXPECTED: setting up a tmpfs on " DIR ": %s\n", strerror(errno));
		return 1;
	}
	fd = open(DIR "/target", O_WRONLY | O_CREAT, 0644);
	if (fd < 0 || write(fd, "hello\n", 6) != 6 || close(fd) ||
	    symlink("target", DIR "/link")) {
		printf("UNEXPECTED: creating the files: %s\n", strerror(errno));
		return 1;
	}
	printf("tmpfs on " DIR ", link -> target:\n");
	expect(!flag_shown(), "a fresh tmpfs shows nosymfollow");
	expect(follow() == 0, "the link must be followed");

	printf("mount(MS_REMOUNT | MS_BIND | MS_NOSYMFOLLOW): %s\n",
	       mount(NULL, DIR, NULL, MS_REMOUNT | MS_BIND | MS_NOSYMFOLLOW, NULL) ?
	       strerror(errno) : "done");
	expect(flag_shown(), "the remount must set nosymfollow");
	expect(follow() == ELOOP, "following the link must fail with ELOOP");
	show_link();

	printf("mount_setattr(attr_clr = MOUNT_ATTR_NOSYMFOLLOW): %s\n",
	       sys_mount_setattr(AT_FDCWD, DIR, 0, 0, MOUNT_ATTR_NOSYMFOLLOW) ?
	       strerror(errno) : "done");
	expect(!flag_shown(), "mount_setattr must clear nosymfollow");
	expect(follow() == 0, "the link must be followed again");
	return failures ? 1 : 0;
}

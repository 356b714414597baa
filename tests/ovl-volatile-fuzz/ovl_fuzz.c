// SPDX-License-Identifier: GPL-2.0
/*
 * Seeded fuzzing of overlayfs mounts: random option strings over random work directory
 * states, as root and as uid 1000 in a user namespace of its own.
 *
 * Every case builds a fresh tmpfs with a lower, an upper, a work directory and a mount point;
 * fills the work directory with a random tree (directories, files of random modes, symlinks
 * live and dangling, fifos; names from the ones overlayfs cares about: work, incompat,
 * volatile, dirty, index, dot names); mounts with a random option string; writes and syncs a
 * file through the overlay when it mounted; unmounts.  What user space can see is printed as
 * one line per case ("# obs <case> ..."): the mount's errno, the options /proc/mounts shows,
 * and the work directory tree (names, types, permission bits, sizes) after the mount and
 * after the unmount.  The three-kernel check compares those lines between stock 6.1 and ours
 * for the same seed; the console scan fails the run on any kernel error report.
 *
 * Checked on every kernel, from Documentation/filesystems/overlayfs.rst: /proc/mounts shows
 * "volatile" exactly when the mount that succeeded asked for it; a volatile mount whose upper
 * layer took a write has <workdir>/work/incompat/volatile/dirty, a regular file, while mounted
 * and still after the unmount (so that the next mount of that work directory refuses).  A case
 * that breaks it has " VIOLATION(<what>)" in its line, and the run's last result fails.
 *
 * Environment: KTEST_SEED (the seed; random if unset, always printed), KTEST_FUZZ_CASES
 * (default 1000), KTEST_FUZZ_SECONDS (a bound on the run time, default 420 s, inside the
 * group's 600 s timeout; a run cut short says how many cases it ran).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../fuzz_rng.h"
#include "kselftest.h"
#include "../ovl-volatile/ovl_util.h"

#define BASE	"/tmp/ovlf"
#define UID	1000
#define OBS_LEN	8192

#define ONE_OF(a) ((a)[pick(ARRAY_SIZE(a))])

static const char *const names[] = {
	"work", "incompat", "volatile", "dirty", "index", ".keep", ".", "..x", "x", "#1",
};

/* A random entry named name in dir; directories get random children, depth permitting. */
static void make_entry(const char *dir, const char *name, int depth)
{
	static const mode_t modes[] = { 0, 0400, 0644, 0755, 0700, 01777, 04755, 0111 };
	char path[PATH_LEN];
	int fd, i, n;

	if (!strcmp(name, "."))
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	switch (pick(depth > 0 ? 8 : 5)) {
	case 0:
		/* O_EXCL: never open what stands there already (a fifo would block) */
		fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_NONBLOCK, ONE_OF(modes));
		if (fd >= 0) {
			if (pick(2) && write(fd, "data", 4) < 0)
				;
			close(fd);
		}
		break;
	case 1:
		if (symlink(pick(2) ? ".." : "nowhere", path))
			;
		break;
	case 2:
		mkfifo(path, 0644);
		break;
	case 3:
		mkdir(path, ONE_OF(modes) & 0777);
		break;
	case 4:
		if (symlink(pick(2) ? "/" : "incompat", path))
			;
		break;
	default:
		if (mkdir(path, 0755))
			break;
		n = pick(4);
		for (i = 0; i < n; i++)
			make_entry(path, ONE_OF(names), depth - 1);
		/* a mode set after the children, so they could be made */
		if (!pick(4))
			chmod(path, ONE_OF(modes) & 0777);
		break;
	}
}

/* A work dir state that reaches the interesting places more often than chance would. */
static void make_workdir(const char *w)
{
	char path[PATH_LEN];
	int i, n;

	switch (pick(4)) {
	case 0:		/* work/incompat/volatile/... as a volatile mount leaves it, give or take */
		snprintf(path, sizeof(path), "%s/work/incompat", w);
		mkdir_p(path);
		n = pick(3);
		for (i = 0; i < n; i++)
			make_entry(path, ONE_OF(names), 1);
		break;
	case 1:		/* something in the place of work itself */
		make_entry(w, "work", 2);
		break;
	default:	/* anything */
		n = pick(4);
		for (i = 0; i < n; i++)
			make_entry(w, ONE_OF(names), 3);
		break;
	}
}

/* A random option string after lowerdir, upperdir and workdir (which may be odd too). */
static void make_options(char *buf, size_t len, const char *b)
{
	static const char *const opts[] = {
		"volatile", "volatile", "volatile", "index=on", "index=off", "nfs_export=on",
		"nfs_export=off", "xino=on", "xino=off", "xino=auto", "metacopy=on",
		"metacopy=off", "redirect_dir=on", "redirect_dir=follow", "redirect_dir=off",
		"userxattr", "uuid=off", "uuid=null", "uuid=on", "default_permissions",
		"volatile=on", "volatil", "", "workdir=", "upperdir=",
	};
	static const char *const works[] = {
		"w", "w", "w", "w", "w/work", "u/x", "l", "nonexistent", "w/work/incompat", "f",
	};
	size_t off;
	int i, n = pick(5);

	off = snprintf(buf, len, "lowerdir=%s/l,upperdir=%s/u,workdir=%s/%s", b, b, b,
		       ONE_OF(works));
	for (i = 0; i < n && off < len; i++)
		off += snprintf(buf + off, len - off, ",%s", ONE_OF(opts));
}

/* Append to out (len bytes, *off used so far); output beyond the end is dropped. */
static void __attribute__((format(printf, 4, 5)))
add(char *out, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*off + 1 >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(out + *off, len - *off, fmt, ap);
	va_end(ap);
	if (n > 0)
		*off = *off + n < len ? *off + n : len - 1;
}

/* The tree under path, depth first, in readdir order: name:mode:size, directories in {}. */
static void list_tree(const char *path, char *out, size_t len, size_t *off, int depth)
{
	char sub[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(path);

	if (!d) {
		add(out, len, off, "!%d", errno);
		return;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		if (lstat(sub, &st)) {
			add(out, len, off, "%s:?;", de->d_name);
			continue;
		}
		add(out, len, off, "%s:%o:%lld", de->d_name, (unsigned int)st.st_mode,
		    S_ISREG(st.st_mode) ? (long long)st.st_size : 0LL);
		if (S_ISDIR(st.st_mode) && depth < 6) {
			add(out, len, off, "{");
			list_tree(sub, out, len, off, depth + 1);
			add(out, len, off, "}");
		}
		add(out, len, off, ";");
	}
	closedir(d);
}

/*
 * The options of the overlay, as shown, with the lowerdir/upperdir/workdir values dropped
 * (the same on both kernels, and long).
 */
static void shown_options(const char *mnt, char *out, size_t len)
{
	char opts[2048], *tok, *save;
	size_t off = 0;

	out[0] = '\0';
	if (mount_options(mnt, opts, sizeof(opts))) {
		add(out, len, &off, "-");
		return;
	}
	for (tok = strtok_r(opts, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strncmp(tok, "lowerdir=", 9) || !strncmp(tok, "upperdir=", 9) ||
		    !strncmp(tok, "workdir=", 8))
			continue;
		add(out, len, &off, "%s%s", off ? "," : "", tok);
	}
}

/* Whether the option string @opts has the token @tok. */
static bool has_token(const char *opts, const char *tok)
{
	size_t n = strlen(tok);
	const char *p;

	for (p = opts; (p = strstr(p, tok)); p += n)
		if ((p == opts || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

/* The volatile mount's dirty file under the last workdir= of @opts: 1 a regular file, 0 not. */
static int dirty_file(const char *opts, char *path, size_t len)
{
	const char *w = NULL, *p;
	struct stat st;
	size_t n;

	for (p = opts; (p = strstr(p, "workdir=")); p++)
		if (p == opts || p[-1] == ',')
			w = p + 8;
	if (!w)
		return -1;
	n = strcspn(w, ",");
	snprintf(path, len, "%.*s/work/incompat/volatile/dirty", (int)n, w);
	return !stat(path, &st) && S_ISREG(st.st_mode);
}

/* One case, in whatever credentials the caller has; the observation goes to obs. */
static void one_case(char *obs, size_t len)
{
	char opts[1024], shown[1024];
	size_t off = 0;
	int err, fd, uerr = 0;

	umount_all(BASE);
	obs[0] = '\0';
	if (mkdir_p(BASE) || mount("tmpfs", BASE, "tmpfs", 0, "size=4m,mode=0755")) {
		add(obs, len, &off, "setup %d", errno);
		return;
	}
	mkdir(BASE "/l", 0755);
	mkdir(BASE "/u", 0755);
	mkdir(BASE "/w", 0755);
	mkdir(BASE "/m", 0755);
	fd = open(BASE "/l/lowerfile", O_CREAT | O_WRONLY, 0644);
	close(fd);
	fd = open(BASE "/f", O_CREAT | O_WRONLY, 0644);
	close(fd);
	make_workdir(BASE "/w");
	make_options(opts, sizeof(opts), BASE);

	err = mount("overlay", BASE "/m", "overlay", 0, opts) ? errno : 0;
	/* the option string without the lowerdir and upperdir every case has */
	add(obs, len, &off, "opts=%s rc=%d", strstr(opts, "workdir="), err);
	if (!err) {
		bool asked = has_token(opts, "volatile"), wrote = false;
		char dirty[PATH_LEN];

		shown_options(BASE "/m", shown, sizeof(shown));
		add(obs, len, &off, " shown=%s", shown);
		if (asked != has_token(shown, "volatile"))
			add(obs, len, &off, " VIOLATION(volatile %s shown)", asked ? "not" : "wrongly");
		fd = open(BASE "/m/new", O_CREAT | O_WRONLY, 0600);
		add(obs, len, &off, " write=%d", fd < 0 ? errno : 0);
		if (fd >= 0) {
			wrote = write(fd, "x", 1) == 1 && !fsync(fd);
			add(obs, len, &off, "/%d", wrote ? 0 : errno);
			close(fd);
		}
		if (asked && wrote && dirty_file(opts, dirty, sizeof(dirty)) != 1)
			add(obs, len, &off, " VIOLATION(no %s while mounted)", dirty + strlen(BASE));
		add(obs, len, &off, " mounted=");
		list_tree(BASE "/w", obs, len, &off, 0);
		uerr = umount(BASE "/m") ? errno : 0;
		if (uerr)
			umount2(BASE "/m", MNT_DETACH);
		add(obs, len, &off, " umount=%d", uerr);
		if (asked && wrote && !uerr && dirty_file(opts, dirty, sizeof(dirty)) != 1)
			add(obs, len, &off, " VIOLATION(no %s after the unmount)", dirty + strlen(BASE));
	}
	add(obs, len, &off, " after=");
	list_tree(BASE "/w", obs, len, &off, 0);
	umount2(BASE, MNT_DETACH);
}

/* A case as uid 1000 in a user namespace: in a child, the observation through shared memory. */
static void userns_case(char *obs, size_t len)
{
	int status;
	pid_t pid;

	obs[0] = '\0';
	pid = fork();
	if (pid < 0) {
		snprintf(obs, len, "fork %d", errno);
		return;
	}
	if (!pid) {
		int err = enter_userns(UID);

		if (err)
			snprintf(obs, len, "userns %d", -err);
		else
			one_case(obs, len);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		snprintf(obs, len, "child died");
}

/* Whether this kernel knows the option at all (the baseline does not). */
static int volatile_known(void)
{
	char opts[256];
	int err;

	umount_all(BASE);
	if (mkdir_p(BASE) || mount("tmpfs", BASE, "tmpfs", 0, "size=1m"))
		return -errno;
	mkdir(BASE "/l", 0755);
	mkdir(BASE "/u", 0755);
	mkdir(BASE "/w", 0755);
	mkdir(BASE "/m", 0755);
	snprintf(opts, sizeof(opts), "lowerdir=%s/l,upperdir=%s/u,workdir=%s/w,volatile",
		 BASE, BASE, BASE);
	err = mount("overlay", BASE "/m", "overlay", 0, opts) ? -errno : 0;
	if (!err)
		umount(BASE "/m");
	umount2(BASE, MNT_DETACH);
	return err;
}

int main(void)
{
	const struct fuzz_env env = fuzz_env();
	unsigned long cases = env.cases, limit = env.limit, i, done = 0, users = 0, broken = 0;
	uint64_t seed = env.seed;
	char *obs = mmap(NULL, OBS_LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	time_t start = time(NULL);
	bool userns;
	int err;

	ksft_print_header();
	ksft_set_plan(3);
	ksft_print_msg("seed %llu, %lu cases (KTEST_SEED=%llu replays them)\n",
		       (unsigned long long)seed, cases, (unsigned long long)seed);
	if (obs == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));

	err = volatile_known();
	ksft_test_result(!err, "a volatile overlay mounts (%s)\n", err ? strerror(-err) : "ok");

	rng = seed;
	for (i = 0; i < cases; i++) {
		if ((unsigned long)(time(NULL) - start) > limit)
			break;
		/* each case draws from its own stream, so that a case replays alone as well */
		fuzz_seed_case(seed, i);
		userns = !pick(3);
		if (userns) {
			userns_case(obs, OBS_LEN);
			users++;
		} else {
			one_case(obs, OBS_LEN);
		}
		obs[OBS_LEN - 1] = '\0';
		broken += !!strstr(obs, " VIOLATION(");
		printf("# obs c%lu %s %s\n", i, userns ? "userns" : "root", obs);
		fflush(stdout);
		done++;
	}
	umount_all(BASE);
	ksft_test_result(done > 0, "%lu of %lu cases in %ld s (%lu as uid %d in a user namespace)\n",
			 done, cases, (long)(time(NULL) - start), users, UID);
	ksft_test_result(!broken, "volatile shown as asked, its dirty file kept (%lu cases broke it)\n",
			 broken);
	ksft_finished();
}

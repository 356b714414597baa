// SPDX-License-Identifier: GPL-2.0
/*
 * The "nosymfollow" mount flag (patches/nosymfollow): what a walk does on
 * such a mount, how mount(2), mount_setattr(2) and fsmount(2) set and clear
 * it, who may, and where it shows.  Every test runs in a private mount
 * namespace over two tmpfs mounts, a and b, under BASE:
 *
 *   a/f  a/d/x  a/lf -> f  a/ld -> d  a/labs -> BASE/a/f  a/lb -> ../b/f
 *   b/f  b/d/x  b/lf -> f  b/la -> ../a/f  b/lal -> ../a/lf
 *
 * The answers are stock 6.1's: the group passes there and on ours, and
 * fails on the baseline, which ignores MS_NOSYMFOLLOW and refuses
 * MOUNT_ATTR_NOSYMFOLLOW.
 */
#define _GNU_SOURCE
#include <sys/wait.h>

#include "nsf_util.h"
#include "kselftest_harness.h"

#define BASE	"/tmp/nsf"
#define A	BASE "/a"
#define B	BASE "/b"
#define UID	1000

static int mkfile(const char *path, const char *data)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);

	if (fd < 0)
		return -1;
	if (write(fd, data, strlen(data)) != (ssize_t)strlen(data)) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/* The two-byte content of the file path leads to, or the errno as "eN". */
static const char *content(const char *path, char *buf)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0) {
		sprintf(buf, "e%d", errno);
		return buf;
	}
	n = read(fd, buf, 2);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static int populate(const char *dir, const char *tag, const char *other)
{
	char p[256], t[256];

	snprintf(p, sizeof(p), "%s/f", dir);
	if (mkfile(p, tag))
		return -1;
	snprintf(p, sizeof(p), "%s/d", dir);
	if (mkdir(p, 0755))
		return -1;
	snprintf(p, sizeof(p), "%s/d/x", dir);
	if (mkfile(p, "x"))
		return -1;
	snprintf(p, sizeof(p), "%s/lf", dir);
	if (symlink("f", p))
		return -1;
	snprintf(p, sizeof(p), "%s/ld", dir);
	if (symlink("d", p))
		return -1;
	snprintf(p, sizeof(p), "%s/labs", dir);
	snprintf(t, sizeof(t), "%s/f", dir);
	if (symlink(t, p))
		return -1;
	snprintf(p, sizeof(p), "%s/l%s", dir, other);
	snprintf(t, sizeof(t), "../%s/f", other);
	if (symlink(t, p))
		return -1;
	snprintf(p, sizeof(p), "%s/l%sl", dir, other);
	snprintf(t, sizeof(t), "../%s/lf", other);
	return symlink(t, p);
}

static int make_tree(void)
{
	mkdir(BASE, 0755);
	if (mount("nsf", BASE, "tmpfs", 0, NULL))
		return -1;
	if (mkdir(A, 0755) || mkdir(B, 0755) || mount("nsf-a", A, "tmpfs", 0, NULL) ||
	    mount("nsf-b", B, "tmpfs", 0, NULL))
		return -1;
	return populate(A, "A", "b") || populate(B, "B", "a") ? -1 : 0;
}

FIXTURE(nsf) {
	char buf[64];
};

FIXTURE_SETUP(nsf)
{
	ASSERT_EQ(enter_mntns(), 0);
	ASSERT_EQ(make_tree(), 0) TH_LOG("tree: %s", strerror(errno));
}

FIXTURE_TEARDOWN(nsf)
{
}

/* Every followed link held by a nosymfollow A is refused; the rest works. */
static void check_a_refuses(struct __test_metadata *_metadata, char *buf)
{
	struct stat st;
	char lnk[64];
	ssize_t n;
	int fd;

	EXPECT_STREQ(content(A "/lf", buf), "e40");		/* ELOOP */
	EXPECT_STREQ(content(A "/labs", buf), "e40");
	EXPECT_STREQ(content(A "/lb", buf), "e40");		/* target on b */
	EXPECT_STREQ(content(A "/ld/x", buf), "e40");		/* in the middle */
	EXPECT_EQ(stat_err(A "/lf"), ELOOP);
	EXPECT_EQ(stat_err(A "/ld"), ELOOP);
	EXPECT_EQ(chdir(A "/ld"), -1);
	EXPECT_EQ(errno, ELOOP);
	EXPECT_EQ(open_err(A "/ld", O_RDONLY | O_DIRECTORY), ELOOP);
	/* what does not follow the link */
	EXPECT_EQ(lstat_err(A "/lf"), 0);
	n = readlink(A "/lf", lnk, sizeof(lnk));
	ASSERT_EQ(n, 1);
	EXPECT_EQ(lnk[0], 'f');
	fd = open(A "/lf", O_PATH | O_NOFOLLOW);
	EXPECT_GE(fd, 0);
	if (fd >= 0) {
		EXPECT_EQ(fstatat(fd, "", &st, AT_EMPTY_PATH), 0);
		EXPECT_TRUE(S_ISLNK(st.st_mode));
		close(fd);
	}
	EXPECT_EQ(fstatat(AT_FDCWD, A "/lf", &st, AT_SYMLINK_NOFOLLOW), 0);
	EXPECT_STREQ(content(A "/f", buf), "A");
	EXPECT_STREQ(content(A "/d/x", buf), "x");
	/* links can still be made, renamed and removed there */
	EXPECT_EQ(symlink("f", A "/new"), 0);
	EXPECT_STREQ(content(A "/new", buf), "e40");
	EXPECT_EQ(rename(A "/new", A "/new2"), 0);
	EXPECT_EQ(unlink(A "/new2"), 0);
	/* b is another mount: its links are followed, even into a */
	EXPECT_STREQ(content(B "/lf", buf), "B");
	EXPECT_STREQ(content(B "/la", buf), "A");
	EXPECT_STREQ(content(B "/ld/x", buf), "x");
	/* ... but a link reached through b that lies on a is a's */
	EXPECT_STREQ(content(B "/lal", buf), "e40");
	/* shown on a only */
	EXPECT_TRUE(shown_nosymfollow(A));
	EXPECT_FALSE(shown_nosymfollow(B));
	EXPECT_FALSE(shown_nosymfollow(BASE));
	EXPECT_EQ(statfs_flags(A) & ST_NOSYMFOLLOW, ST_NOSYMFOLLOW);
	EXPECT_EQ(statfs_flags(B) & ST_NOSYMFOLLOW, 0);
}

static void check_a_follows(struct __test_metadata *_metadata, char *buf)
{
	EXPECT_STREQ(content(A "/lf", buf), "A");
	EXPECT_STREQ(content(A "/labs", buf), "A");
	EXPECT_STREQ(content(A "/lb", buf), "B");
	EXPECT_STREQ(content(A "/ld/x", buf), "x");
	EXPECT_STREQ(content(B "/lal", buf), "A");
	EXPECT_EQ(stat_err(A "/lf"), 0);
	EXPECT_FALSE(shown_nosymfollow(A));
	EXPECT_EQ(statfs_flags(A) & ST_NOSYMFOLLOW, 0);
}

TEST_F(nsf, default_follows)
{
	check_a_follows(_metadata, self->buf);
	EXPECT_STREQ(content(B "/la", self->buf), "A");
}

TEST_F(nsf, remount_sets)
{
	ASSERT_EQ(mount(NULL, A, NULL, MS_REMOUNT | MS_NOSYMFOLLOW, NULL), 0);
	check_a_refuses(_metadata, self->buf);
}

TEST_F(nsf, remount_without_the_bit_clears)
{
	ASSERT_EQ(mount(NULL, A, NULL, MS_REMOUNT | MS_NOSYMFOLLOW, NULL), 0);
	ASSERT_TRUE(shown_nosymfollow(A));
	ASSERT_EQ(mount(NULL, A, NULL, MS_REMOUNT, NULL), 0);
	check_a_follows(_metadata, self->buf);
	/* a remount for another flag clears it as well */
	ASSERT_EQ(mount(NULL, A, NULL, MS_REMOUNT | MS_NOSYMFOLLOW, NULL), 0);
	ASSERT_EQ(mount(NULL, A, NULL, MS_REMOUNT | MS_BIND | MS_NOEXEC, NULL), 0);
	EXPECT_FALSE(shown_nosymfollow(A));
	EXPECT_STREQ(content(A "/lf", self->buf), "A");
}

TEST_F(nsf, with_other_flags)
{
	char opts[1024];

	ASSERT_EQ(mount(NULL, A, NULL, MS_REMOUNT | MS_BIND | MS_NOSYMFOLLOW | MS_NODEV |
			MS_NOEXEC | MS_NOSUID, NULL), 0);
	mount_opts(A, opts, sizeof(opts));
	EXPECT_NE(strstr(opts, "nosuid"), NULL) TH_LOG("%s", opts);
	EXPECT_NE(strstr(opts, "nodev"), NULL) TH_LOG("%s", opts);
	EXPECT_NE(strstr(opts, "noexec"), NULL) TH_LOG("%s", opts);
	EXPECT_EQ(statfs_flags(A) & (ST_NOSYMFOLLOW | ST_NOEXEC | ST_NODEV | ST_NOSUID),
		  ST_NOSYMFOLLOW | ST_NOEXEC | ST_NODEV | ST_NOSUID);
	check_a_refuses(_metadata, self->buf);
}

TEST_F(nsf, bind_remount_is_per_mount)
{
	ASSERT_EQ(mkdir(BASE "/c", 0755), 0);
	ASSERT_EQ(mount(A, BASE "/c", NULL, MS_BIND, NULL), 0);
	ASSERT_EQ(mount(NULL, BASE "/c", NULL, MS_REMOUNT | MS_BIND | MS_NOSYMFOLLOW, NULL), 0);
	EXPECT_TRUE(shown_nosymfollow(BASE "/c"));
	EXPECT_FALSE(shown_nosymfollow(A));
	EXPECT_STREQ(content(BASE "/c/lf", self->buf), "e40");
	EXPECT_STREQ(content(BASE "/c/ld/x", self->buf), "e40");
	EXPECT_STREQ(content(A "/lf", self->buf), "A");
	EXPECT_STREQ(content(A "/ld/x", self->buf), "x");
	/* labs on c points into a: refused (the link is on c) */
	EXPECT_STREQ(content(BASE "/c/labs", self->buf), "e40");
	EXPECT_EQ(statfs_flags(BASE "/c") & ST_NOSYMFOLLOW, ST_NOSYMFOLLOW);
	EXPECT_EQ(statfs_flags(A) & ST_NOSYMFOLLOW, 0);
	/* a bind of the nosymfollow mount inherits the flag */
	ASSERT_EQ(mkdir(BASE "/e", 0755), 0);
	ASSERT_EQ(mount(BASE "/c", BASE "/e", NULL, MS_BIND, NULL), 0);
	EXPECT_TRUE(shown_nosymfollow(BASE "/e"));
	EXPECT_STREQ(content(BASE "/e/lf", self->buf), "e40");
}

TEST_F(nsf, new_mount_with_the_flag)
{
	ASSERT_EQ(mkdir(BASE "/n", 0755), 0);
	ASSERT_EQ(mount("nsf-n", BASE "/n", "tmpfs", MS_NOSYMFOLLOW, NULL), 0);
	EXPECT_TRUE(shown_nosymfollow(BASE "/n"));
	EXPECT_EQ(statfs_flags(BASE "/n") & ST_NOSYMFOLLOW, ST_NOSYMFOLLOW);
	ASSERT_EQ(mkfile(BASE "/n/f", "N"), 0);
	ASSERT_EQ(symlink("f", BASE "/n/lf"), 0);
	EXPECT_STREQ(content(BASE "/n/lf", self->buf), "e40");
	EXPECT_STREQ(content(BASE "/n/f", self->buf), "N");
}

TEST_F(nsf, relative_walks_and_mount_targets)
{
	ASSERT_EQ(mount(NULL, A, NULL, MS_REMOUNT | MS_NOSYMFOLLOW, NULL), 0);
	ASSERT_EQ(chdir(A), 0);
	EXPECT_STREQ(content("lf", self->buf), "e40");
	EXPECT_STREQ(content("ld/x", self->buf), "e40");
	EXPECT_STREQ(content("d/x", self->buf), "x");
	/* mount(2)'s own target is resolved the same way */
	EXPECT_EQ(mount("nsf-t", A "/ld", "tmpfs", 0, NULL), -1);
	EXPECT_EQ(errno, ELOOP);
	EXPECT_EQ(mount("nsf-t", A "/d", "tmpfs", 0, NULL), 0);
	/* a link on b that leads through a's ld */
	ASSERT_EQ(symlink("../a/ld/x", B "/lx"), 0);
	EXPECT_STREQ(content(B "/lx", self->buf), "e40");
}

TEST_F(nsf, setattr_set_and_clear)
{
	ASSERT_EQ(sys_mount_setattr(AT_FDCWD, A, 0, MOUNT_ATTR_NOSYMFOLLOW, 0), 0)
		TH_LOG("mount_setattr: %s", strerror(errno));
	check_a_refuses(_metadata, self->buf);
	/* setting it again changes nothing */
	ASSERT_EQ(sys_mount_setattr(AT_FDCWD, A, 0, MOUNT_ATTR_NOSYMFOLLOW, 0), 0);
	EXPECT_TRUE(shown_nosymfollow(A));
	ASSERT_EQ(sys_mount_setattr(AT_FDCWD, A, 0, 0, MOUNT_ATTR_NOSYMFOLLOW), 0);
	check_a_follows(_metadata, self->buf);
	/* clearing it when it is not set succeeds too */
	ASSERT_EQ(sys_mount_setattr(AT_FDCWD, A, 0, 0, MOUNT_ATTR_NOSYMFOLLOW), 0);
	/* in both attr_set and attr_clr: cleared, then set */
	ASSERT_EQ(sys_mount_setattr(AT_FDCWD, A, 0, MOUNT_ATTR_NOSYMFOLLOW,
				    MOUNT_ATTR_NOSYMFOLLOW), 0);
	EXPECT_TRUE(shown_nosymfollow(A));
	EXPECT_STREQ(content(A "/lf", self->buf), "e40");
	ASSERT_EQ(sys_mount_setattr(AT_FDCWD, A, 0, 0, MOUNT_ATTR_NOSYMFOLLOW), 0);
	/* the other flags are left alone */
	ASSERT_EQ(sys_mount_setattr(AT_FDCWD, A, 0, MOUNT_ATTR_NOEXEC, 0), 0);
	ASSERT_EQ(sys_mount_setattr(AT_FDCWD, A, 0, MOUNT_ATTR_NOSYMFOLLOW, 0), 0);
	EXPECT_EQ(statfs_flags(A) & (ST_NOEXEC | ST_NOSYMFOLLOW), ST_NOEXEC | ST_NOSYMFOLLOW);
	ASSERT_EQ(sys_mount_setattr(AT_FDCWD, A, 0, 0, MOUNT_ATTR_NOEXEC), 0);
	EXPECT_EQ(statfs_flags(A) & (ST_NOEXEC | ST_NOSYMFOLLOW), ST_NOSYMFOLLOW);
}

TEST_F(nsf, setattr_recursive)
{
	ASSERT_EQ(mkdir(A "/d/sub", 0755), 0);
	ASSERT_EQ(mount("nsf-s", A "/d/sub", "tmpfs", 0, NULL), 0);
	ASSERT_EQ(mkfile(A "/d/sub/f", "S"), 0);
	ASSERT_EQ(symlink("f", A "/d/sub/lf"), 0);

	/* without AT_RECURSIVE: BASE alone */
	ASSERT_EQ(sys_mount_setattr(AT_FDCWD, BASE, 0, MOUNT_ATTR_NOSYMFOLLOW, 0), 0);
	EXPECT_TRUE(shown_nosymfollow(BASE));
	EXPECT_FALSE(shown_nosymfollow(A));
	EXPECT_FALSE(shown_nosymfollow(A "/d/sub"));
	EXPECT_STREQ(content(A "/lf", self->buf), "A");

	/* with it: the whole tree */
	ASSERT_EQ(sys_mount_setattr(AT_FDCWD, BASE, AT_RECURSIVE, MOUNT_ATTR_NOSYMFOLLOW, 0), 0);
	EXPECT_TRUE(shown_nosymfollow(A));
	EXPECT_TRUE(shown_nosymfollow(B));
	EXPECT_TRUE(shown_nosymfollow(A "/d/sub"));
	EXPECT_STREQ(content(A "/lf", self->buf), "e40");
	EXPECT_STREQ(content(B "/lf", self->buf), "e40");
	EXPECT_STREQ(content(A "/d/sub/lf", self->buf), "e40");

	/* cleared below a only */
	ASSERT_EQ(sys_mount_setattr(AT_FDCWD, A, AT_RECURSIVE, 0, MOUNT_ATTR_NOSYMFOLLOW), 0);
	EXPECT_TRUE(shown_nosymfollow(BASE));
	EXPECT_TRUE(shown_nosymfollow(B));
	EXPECT_FALSE(shown_nosymfollow(A));
	EXPECT_FALSE(shown_nosymfollow(A "/d/sub"));
	EXPECT_STREQ(content(A "/d/sub/lf", self->buf), "S");
	EXPECT_STREQ(content(B "/lf", self->buf), "e40");
}

TEST_F(nsf, fsmount_with_the_flag)
{
	int fs, mnt;

	fs = sys_fsopen("tmpfs", 0);
	ASSERT_GE(fs, 0);
	ASSERT_EQ(sys_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0), 0);
	mnt = sys_fsmount(fs, 0, MOUNT_ATTR_NOSYMFOLLOW);
	ASSERT_GE(mnt, 0) TH_LOG("fsmount: %s", strerror(errno));
	ASSERT_EQ(mkdir(BASE "/n", 0755), 0);
	ASSERT_EQ(sys_move_mount(mnt, "", AT_FDCWD, BASE "/n", MOVE_MOUNT_F_EMPTY_PATH), 0);
	EXPECT_TRUE(shown_nosymfollow(BASE "/n"));
	ASSERT_EQ(mkfile(BASE "/n/f", "N"), 0);
	ASSERT_EQ(symlink("f", BASE "/n/lf"), 0);
	EXPECT_STREQ(content(BASE "/n/lf", self->buf), "e40");
	/* a bind mount of it carries the flag */
	ASSERT_EQ(mkdir(BASE "/e", 0755), 0);
	ASSERT_EQ(mount(BASE "/n", BASE "/e", NULL, MS_BIND, NULL), 0);
	EXPECT_TRUE(shown_nosymfollow(BASE "/e"));
	EXPECT_STREQ(content(BASE "/e/lf", self->buf), "e40");
	close(mnt);
	close(fs);
}

TEST_F(nsf, openat2_resolve_flags)
{
	int fd;

	/* RESOLVE_NO_SYMLINKS refuses on any mount, as the flag does on its own */
	fd = sys_openat2(AT_FDCWD, A "/lf", O_RDONLY, RESOLVE_NO_SYMLINKS);
	EXPECT_EQ(fd, -1);
	EXPECT_EQ(errno, ELOOP);
	fd = sys_openat2(AT_FDCWD, A "/lf", O_RDONLY, 0);
	EXPECT_GE(fd, 0);
	if (fd >= 0)
		close(fd);
	ASSERT_EQ(mount(NULL, A, NULL, MS_REMOUNT | MS_NOSYMFOLLOW, NULL), 0);
	fd = sys_openat2(AT_FDCWD, A "/lf", O_RDONLY, 0);
	EXPECT_EQ(fd, -1);
	EXPECT_EQ(errno, ELOOP);
	fd = sys_openat2(AT_FDCWD, A "/lf", O_RDONLY, RESOLVE_NO_MAGICLINKS);
	EXPECT_EQ(fd, -1);
	EXPECT_EQ(errno, ELOOP);
	fd = sys_openat2(AT_FDCWD, A "/lf", O_PATH | O_NOFOLLOW, 0);
	EXPECT_GE(fd, 0);
	if (fd >= 0)
		close(fd);
	/* a beneath-walk from a's root: the link stays refused */
	fd = open(A, O_PATH | O_DIRECTORY);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(sys_openat2(fd, "lf", O_RDONLY, RESOLVE_BENEATH), -1);
	EXPECT_EQ(errno, ELOOP);
	close(fd);
}

TEST_F(nsf, proc_magic_links)
{
	char path[128];
	int fd;

	ASSERT_EQ(mkdir(BASE "/p", 0755), 0);
	ASSERT_EQ(mount("proc", BASE "/p", "proc", MS_NOSYMFOLLOW, NULL), 0);
	fd = open(A "/f", O_RDONLY);
	ASSERT_GE(fd, 0);
	snprintf(path, sizeof(path), BASE "/p/%d/fd/%d", getpid(), fd);
	EXPECT_STREQ(content(path, self->buf), "e40");
	EXPECT_EQ(lstat_err(path), 0);
	snprintf(path, sizeof(path), BASE "/p/%d/cwd", getpid());
	EXPECT_EQ(stat_err(path), ELOOP);
	/* "self" is a link on that procfs too */
	EXPECT_EQ(stat_err(BASE "/p/self/fd"), ELOOP);
	EXPECT_GT(readlink(BASE "/p/self", self->buf, sizeof(self->buf)), 0);
	/* the ordinary /proc is not affected */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	EXPECT_STREQ(content(path, self->buf), "A");
	close(fd);
}

TEST_F(nsf, protected_symlinks_answer_first)
{
	char old[8] = "";
	int fd;

	fd = open("/proc/sys/fs/protected_symlinks", O_RDONLY);
	ASSERT_GE(fd, 0);
	ASSERT_GT(read(fd, old, sizeof(old) - 1), 0);
	close(fd);
	ASSERT_EQ(write_str("/proc/sys/fs/protected_symlinks", "1"), 0);
	/* a sticky, world-writable root and links owned by someone else */
	ASSERT_EQ(chmod(A, 01777), 0);
	ASSERT_EQ(symlink("f", A "/lp"), 0);
	ASSERT_EQ(lchown(A "/lp", UID + 1, UID + 1), 0);
	ASSERT_EQ(symlink("d", A "/lpd"), 0);
	ASSERT_EQ(lchown(A "/lpd", UID + 1, UID + 1), 0);
	EXPECT_STREQ(content(A "/lp", self->buf), "e13");	/* EACCES */
	ASSERT_EQ(mount(NULL, A, NULL, MS_REMOUNT | MS_NOSYMFOLLOW, NULL), 0);
	/* trailing: fs.protected_symlinks answers first */
	EXPECT_STREQ(content(A "/lp", self->buf), "e13");
	/* in the middle of a path it does not apply: the flag does */
	EXPECT_STREQ(content(A "/lpd/x", self->buf), "e40");
	write_str("/proc/sys/fs/protected_symlinks", old);
}

/* In a child as uid 1000; returns the child's exit status (0: all expectations held). */
static int run_as_user(int (*fn)(void))
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (!pid)
		_exit(fn());
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

#define CHILD_EXPECT(cond, code) do { if (!(cond)) return (code); } while (0)

static int unprivileged_refused(void)
{
	CHILD_EXPECT(!setgroups(0, NULL) && !setresgid(UID, UID, UID) &&
		     !setresuid(UID, UID, UID), 10);
	CHILD_EXPECT(mount(NULL, A, NULL, MS_REMOUNT | MS_BIND | MS_NOSYMFOLLOW, NULL) == -1 &&
		     errno == EPERM, 11);
	CHILD_EXPECT(sys_mount_setattr(AT_FDCWD, A, 0, MOUNT_ATTR_NOSYMFOLLOW, 0) == -1 &&
		     errno == EPERM, 12);
	return 0;
}

static int userns_own_mount(void)
{
	char buf[8];

	CHILD_EXPECT(enter_userns(UID) == 0, 20);
	CHILD_EXPECT(mount("nsf-u", A, "tmpfs", 0, NULL) == 0, 21);
	CHILD_EXPECT(mkfile(A "/f", "U") == 0 && symlink("f", A "/lf") == 0, 22);
	CHILD_EXPECT(!strcmp(content(A "/lf", buf), "U"), 23);
	CHILD_EXPECT(mount(NULL, A, NULL, MS_REMOUNT | MS_NOSYMFOLLOW, NULL) == 0, 24);
	CHILD_EXPECT(!strcmp(content(A "/lf", buf), "e40"), 25);
	CHILD_EXPECT(shown_nosymfollow(A), 26);
	CHILD_EXPECT(sys_mount_setattr(AT_FDCWD, A, 0, 0, MOUNT_ATTR_NOSYMFOLLOW) == 0, 27);
	CHILD_EXPECT(!strcmp(content(A "/lf", buf), "U"), 28);
	CHILD_EXPECT(sys_mount_setattr(AT_FDCWD, A, 0, MOUNT_ATTR_NOSYMFOLLOW, 0) == 0, 29);
	CHILD_EXPECT(statfs_flags(A) & ST_NOSYMFOLLOW, 30);
	return 0;
}

/* The flag is not locked: a user namespace may clear it on its copy of a mount. */
static int userns_inherited_mount(void)
{
	char buf[8];

	CHILD_EXPECT(enter_userns(UID) == 0, 40);
	CHILD_EXPECT(shown_nosymfollow(A), 41);
	CHILD_EXPECT(!strcmp(content(A "/lf", buf), "e40"), 42);
	CHILD_EXPECT(mount(NULL, A, NULL, MS_REMOUNT | MS_BIND, NULL) == 0, 43);
	CHILD_EXPECT(!strcmp(content(A "/lf", buf), "A"), 44);
	CHILD_EXPECT(mount(NULL, A, NULL, MS_REMOUNT | MS_BIND | MS_NOSYMFOLLOW, NULL) == 0, 45);
	CHILD_EXPECT(!strcmp(content(A "/lf", buf), "e40"), 46);
	CHILD_EXPECT(sys_mount_setattr(AT_FDCWD, A, 0, 0, MOUNT_ATTR_NOSYMFOLLOW) == 0, 47);
	CHILD_EXPECT(!shown_nosymfollow(A), 48);
	/* nosuid is locked, by contrast */
	CHILD_EXPECT(sys_mount_setattr(AT_FDCWD, B, 0, 0, MOUNT_ATTR_NOSUID) == -1 &&
		     errno == EPERM, 49);
	return 0;
}

TEST_F(nsf, unprivileged_user_refused)
{
	EXPECT_EQ(run_as_user(unprivileged_refused), 0);
	EXPECT_FALSE(shown_nosymfollow(A));
}

TEST_F(nsf, userns_root_on_its_own_mount)
{
	ASSERT_EQ(chmod(BASE, 0755), 0);
	EXPECT_EQ(run_as_user(userns_own_mount), 0);
}

TEST_F(nsf, userns_root_on_an_inherited_mount)
{
	ASSERT_EQ(mount(NULL, A, NULL, MS_REMOUNT | MS_BIND | MS_NOSYMFOLLOW, NULL), 0);
	ASSERT_EQ(mount(NULL, B, NULL, MS_REMOUNT | MS_BIND | MS_NOSUID, NULL), 0);
	EXPECT_EQ(run_as_user(userns_inherited_mount), 0);
	/* the parent namespace's mount keeps its flag */
	EXPECT_TRUE(shown_nosymfollow(A));
	EXPECT_STREQ(content(A "/lf", self->buf), "e40");
}

TEST_HARNESS_MAIN

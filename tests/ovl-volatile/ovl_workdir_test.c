// SPDX-License-Identifier: GPL-2.0
/*
 * overlayfs work directories in hostile states, and where the volatile marker is made.
 *
 * Before it is used, <workdir>/work is cleaned up at every mount with an upper layer; on the
 * way, a non-empty work/incompat refuses the mount (EINVAL) for every entry whose name does
 * not start with a dot.  Whatever stands in the place of work or work/incompat (a symlink, a
 * dangling one, a regular file of any mode, a fifo) is removed by that clean-up and the mount
 * goes on; dot entries in work/incompat are removed too and do not refuse the mount.  Every
 * state is tried by root and by uid 1000 inside its own user and mount namespace (overlayfs is
 * FS_USERNS_MOUNT), plain and "volatile": no kernel error, and the results of Debian's 6.1.
 *
 * The marker work/incompat/volatile/dirty is made with no permission bits (as 6.1 makes it),
 * and only once the upper layer passed every check: a 9p upper (a remote file system, host
 * directory attached by the group's host-setup, mount tag "ovl9p") lacks RENAME_WHITEOUT, so
 * a volatile mount on it is refused with EINVAL and must leave no marker behind.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ovl_util.h"

#define BASE		"/tmp/ovlw"
#define UID		1000
#define P9_TAG		"ovl9p"
#define P9_MNT		"/mnt/ovl9p"
#define DIR_LEN		96	/* a layer directory; PATH_LEN for paths below it */

enum who { ROOT, USERNS };

/* What stands in work/ before the mount. */
enum state {
	S_NONE,			/* no work/ at all */
	S_WORK_SYMLINK,		/* work -> existing directory */
	S_WORK_DANGLING,	/* work -> nothing */
	S_WORK_FILE644,
	S_WORK_FILE755,
	S_WORK_FIFO,
	S_INCOMPAT_FILE,	/* work/incompat is a regular file */
	S_INCOMPAT_SYMLINK,	/* work/incompat -> a directory with an entry */
	S_INCOMPAT_EMPTY,	/* work/incompat, an empty directory */
	S_INCOMPAT_DOTFILE,	/* work/incompat/.keep */
	S_INCOMPAT_DOTDIR,	/* work/incompat/.d/, empty */
	S_INCOMPAT_FEATURE_FILE,	/* work/incompat/volatile as a regular file */
	S_INCOMPAT_UNKNOWN,	/* work/incompat/other/ */
	S_INCOMPAT_DIRTY,	/* work/incompat/volatile/dirty: a volatile mount's record */
	S_INCOMPAT_DOT_AND_FEATURE,	/* work/incompat/.keep and work/incompat/volatile/ */
};

/* The result of one mount: errno (0: mounted) and the work dir afterwards. */
struct outcome {
	int err;
	bool work_dir;		/* work/ is a directory after the mount */
	bool incompat;		/* work/incompat still exists */
	int marker_mode;	/* permission bits of incompat, volatile and dirty ORed, -1: none */
};

static int make_state(const char *w, enum state s)
{
	char p[PATH_LEN], q[DIR_LEN + 16];
	int fd;

	snprintf(p, sizeof(p), "%s/work", w);
	snprintf(q, sizeof(q), "%s/work/incompat", w);
	switch (s) {
	case S_NONE:
		return 0;
	case S_WORK_SYMLINK:
		return symlink("..", p) ? -errno : 0;
	case S_WORK_DANGLING:
		return symlink("x", p) ? -errno : 0;
	case S_WORK_FILE644:
	case S_WORK_FILE755:
		fd = open(p, O_CREAT | O_WRONLY, s == S_WORK_FILE644 ? 0644 : 0755);
		if (fd < 0)
			return -errno;
		return close(fd);
	case S_WORK_FIFO:
		return mkfifo(p, 0644) ? -errno : 0;
	default:
		break;
	}
	if (mkdir(p, 0755))
		return -errno;
	switch (s) {
	case S_INCOMPAT_FILE:
		fd = open(q, O_CREAT | O_WRONLY, 0644);
		return fd < 0 ? -errno : close(fd);
	case S_INCOMPAT_SYMLINK:
		snprintf(p, sizeof(p), "%s/elsewhere/volatile", w);
		if (mkdir_p(p))
			return -errno;
		return symlink("../elsewhere", q) ? -errno : 0;
	default:
		break;
	}
	if (mkdir(q, 0755))
		return -errno;
	switch (s) {
	case S_INCOMPAT_EMPTY:
		return 0;
	case S_INCOMPAT_DOTFILE:
		snprintf(p, sizeof(p), "%s/.keep", q);
		fd = open(p, O_CREAT | O_WRONLY, 0644);
		return fd < 0 ? -errno : close(fd);
	case S_INCOMPAT_DOTDIR:
		snprintf(p, sizeof(p), "%s/.d", q);
		return mkdir(p, 0755) ? -errno : 0;
	case S_INCOMPAT_FEATURE_FILE:
		snprintf(p, sizeof(p), "%s/volatile", q);
		fd = open(p, O_CREAT | O_WRONLY, 0644);
		return fd < 0 ? -errno : close(fd);
	case S_INCOMPAT_UNKNOWN:
		snprintf(p, sizeof(p), "%s/other", q);
		return mkdir(p, 0755) ? -errno : 0;
	case S_INCOMPAT_DIRTY:
		snprintf(p, sizeof(p), "%s/volatile/dirty", q);
		break;
	case S_INCOMPAT_DOT_AND_FEATURE:
		snprintf(p, sizeof(p), "%s/.keep", q);
		fd = open(p, O_CREAT | O_WRONLY, 0644);
		if (fd < 0 || close(fd))
			return -errno;
		snprintf(p, sizeof(p), "%s/volatile/dirty", q);
		break;
	default:
		return -EINVAL;
	}
	if (mkdir_p(p))
		return -errno;
	return 0;
}

static int mode_bits(const char *path)
{
	struct stat st;

	return lstat(path, &st) ? -1 : (int)(st.st_mode & 07777);
}

/*
 * In a fresh tmpfs at base: lower, upper, work (in state s) and a mount point; mount the
 * overlay with the extra options, look at the work dir, unmount.  0 or -errno of the setup.
 */
static int try_mount(const char *base, enum state s, const char *extra, struct outcome *o)
{
	char l[DIR_LEN], u[DIR_LEN], w[DIR_LEN], m[DIR_LEN], p[PATH_LEN], opts[4 * PATH_LEN];
	static const char *const chain[] = { "", "/volatile", "/volatile/dirty" };
	struct stat st;
	int i, ret;

	if (mkdir_p(base) || mount("tmpfs", base, "tmpfs", 0, "size=8m,mode=0755"))
		return -errno;
	snprintf(l, sizeof(l), "%s/l", base);
	snprintf(u, sizeof(u), "%s/u", base);
	snprintf(w, sizeof(w), "%s/w", base);
	snprintf(m, sizeof(m), "%s/m", base);
	if (mkdir(l, 0755) || mkdir(u, 0755) || mkdir(w, 0755) || mkdir(m, 0755))
		return -errno;
	ret = make_state(w, s);
	if (ret)
		return ret;
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s%s%s", l, u, w,
		 *extra ? "," : "", extra);
	o->err = mount("overlay", m, "overlay", 0, opts) ? errno : 0;
	snprintf(p, sizeof(p), "%s/work", w);
	o->work_dir = !lstat(p, &st) && S_ISDIR(st.st_mode);
	snprintf(p, sizeof(p), "%s/work/incompat", w);
	o->incompat = !lstat(p, &st);
	o->marker_mode = -1;
	for (i = 0; i < 3 && o->incompat; i++) {
		snprintf(p, sizeof(p), "%s/work/incompat%s", w, chain[i]);
		ret = mode_bits(p);
		if (ret < 0) {
			o->marker_mode = -1;
			break;
		}
		o->marker_mode = (o->marker_mode < 0 ? 0 : o->marker_mode) | ret;
	}
	if (!o->err && umount(m))
		return -errno;
	return umount2(base, MNT_DETACH) ? -errno : 0;
}

/* try_mount() as root here, or as uid 1000 in a user namespace in a child. */
static int run(enum who who, enum state s, const char *extra, struct outcome *o)
{
	struct outcome *shared;
	int status, ret;
	pid_t pid;

	if (who == ROOT)
		return try_mount(BASE, s, extra, o);
	/* /tmp/ovlw must exist for the child (which cannot create it in root's /tmp) */
	if (mkdir_p(BASE))
		return -errno;
	shared = mmap(NULL, sizeof(*shared) + sizeof(int), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		int *res = (int *)(shared + 1);

		*res = enter_userns(UID);
		if (!*res)
			*res = try_mount(BASE, s, extra, shared);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -ECHILD;
	*o = *shared;
	ret = *(int *)(shared + 1);
	munmap(shared, sizeof(*shared) + sizeof(int));
	return ret;
}

FIXTURE(state) {
};

FIXTURE_VARIANT(state) {
	enum who who;
	enum state state;
	int err;		/* 6.1's mount(2) errno: 0 or EINVAL */
	bool incompat_left;	/* work/incompat still there after a plain mount */
};

#define STATE(name, st, e, left)						\
	FIXTURE_VARIANT_ADD(state, root_##name) {				\
		.who = ROOT, .state = st, .err = e, .incompat_left = left,	\
	};									\
	FIXTURE_VARIANT_ADD(state, userns_##name) {				\
		.who = USERNS, .state = st, .err = e, .incompat_left = left,	\
	}

STATE(no_work, S_NONE, 0, false);
STATE(work_symlink, S_WORK_SYMLINK, 0, false);
STATE(work_dangling_symlink, S_WORK_DANGLING, 0, false);
STATE(work_file_0644, S_WORK_FILE644, 0, false);
STATE(work_file_0755, S_WORK_FILE755, 0, false);
STATE(work_fifo, S_WORK_FIFO, 0, false);
STATE(incompat_file, S_INCOMPAT_FILE, 0, false);
STATE(incompat_symlink, S_INCOMPAT_SYMLINK, 0, false);
STATE(incompat_empty, S_INCOMPAT_EMPTY, 0, false);
STATE(incompat_dot_file, S_INCOMPAT_DOTFILE, 0, false);
STATE(incompat_dot_dir, S_INCOMPAT_DOTDIR, 0, false);
STATE(incompat_feature_file, S_INCOMPAT_FEATURE_FILE, EINVAL, true);
STATE(incompat_unknown_feature, S_INCOMPAT_UNKNOWN, EINVAL, true);
STATE(incompat_dirty, S_INCOMPAT_DIRTY, EINVAL, true);
STATE(incompat_dot_and_feature, S_INCOMPAT_DOT_AND_FEATURE, EINVAL, true);

FIXTURE_SETUP(state)
{
	umount_all(BASE);
}

FIXTURE_TEARDOWN(state)
{
	umount_all(BASE);
}

/* A plain mount, then a volatile one, over the same state. */
TEST_F(state, plain_and_volatile)
{
	struct outcome o;
	int ret;

	ret = run(variant->who, variant->state, "", &o);
	ASSERT_EQ(0, ret) TH_LOG("setup: %s", strerror(-ret));
	EXPECT_EQ(variant->err, o.err) TH_LOG("plain mount: %s", strerror(o.err));
	EXPECT_TRUE(o.work_dir);
	EXPECT_EQ(variant->incompat_left, o.incompat);

	ret = run(variant->who, variant->state, "volatile", &o);
	ASSERT_EQ(0, ret) TH_LOG("setup: %s", strerror(-ret));
	EXPECT_EQ(variant->err, o.err) TH_LOG("volatile mount: %s", strerror(o.err));
	EXPECT_TRUE(o.work_dir);
	EXPECT_TRUE(o.incompat);
	/* a mounted volatile overlay made the whole record, without permission bits */
	if (!variant->err) {
		EXPECT_EQ(0, o.marker_mode);
	}
}

/* Upper and work on a remote file system (9p) that fails the checks: refused, no record. */
TEST(remote_upper_refused_without_marker)
{
	char w[DIR_LEN], m[DIR_LEN], p[PATH_LEN], opts[4 * PATH_LEN];
	int i;

	umount_all(P9_MNT);
	ASSERT_EQ(0, mkdir_p(P9_MNT));
	ASSERT_EQ(0, mount(P9_TAG, P9_MNT, "9p", 0, "trans=virtio,version=9p2000.L,cache=loose"))
		TH_LOG("no 9p share '%s' (the group's host-setup attaches it): %s", P9_TAG,
		       strerror(errno));
	ASSERT_EQ(0, rm_rf(P9_MNT "/t"));
	ASSERT_EQ(0, mkdir_p(P9_MNT "/t/u"));
	ASSERT_EQ(0, mkdir_p(P9_MNT "/t/w"));
	ASSERT_EQ(0, mkdir_p("/tmp/ovl9p/l"));
	ASSERT_EQ(0, mkdir_p("/tmp/ovl9p/m"));
	snprintf(w, sizeof(w), "%s/t/w", P9_MNT);
	snprintf(m, sizeof(m), "/tmp/ovl9p/m");
	snprintf(opts, sizeof(opts), "lowerdir=/tmp/ovl9p/l,upperdir=%s/t/u,workdir=%s,volatile",
		 P9_MNT, w);
	for (i = 0; i < 2; i++) {
		/* refused both times: the first attempt left nothing that changes the answer */
		EXPECT_EQ(-1, mount("overlay", m, "overlay", 0, opts));
		EXPECT_EQ(EINVAL, errno);
		snprintf(p, sizeof(p), "%s/work/incompat", w);
		EXPECT_NE(0, access(p, F_OK)) TH_LOG("attempt %d left %s", i + 1, p);
	}
	umount(m);
	umount2(P9_MNT, MNT_DETACH);
}

TEST_HARNESS_MAIN

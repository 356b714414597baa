// SPDX-License-Identifier: GPL-2.0
/*
 * Seeded fuzzing of the nosymfollow mount flag: random mount trees with random
 * symlinks, the flag set and cleared at random through mount(2),
 * mount_setattr(2) and fsmount(2) (with other flags and bad ones mixed in),
 * then random path walks over them.  About a third of the cases run as root of
 * a user namespace owned by uid 1000.
 *
 * A case runs in a child of its own, in a fresh mount namespace, and prints
 * one line ("# obs <case> ..."): the errno of every mount call, the flags each
 * mount shows in mountinfo and statfs(2), and the result of every walk (errno,
 * or what was reached: file content, link text, directory).  The three-kernel
 * check compares those lines between stock 6.1 and ours for the same seed.
 *
 * Checked on every kernel, from the flag's definition: an open(2) that
 * follows a trailing symbolic link whose directory is on a mount with
 * ST_NOSYMFOLLOW (fstatfs(2) of that directory) fails with ELOOP.  A walk
 * that breaks it has " VIOLATION" after its result, and the run's last
 * result fails.
 *
 * Environment: KTEST_SEED (random if unset, always printed), KTEST_FUZZ_CASES
 * (default 1000), KTEST_FUZZ_SECONDS (a bound on the run time, default 420 s).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "../fuzz_rng.h"
#include "kselftest.h"
#include "../nosymfollow/nsf_util.h"

#define BASE	"/tmp/nsff"
#define UID	1000
#define OBS_LEN	16384
#define NMNT	4

#define ONE_OF(a) ((a)[pick(ARRAY_SIZE(a))])

static char *obs;
static size_t off;
static unsigned long *violations;	/* shared with the cases' children */

static void add(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fuzz_obs_vappend(obs, OBS_LEN, &off, fmt, ap);
	va_end(ap);
}

/* The mount points: m0 and m1 side by side, m2 inside m0, m3 a bind or tmpfs. */
static const char *const mnts[NMNT] = {
	BASE "/m0", BASE "/m1", BASE "/m0/d/m2", BASE "/m3",
};
static int nmnt;

/* Link targets: local, across mounts, absolute, dangling, loops, procfs. */
static const char *const targets[] = {
	"f", "d", "d/f", "l0", "l1", "../m1/f", "../m1/l0", "../m1/d", "../../m1/l1",
	BASE "/m0/f", BASE "/m1/l0", BASE "/m0/d/m2/l1", BASE "/m3/d", "nowhere", ".", "..",
	"/proc/self/cwd", "/proc/self/root/tmp", "m2/f", "d/m2/l0",
};

/* f, d (with its own entries, depth permitting) and links l0..l3 to random targets. */
static void populate(const char *dir, int depth)
{
	char p[512];
	int i, fd;

	snprintf(p, sizeof(p), "%s/f", dir);
	fd = open(p, O_CREAT | O_EXCL | O_WRONLY, 0644);
	if (fd >= 0) {
		if (write(fd, dir + strlen(BASE), strlen(dir + strlen(BASE))) < 0)
			;
		close(fd);
	}
	snprintf(p, sizeof(p), "%s/d", dir);
	if (!mkdir(p, 0755) && depth > 0)
		populate(p, depth - 1);
	for (i = 0; i < 4; i++) {
		if (!pick(4))
			continue;
		snprintf(p, sizeof(p), "%s/l%d", dir, i);
		if (symlink(ONE_OF(targets), p))
			;
	}
}

static const unsigned long ms_extra[] = { 0, 0, MS_NOEXEC, MS_NODEV, MS_NOSUID, MS_RDONLY,
					  MS_NOATIME };
static const uint64_t attrs[] = { MOUNT_ATTR_NOSYMFOLLOW, MOUNT_ATTR_NOSYMFOLLOW,
				  MOUNT_ATTR_NOEXEC, MOUNT_ATTR_RDONLY, MOUNT_ATTR_NODEV,
				  MOUNT_ATTR_NOSUID, 0x00400000, 0x8000, 0 };

static int merr(int rc)
{
	return rc ? errno : 0;
}

static void build_tree(void)
{
	int i, err;

	mkdir(BASE, 0755);
	err = merr(mount("nsff", BASE, "tmpfs", 0, NULL));
	add("base=%d", err);
	if (err)
		return;
	chmod(BASE, 0777);
	nmnt = 2 + pick(NMNT - 1);
	for (i = 0; i < nmnt; i++) {
		unsigned long fl = pick(3) ? 0 : MS_NOSYMFOLLOW;

		if (i == 2)
			mkdir(BASE "/m0/d", 0755);
		mkdir(mnts[i], 0755);
		if (i == 3 && pick(2)) {
			err = merr(mount(mnts[pick(3)], mnts[i], NULL, MS_BIND | (pick(2) ? MS_REC : 0),
					 NULL));
			add(" bind%d=%d", i, err);
			continue;
		}
		if (i == 2 && pick(2)) {
			/* a detached tmpfs through fsmount, attached with move_mount */
			int fs = sys_fsopen("tmpfs", 0), m = -1;
			uint64_t at = ONE_OF(attrs) | (pick(2) ? MOUNT_ATTR_NOSYMFOLLOW : 0);

			if (fs >= 0 && !sys_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0))
				m = sys_fsmount(fs, 0, at);
			add(" fsmount%d(%llx)=%d", i, (unsigned long long)at, m < 0 ? errno : 0);
			if (m >= 0) {
				add("/%d", merr(sys_move_mount(m, "", AT_FDCWD, mnts[i],
							       MOVE_MOUNT_F_EMPTY_PATH)));
				close(m);
			}
			if (fs >= 0)
				close(fs);
		} else {
			fl |= ONE_OF(ms_extra) & ~MS_RDONLY;
			add(" mount%d(%lx)=%d", i, fl, merr(mount("nsff-m", mnts[i], "tmpfs", fl,
								     NULL)));
		}
		/* writable for the populating; rdonly comes later, if at all */
		populate(mnts[i], 1);
	}
	/* the first mounts hold entries that the later ones covered */
	populate(mnts[0], 1);
}

static void change_flags(void)
{
	unsigned int i, n = pick(5);

	for (i = 0; i < n; i++) {
		const char *m = i % 4 == 3 ? BASE : mnts[pick(nmnt)];
		uint64_t set = 0, clr = 0;
		unsigned long fl;

		switch (pick(4)) {
		case 0:
		case 1:
			fl = MS_REMOUNT | (pick(2) ? MS_BIND : 0) |
			     (pick(2) ? MS_NOSYMFOLLOW : 0) | ONE_OF(ms_extra);
			add(" remount(%s,%lx)=%d", m + strlen(BASE), fl,
			    merr(mount(NULL, m, NULL, fl, NULL)));
			break;
		default:
			set = pick(2) ? ONE_OF(attrs) : 0;
			clr = pick(2) ? ONE_OF(attrs) : 0;
			fl = pick(2) ? AT_RECURSIVE : 0;
			add(" setattr(%s,%lx,%llx,%llx)=%d", m + strlen(BASE), fl,
			    (unsigned long long)set, (unsigned long long)clr,
			    merr(sys_mount_setattr(AT_FDCWD, m, fl, set, clr)));
			break;
		}
	}
}

static void show_flags(void)
{
	int i;

	add(" shown=");
	for (i = 0; i < nmnt; i++) {
		long f = statfs_flags(mnts[i]);

		add("%d%c%c", i, shown_nosymfollow(mnts[i]) ? 'N' : '-',
		    f < 0 ? 'E' : (f & ST_NOSYMFOLLOW) ? 'S' : '-');
	}
}

static const char *const comps[] = {
	"f", "d", "l0", "l1", "l2", "l3", "l0", "l1", "l2", "l3", "d", "m2", "..", ".", "x",
};

static void random_path(char *p, size_t len)
{
	unsigned int i, n = 1 + pick(4);
	size_t o;

	o = snprintf(p, len, "%s", pick(6) ? mnts[pick(nmnt)] : BASE);
	for (i = 0; i < n && o < len; i++)
		o += snprintf(p + o, len - o, "/%s", ONE_OF(comps));
}

static void reached(int fd)
{
	struct stat st;
	char buf[32];
	ssize_t n;

	if (fstat(fd, &st)) {
		add("?%d", errno);
		return;
	}
	if (S_ISREG(st.st_mode)) {
		n = pread(fd, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		add("'%s'", buf);
	} else {
		add("%c", S_ISDIR(st.st_mode) ? 'D' : S_ISLNK(st.st_mode) ? 'L' : 'O');
	}
}

/*
 * Whether following path @p must fail with ELOOP: its last component is a
 * symbolic link in a directory on a mount with the flag.
 */
static bool must_eloop(const char *p)
{
	const char *last = strrchr(p, '/');
	char dir[512];
	struct statfs sf;
	struct stat st;
	bool ret;
	int dfd;

	if (!last || last == p || (size_t)(last - p) >= sizeof(dir))
		return false;
	memcpy(dir, p, last - p);
	dir[last - p] = '\0';
	dfd = open(dir, O_PATH | O_DIRECTORY);
	if (dfd < 0)
		return false;
	ret = !fstatfs(dfd, &sf) && (sf.f_flags & ST_NOSYMFOLLOW) &&
	      !fstatat(dfd, last + 1, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode);
	close(dfd);
	return ret;
}

static void walks(void)
{
	static const int oflags[] = { O_RDONLY, O_RDONLY | O_NOFOLLOW, O_PATH | O_NOFOLLOW,
				      O_PATH, O_RDONLY | O_DIRECTORY };
	static const uint64_t resolves[] = { 0, RESOLVE_NO_SYMLINKS, RESOLVE_NO_MAGICLINKS,
					     RESOLVE_BENEATH, RESOLVE_IN_ROOT, RESOLVE_NO_XDEV };
	unsigned int i, n = 6 + pick(8);
	char p[512], buf[512];
	struct stat st;
	ssize_t len;
	int fd, op, dfd, of, err;

	for (i = 0; i < n; i++) {
		random_path(p, sizeof(p));
		op = pick(7);
		add(" w%d(%s)=", op, p + strlen(BASE));
		switch (op) {
		case 0:
		case 1:
			of = ONE_OF(oflags);
			fd = open(p, of);
			err = fd < 0 ? errno : 0;
			if (fd < 0) {
				add("e%d", err);
			} else {
				reached(fd);
				close(fd);
			}
			if (!(of & O_NOFOLLOW) && err != ELOOP && must_eloop(p)) {
				add(" VIOLATION");
				__atomic_add_fetch(violations, 1, __ATOMIC_RELAXED);
			}
			break;
		case 2:
			add("e%d", stat(p, &st) ? errno : 0);
			break;
		case 3:
			add("e%d", lstat(p, &st) ? errno : 0);
			break;
		case 4:
			len = readlink(p, buf, sizeof(buf) - 1);
			if (len < 0) {
				add("e%d", errno);
			} else {
				buf[len] = '\0';
				add("<%s>", buf);
			}
			break;
		case 5:
			dfd = pick(2) ? open(mnts[pick(nmnt)], O_PATH | O_DIRECTORY) : AT_FDCWD;
			fd = sys_openat2(dfd, dfd == AT_FDCWD ? p : strrchr(p, '/') + 1,
					 O_RDONLY, ONE_OF(resolves) | (pick(3) ? 0 :
					 RESOLVE_NO_SYMLINKS));
			if (fd < 0) {
				add("e%d", errno);
			} else {
				reached(fd);
				close(fd);
			}
			if (dfd >= 0)
				close(dfd);
			break;
		default:
			add("e%d", chdir(p) ? errno : 0);
			if (chdir("/"))
				;
			break;
		}
	}
}

static void one_case(bool userns)
{
	off = 0;
	obs[0] = '\0';
	if (userns) {
		int err = enter_userns(UID);

		if (err) {
			add("userns %d", -err);
			return;
		}
	} else if (enter_mntns()) {
		add("mntns %d", errno);
		return;
	}
	build_tree();
	show_flags();
	change_flags();
	show_flags();
	walks();
}

/*
 * Whether this kernel has the flag at all, in a child with a private mount
 * namespace: mount(2) must show it and mount_setattr(2) accept it.  Without
 * it (the baseline) the walks would all follow and the group must fail.
 */
static int flag_known(void)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -errno;
	if (!pid) {
		if (enter_mntns() || mkdir(BASE, 0755) ||
		    mount("nsff", BASE, "tmpfs", MS_NOSYMFOLLOW, NULL))
			_exit(1);
		if (!shown_nosymfollow(BASE) || !(statfs_flags(BASE) & ST_NOSYMFOLLOW))
			_exit(2);
		if (sys_mount_setattr(AT_FDCWD, BASE, 0, 0, MOUNT_ATTR_NOSYMFOLLOW) ||
		    shown_nosymfollow(BASE))
			_exit(3);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

int main(void)
{
	const struct fuzz_env env = fuzz_env();
	unsigned long cases = env.cases, limit = env.limit, i, done = 0, users = 0;
	uint64_t seed = env.seed;
	time_t start = time(NULL);
	bool userns;
	int status;
	pid_t pid;

	obs = mmap(NULL, OBS_LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	violations = mmap(NULL, sizeof(*violations), PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ksft_print_header();
	ksft_set_plan(3);
	ksft_print_msg("seed %llu, %lu cases (KTEST_SEED=%llu replays them)\n",
		       (unsigned long long)seed, cases, (unsigned long long)seed);
	if (obs == MAP_FAILED || violations == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	status = flag_known();
	ksft_test_result(!status, "the kernel knows nosymfollow (step %d)\n", status);
	for (i = 0; i < cases; i++) {
		if ((unsigned long)(time(NULL) - start) > limit)
			break;
		/* each case draws from its own stream, so that a case replays alone as well */
		fuzz_seed_case(seed, i);
		userns = !pick(3);
		users += userns;
		memset(obs, 0, OBS_LEN);
		pid = fork();
		if (pid < 0)
			ksft_exit_fail_msg("fork: %s\n", strerror(errno));
		if (!pid) {
			one_case(userns);
			_exit(0);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
			snprintf(obs, OBS_LEN, "child died");
		obs[OBS_LEN - 1] = '\0';
		printf("# obs c%lu %s %s\n", i, userns ? "userns" : "root", obs);
		fflush(stdout);
		done++;
	}
	ksft_test_result(done > 0, "%lu of %lu cases in %ld s (%lu as uid %d in a user namespace)\n",
			 done, cases, (long)(time(NULL) - start), users, UID);
	ksft_test_result(!*violations,
			 "a trailing link on a nosymfollow mount is never followed (%lu violations)\n",
			 *violations);
	ksft_finished();
}

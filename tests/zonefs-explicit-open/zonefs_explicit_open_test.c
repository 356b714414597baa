// SPDX-License-Identifier: GPL-2.0
/*
 * zonefs "explicit-open" mount option (issue 10), on zoned null_blk devices made through
 * configfs and on a QEMU NVMe ZNS namespace (host-setup attaches it as /dev/nvme0n1; the
 * device-independent cases, fixture "lim", run on it too; without NVMe in the kernel or
 * without the namespace, the "nvme" variants skip, saying why).
 *
 * The reference is stock 6.1 (fs/zonefs/{super,file}.c): with explicit-open, the first
 * open of a sequential zone file for writing sends a zone OPEN to the device, unless the
 * file is full; when as many sequential files are open for writing as the device has open
 * zones (max_wro_seq_files), the next first write-open fails with EBUSY before any command;
 * a failing OPEN fails open(2) with the device's errno (EOVERFLOW: no active zone left,
 * ETOOMANYREFS: no open zone left). The last close of a writer sends a zone CLOSE, turned
 * into a RESET when nothing was written, and nothing for a zone that became full. Truncate
 * to 0 of an explicitly opened file resets and opens the zone again; truncate to the zone
 * capacity finishes it (no close later). Read-only opens and conventional files never
 * count. On a device with neither limit the option is dropped at mount with a message.
 * Where stock breaks the option's promise (writes never fail for zone resources once
 * open(2) succeeded; zones zonefs opened are closed), ours and 6.1 with the series' fixes
 * are the reference.
 * The sysfs attributes /sys/fs/zonefs/<dev>/{nr,max}_{wro,active}_seq_files follow it.
 *
 * Two tests pin the deliberate differences of ours from stock and fail on stock (group.conf
 * STOCK_FAILS): proc_mounts_shows_option and failed_close_uncounts. Four are the regression
 * tests of stock bugs that patches/fixes/0016 and 0017 fix, and fail on stock too:
 * write_error_zone_ro_closes_zone, write_error_zone_offline_closes_zone,
 * truncate_zero_of_file_full_at_open and o_trunc_full_file_at_active_limit.
 *
 * Every data write here is an asynchronous direct write (io_submit): stock 6.1 fails every
 * synchronous direct write to a sequential file (patches/fixes/0001, tested by
 * zonefs_sync_dio_test). The same cases built with ZT_SYNC_WRITES
 * (zonefs_explicit_open_sync_test) write with pwrite(2) instead, as issue 10 asks once the
 * fix is in; that build fails every case where a probe write shows the bug (stock).
 *
 * Each test says in a "Fails if" line which plausible wrong implementation it catches.
 * On the baseline kernel (no explicit-open) every fixture that mounts with the option fails
 * its set-up with EINVAL: the option's absence is a failure, never a skip.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <sys/statvfs.h>

#include "kselftest_harness.h"
#include "zonefs_util.h"

#define MNT		"/mnt/zfs-eo"
#define UNPRIV		1000
#define BUFSZ		(1 << 20)
#define NULLB_NAME	"zfs-eo"

struct geom {
	const char *nvme;	/* an NVMe namespace (host-setup), or NULL: null_blk */
	unsigned int zone_mb, cap_mb, nr_zones, nr_conv, max_open, max_active;
};

/* null_blk: 16 zones of 4 MiB, zone 0 the super block, one conventional file (cnv/0). */
#define NB(o, a, cap) { .zone_mb = 4, .cap_mb = (cap), .nr_zones = 16, .nr_conv = 2, \
			.max_open = (o), .max_active = (a) }

struct eo {
	struct zdev d;
	char *buf;
};

/*
 * Data writes: asynchronous direct writes (io_submit), or, built with ZT_SYNC_WRITES
 * (zonefs_explicit_open_sync_test), synchronous ones (pwrite), which need patches/fixes/0001.
 */
#ifdef ZT_SYNC_WRITES
static long xwrite(int fd, const void *b, size_t len, off_t off)
{
	ssize_t r = pwrite(fd, b, len, off);

	return r < 0 ? -errno : r;
}
#else
#define xwrite zt_awrite
#endif

/* On CPU 0 only: zt_pin_cpu() says why (the counters are read right after closes). */
static void __attribute__((constructor)) pin_cpu0(void)
{
	zt_pin_cpu(0);
}

static void fill(char *buf, size_t len, off_t pos)
{
	size_t i;

	for (i = 0; i < len; i += 8)
		*(uint64_t *)(buf + i) = 0x454f5053ULL << 32 | (uint64_t)(pos + i);
}

static const char *seq(unsigned int n)
{
	static char p[4][64];
	static int i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), MNT "/seq/%u", n);
	return p[i];
}

/* open(2) returning the descriptor or -errno. */
static int xopen(const char *path, int flags)
{
	int fd = open(path, flags);

	return fd < 0 ? -errno : fd;
}

static int wopen(unsigned int n)
{
	return xopen(seq(n), O_WRONLY | O_DIRECT);
}

static int cond(struct eo *e, unsigned int n)
{
	struct blk_zone z = { 0 };

	if (zdev_seq_zone(&e->d, n, &z))
		return -1;
	return z.cond;
}

/* The zone's write pointer, in bytes from its start. */
static off_t zwp(struct eo *e, unsigned int n)
{
	struct blk_zone z = { 0 };

	if (zdev_seq_zone(&e->d, n, &z))
		return -1;
	return (off_t)(z.wp - z.start) << 9;
}

static off_t fsize(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -errno : st.st_size;
}

static long ctr(struct eo *e, const char *attr)
{
	return zt_sysfs(&e->d.nb, attr);
}

static int fs_readonly(void)
{
	struct statvfs sv;

	if (statvfs(MNT, &sv))
		return -1;
	return !!(sv.f_flag & ST_RDONLY);
}

/* Append @len bytes to seq/@n through @fd (asynchronous direct write at the file size). */
static long append(struct eo *e, int fd, unsigned int n, size_t len)
{
	off_t pos = fsize(seq(n));

	fill(e->buf, len, pos);
	return xwrite(fd, e->buf, len, pos);
}

/*
 * The sysfs counters against what the test holds open and what the device reports:
 * nr_wro_seq_files is the number of sequential files open for writing; nr_active_seq_files
 * is the number of sequential zones the device has active (open either way, or closed);
 * the limits are the device's.
 */
#define CHECK_COUNTERS(e, wro) check_counters(_metadata, (e), (wro), __LINE__)

static void check_counters(struct __test_metadata *_metadata, struct eo *e, long wro,
			   int line)
{
	char conds[256];
	int active = -1;

	ASSERT_EQ(0, zdev_conds(&e->d, conds, &active, NULL));
	EXPECT_EQ(wro, ctr(e, "nr_wro_seq_files"))
		TH_LOG("line %d: nr_wro_seq_files, zones %s", line, conds);
	EXPECT_EQ(active, ctr(e, "nr_active_seq_files"))
		TH_LOG("line %d: nr_active_seq_files against the device's active zones %s",
		       line, conds);
	EXPECT_EQ((long)e->d.max_open, ctr(e, "max_wro_seq_files"));
	EXPECT_EQ((long)e->d.max_active, ctr(e, "max_active_seq_files"));
}

/* The zone condition of seq/@n (no TH_LOG may follow: this one is the log). */
#define EXPECT_COND(e, n, c) EXPECT_EQ((c), cond((e), (n)))				\
	TH_LOG("line %d: seq/%u: zone %s, expected %s", __LINE__, (unsigned int)(n),	\
	       zt_cond_name(cond((e), (n))), zt_cond_name(c))

/*
 * Set-up shared by the fixtures: the device (a null_blk device of geometry @g, or the
 * NVMe namespace @g->nvme), formatted with ./mkzonefs @fmt, mounted with @opts (NULL: no
 * mount). A mount refused with EINVAL is a failure (the baseline kernel), not a skip.
 */
static void eo_setup(struct __test_metadata *_metadata, struct eo *e, const struct geom *g,
		     const char *fmt, const char *opts)
{
	int ret;

	umount(MNT);	/* a leftover of a case whose set-up failed */
	if (g->nvme) {
		ret = zdev_nvme(&e->d, g->nvme);
		if (ret == -ENOENT)
			ZT_SETUP_SKIP("no /dev/%s: no NVMe in this kernel (CONFIG_BLK_DEV_NVME) or "
				      "QEMU started without the group's host-setup", g->nvme);
		ASSERT_EQ(0, ret) TH_LOG("/dev/%s is not a usable zoned namespace: %s",
					 g->nvme, strerror(-ret));
		/* The fixture's kind of limits must be what host-setup gave the namespace. */
		ASSERT_EQ(!!g->max_open, !!e->d.max_open)
			TH_LOG("/dev/%s: max_open_zones %u", g->nvme, e->d.max_open);
		ASSERT_EQ(!!g->max_active, !!e->d.max_active)
			TH_LOG("/dev/%s: max_active_zones %u", g->nvme, e->d.max_active);
	} else {
		struct nullb_cfg c = {
			.size_mb = g->nr_zones * g->zone_mb, .zone_size_mb = g->zone_mb,
			.zone_capacity_mb = g->cap_mb, .zone_nr_conv = g->nr_conv,
			.zone_max_open = g->max_open, .zone_max_active = g->max_active,
		};

		ret = zdev_nullb(&e->d, NULLB_NAME, &c);
		if (ret == -ENOENT)
			ZT_SETUP_SKIP("no configfs null_blk (CONFIG_BLK_DEV_NULL_BLK, CONFIGFS_FS)");
		ASSERT_EQ(0, ret) TH_LOG("null_blk: %s", strerror(-ret));
		ASSERT_EQ(g->max_open, e->d.max_open);
		ASSERT_EQ(g->max_active, e->d.max_active);
	}
	ASSERT_EQ(0, posix_memalign((void **)&e->buf, 4096, BUFSZ));
#ifdef ZT_SYNC_WRITES
	/*
	 * The synchronous build needs synchronous direct writes that work: on a kernel with
	 * 6.1's bug (zonefs_sync_dio_test fails there) every case fails here, saying why.
	 */
	ASSERT_EQ(0, zt_mkzonefs(e->d.nb.dev, NULL));
	ASSERT_EQ(0, zt_mount(e->d.nb.dev, MNT, 0, NULL));
	ret = xopen(MNT "/seq/0", O_WRONLY | O_DIRECT);
	ASSERT_LE(0, ret);
	memset(e->buf, 0, 4096);
	errno = 0;
	if (pwrite(ret, e->buf, 4096, 0) != 4096) {
		int err = errno;

		close(ret);
		umount(MNT);
		nullb_destroy(&e->d.nb);
		ASSERT_EQ(0, err) TH_LOG("synchronous direct writes fail here (%s): 6.1's bug, "
					 "fixed by patches/fixes/0001", strerror(err));
	}
	close(ret);
	ASSERT_EQ(0, umount(MNT));
#endif
	ASSERT_EQ(0, zt_mkzonefs(e->d.nb.dev, "%s", fmt ?: ""));
	zt_kmsg_mark();
	if (opts) {
		ret = zt_mount(e->d.nb.dev, MNT, 0, opts);
		ASSERT_EQ(0, ret) TH_LOG("mount -o %s: %s", opts, strerror(-ret));
	}
}

static void eo_teardown(struct __test_metadata *_metadata, struct eo *e)
{
	if (!_metadata->passed)
		zt_kmsg_grep("", 1);	/* what the kernel said, for the failing case's log */
	zt_cleanup_mount(MNT);
	nullb_destroy(&e->d.nb);
	free(e->buf);
}

/* Unmount, format again (./mkzonefs @fmt) and mount with @opts. */
static int reformat(struct eo *e, const char *fmt, const char *opts)
{
	int ret;

	umount(MNT);
	ret = zt_mkzonefs(e->d.nb.dev, "%s", fmt ?: "");
	if (ret)
		return -EIO;
	return zt_mount(e->d.nb.dev, MNT, 0, opts);
}

static int remount(const char *opts)
{
	return mount(NULL, MNT, NULL, MS_REMOUNT, opts) ? -errno : 0;
}

/* Act as uid/gid 1000 (effective ids only: as_root() comes back), or as root again. */
static void as_user(void)
{
	if (setgroups(0, NULL) || setresgid(-1, UNPRIV, -1) || setresuid(-1, UNPRIV, -1))
		abort();
}

static void as_root(void)
{
	if (setresuid(-1, 0, -1) || setresgid(-1, 0, -1))
		abort();
}

/* The option string /proc/mounts shows for MNT, or "" */
static const char *mount_opts(void)
{
	static char line[512], opts[512];
	FILE *f = fopen("/proc/mounts", "r");

	opts[0] = 0;
	if (!f)
		return opts;
	while (fgets(line, sizeof(line), f)) {
		char dev[128], dir[128], type[64];

		if (sscanf(line, "%127s %127s %63s %511s", dev, dir, type, opts) == 4 &&
		    !strcmp(dir, MNT))
			break;
		opts[0] = 0;
	}
	fclose(f);
	return opts;
}

static int has_opt(const char *opt)
{
	char buf[512], *tok, *save;

	snprintf(buf, sizeof(buf), "%s", mount_opts());
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (!strcmp(tok, opt))
			return 1;
	return 0;
}

/* ------------------------------------------------------------------------------------ */
/* Devices with an open zone limit N: N write-opens, then EBUSY.                         */

FIXTURE(lim) {
	struct eo e;
};

FIXTURE_VARIANT(lim) {
	struct geom g;
};

/* max_open 4, max_active 6 (null_blk) */
FIXTURE_VARIANT_ADD(lim, nb_open4_active6) {
	.g = NB(4, 6, 0),
};

/* max_open 4 and no active limit */
FIXTURE_VARIANT_ADD(lim, nb_open4) {
	.g = NB(4, 0, 0),
};

/* max_open 3, max_active 5, zone capacity 3 MiB of 4 MiB zones */
FIXTURE_VARIANT_ADD(lim, nb_open3_active5_cap3) {
	.g = NB(3, 5, 3),
};

/*
 * the NVMe ZNS namespace of host-setup: max_open 4, max_active 6, 4 KiB blocks, 3 MiB
 * capacity in 4 MiB zones (the figures are read from the device; .max_* say "non-zero")
 */
FIXTURE_VARIANT_ADD(lim, nvme) {
	.g = { .nvme = "nvme0n1", .max_open = 1, .max_active = 1 },
};

FIXTURE_SETUP(lim)
{
	eo_setup(_metadata, &self->e, &variant->g, NULL, "explicit-open");
}

FIXTURE_TEARDOWN(lim)
{
	eo_teardown(_metadata, &self->e);
}

#define N	(self->e.d.max_open)

/*
 * N first write-opens succeed, each opening its zone explicitly; the N+1st fails with
 * EBUSY, sends nothing (its zone stays EMPTY) and is not counted.
 * Fails if: no limit is enforced; the limit is off by one; another errno (ENOSPC,
 * ETOOMANYREFS from the device); a refused open stays counted; no zone OPEN is sent.
 */
TEST_F(lim, limit_n_opens_then_ebusy)
{
	struct eo *e = &self->e;
	int fds[32], i, fd;

	ASSERT_LT(N + 2, e->d.nr_seq);
	CHECK_COUNTERS(e, 0);
	for (i = 0; i < (int)N; i++) {
		fds[i] = wopen(i);
		ASSERT_LE(0, fds[i]) TH_LOG("write-open %d of %u: %s", i + 1, N, strerror(-fds[i]));
		EXPECT_COND(e, i, BLK_ZONE_COND_EXP_OPEN);
		CHECK_COUNTERS(e, i + 1);
	}
	fd = wopen(N);
	EXPECT_EQ(-EBUSY, fd) TH_LOG("write-open %u of a limit of %u", N + 1, N);
	EXPECT_COND(e, N, BLK_ZONE_COND_EMPTY);
	CHECK_COUNTERS(e, N);
	/* O_RDWR is a write-open too. */
	EXPECT_EQ(-EBUSY, xopen(seq(N + 1), O_RDWR));
	CHECK_COUNTERS(e, N);
	for (i = 0; i < (int)N; i++) {
		EXPECT_EQ(0, close(fds[i]));
	}
	CHECK_COUNTERS(e, 0);
}

/*
 * At the limit, closing one writer frees its slot: the refused file opens now. The closed,
 * unwritten zone is reset (EMPTY), not left open.
 * Fails if: close does not decrement nr_wro_seq_files; the zone is not closed/reset at the
 * last close (it would stay EXP_OPEN and hold a device resource).
 */
TEST_F(lim, close_frees_a_slot)
{
	struct eo *e = &self->e;
	int fds[32], i, fd;

	for (i = 0; i < (int)N; i++) {
		fds[i] = wopen(i);
		ASSERT_LE(0, fds[i]);
	}
	ASSERT_EQ(-EBUSY, wopen(N));
	EXPECT_EQ(0, close(fds[0]));
	EXPECT_COND(e, 0, BLK_ZONE_COND_EMPTY);
	CHECK_COUNTERS(e, N - 1);
	fd = wopen(N);
	EXPECT_LE(0, fd) TH_LOG("write-open after a close: %s", strerror(-fd));
	EXPECT_COND(e, N, BLK_ZONE_COND_EXP_OPEN);
	CHECK_COUNTERS(e, N);
	/* and the closed file is now the one refused */
	EXPECT_EQ(-EBUSY, wopen(0));
	close(fd);
	for (i = 1; i < (int)N; i++)
		close(fds[i]);
	CHECK_COUNTERS(e, 0);
}

/*
 * Zone conditions over a writer's life: EXP_OPEN from the open (also for a CLOSED zone
 * opened again), CLOSED after the last close of a written file (still active: the device
 * keeps its write pointer), EMPTY after the last close of an unwritten one (reset).
 * Fails if: the open is implicit (EMPTY after open, IMP_OPEN after a write); the last close
 * sends nothing (EXP_OPEN stays); a written zone is reset at close (data lost: EMPTY); the
 * unwritten zone is closed instead of reset (on NVMe: CLOSED, holding an active resource;
 * null_blk empties it either way); a CLOSED zone is not opened again.
 */
TEST_F(lim, zone_conditions_open_close)
{
	struct eo *e = &self->e;
	int fd;

	fd = wopen(0);
	ASSERT_LE(0, fd);
	EXPECT_COND(e, 0, BLK_ZONE_COND_EXP_OPEN);
	EXPECT_EQ(0, zwp(e, 0));
	CHECK_COUNTERS(e, 1);
	EXPECT_EQ(4096, append(e, fd, 0, 4096));
	EXPECT_COND(e, 0, BLK_ZONE_COND_EXP_OPEN);
	EXPECT_EQ(4096, zwp(e, 0));
	EXPECT_EQ(0, close(fd));
	EXPECT_COND(e, 0, BLK_ZONE_COND_CLOSED);
	EXPECT_EQ(4096, fsize(seq(0)));
	CHECK_COUNTERS(e, 0);

	/* CLOSED -> EXP_OPEN, counted active once */
	fd = wopen(0);
	ASSERT_LE(0, fd);
	EXPECT_COND(e, 0, BLK_ZONE_COND_EXP_OPEN);
	CHECK_COUNTERS(e, 1);
	EXPECT_EQ(4096, append(e, fd, 0, 4096));
	EXPECT_EQ(0, close(fd));
	EXPECT_COND(e, 0, BLK_ZONE_COND_CLOSED);
	EXPECT_EQ(8192, zwp(e, 0));
	CHECK_COUNTERS(e, 0);

	/* unwritten: reset at the last close */
	fd = wopen(1);
	ASSERT_LE(0, fd);
	EXPECT_COND(e, 1, BLK_ZONE_COND_EXP_OPEN);
	CHECK_COUNTERS(e, 1);
	EXPECT_EQ(0, close(fd));
	EXPECT_COND(e, 1, BLK_ZONE_COND_EMPTY);
	CHECK_COUNTERS(e, 0);
	EXPECT_EQ(0, fs_readonly());
}

/*
 * One file opened for writing twice (O_WRONLY and O_RDWR, and a dup) counts once, even at
 * the limit; the zone stays open until the last of them closes.
 * Fails if: counting per open file description (EBUSY for the second open at the limit,
 * nr_wro_seq_files 2); closing the zone at the first close.
 */
TEST_F(lim, second_write_open_counts_once)
{
	struct eo *e = &self->e;
	int fds[32], i, a, b, c;

	for (i = 1; i < (int)N; i++) {
		fds[i] = wopen(i);
		ASSERT_LE(0, fds[i]);
	}
	a = wopen(0);
	ASSERT_LE(0, a);
	CHECK_COUNTERS(e, N);
	b = xopen(seq(0), O_RDWR | O_DIRECT);
	EXPECT_LE(0, b) TH_LOG("second write-open of the same file at the limit: %s",
			       strerror(-b));
	CHECK_COUNTERS(e, N);
	c = dup(a);
	EXPECT_EQ(4096, append(e, b, 0, 4096));
	EXPECT_EQ(0, close(a));
	EXPECT_COND(e, 0, BLK_ZONE_COND_EXP_OPEN);
	CHECK_COUNTERS(e, N);
	EXPECT_EQ(0, close(c));
	EXPECT_COND(e, 0, BLK_ZONE_COND_EXP_OPEN);
	EXPECT_EQ(-EBUSY, wopen(N));
	EXPECT_EQ(0, close(b));
	EXPECT_COND(e, 0, BLK_ZONE_COND_CLOSED);
	CHECK_COUNTERS(e, N - 1);
	for (i = 1; i < (int)N; i++)
		close(fds[i]);
	CHECK_COUNTERS(e, 0);
}

/*
 * Read-only opens never count nor open a zone, at the limit or not, also of a file held
 * open for writing; closing them closes nothing.
 * Fails if: FMODE_READ opens are counted or opened; the accounting keys on O_ACCMODE != 0
 * but treats O_RDONLY|O_DIRECT or O_PATH differently.
 */
TEST_F(lim, read_only_opens_not_counted)
{
	struct eo *e = &self->e;
	int fds[32], ro[32], i;

	for (i = 0; i < (int)e->d.nr_seq; i++) {
		ro[i] = xopen(seq(i), i % 2 ? O_RDONLY : O_RDONLY | O_DIRECT);
		ASSERT_LE(0, ro[i]);
	}
	EXPECT_COND(e, 0, BLK_ZONE_COND_EMPTY);
	CHECK_COUNTERS(e, 0);
	for (i = 0; i < (int)N; i++) {
		fds[i] = wopen(i);
		ASSERT_LE(0, fds[i]);
	}
	CHECK_COUNTERS(e, N);
	i = xopen(seq(N), O_PATH);
	EXPECT_LE(0, i);
	close(i);
	EXPECT_LE(0, (i = xopen(seq(0), O_RDONLY)));
	close(i);
	CHECK_COUNTERS(e, N);
	for (i = 0; i < (int)e->d.nr_seq; i++)
		close(ro[i]);
	EXPECT_COND(e, 0, BLK_ZONE_COND_EXP_OPEN);
	CHECK_COUNTERS(e, N);
	for (i = 0; i < (int)N; i++)
		close(fds[i]);
	CHECK_COUNTERS(e, 0);
}

/*
 * Conventional zone files never count and get no zone command, however opened.
 * Fails if: the accounting or the open command is not limited to sequential files (a zone
 * OPEN to a conventional zone fails with EIO).
 */
TEST_F(lim, conventional_files_not_counted)
{
	struct eo *e = &self->e;
	int fds[32], i, c1, c2;

	if (!e->d.nr_cnv)
		SKIP(return, "no conventional zones on this device (NVMe ZNS has none)");
	for (i = 0; i < (int)N; i++) {
		fds[i] = wopen(i);
		ASSERT_LE(0, fds[i]);
	}
	c1 = xopen(MNT "/cnv/0", O_RDWR);
	EXPECT_LE(0, c1) TH_LOG("cnv/0 O_RDWR at the limit: %s", strerror(-c1));
	c2 = xopen(MNT "/cnv/0", O_WRONLY | O_DIRECT);
	EXPECT_LE(0, c2);
	EXPECT_EQ(4096, pwrite(c1, e->buf, 4096, 0));
	CHECK_COUNTERS(e, N);
	EXPECT_EQ(-EBUSY, wopen(N));
	close(c1);
	close(c2);
	CHECK_COUNTERS(e, N);
	for (i = 0; i < (int)N; i++)
		close(fds[i]);
	CHECK_COUNTERS(e, 0);
	EXPECT_EQ(0, fs_readonly());
}

/*
 * A full file opens for writing without a zone command (a full zone cannot be opened) and
 * still counts in nr_wro_seq_files, so it takes a slot; its close sends nothing.
 * Fails if: an OPEN is sent to the full zone (the device refuses it: open(2) fails with
 * EIO); a full file is not counted (EBUSY comes one open later); a CLOSE is sent at its
 * last close (refused by the device: error handling, the file system goes read-only).
 */
TEST_F(lim, full_file_opens_without_command)
{
	struct eo *e = &self->e;
	int fds[32], i, fd;

	ASSERT_EQ(0, truncate(seq(0), e->d.cap_bytes));
	EXPECT_COND(e, 0, BLK_ZONE_COND_FULL);
	CHECK_COUNTERS(e, 0);
	fd = wopen(0);
	ASSERT_LE(0, fd) TH_LOG("write-open of a full file: %s", strerror(-fd));
	EXPECT_COND(e, 0, BLK_ZONE_COND_FULL);
	CHECK_COUNTERS(e, 1);
	for (i = 1; i < (int)N; i++) {
		fds[i] = wopen(i);
		ASSERT_LE(0, fds[i]);
	}
	CHECK_COUNTERS(e, N);
	EXPECT_EQ(-EBUSY, wopen(N)) TH_LOG("the full file holds a slot");
	EXPECT_EQ(-EFBIG, xwrite(fd, e->buf, 4096, e->d.cap_bytes));
	EXPECT_EQ(0, close(fd));
	EXPECT_COND(e, 0, BLK_ZONE_COND_FULL);
	EXPECT_EQ(0, fs_readonly());
	CHECK_COUNTERS(e, N - 1);
	for (i = 1; i < (int)N; i++)
		close(fds[i]);
	CHECK_COUNTERS(e, 0);
}

/*
 * Appends (O_APPEND) and direct writes at the write pointer, asynchronous, to an
 * explicitly opened zone succeed, keep the zone EXP_OPEN and read back.
 * Fails if: the explicit open leaves the zone in a state writes are refused in; the open
 * is done after the first write; zonefs's write pointer gets out of step with the device.
 */
TEST_F(lim, append_and_direct_writes)
{
	struct eo *e = &self->e;
	char *rb;
	int fd, afd, rfd;

	ASSERT_EQ(0, posix_memalign((void **)&rb, 4096, 65536));
	fd = wopen(2);
	ASSERT_LE(0, fd);
	fill(e->buf, 8192, 0);
	EXPECT_EQ(8192, xwrite(fd, e->buf, 8192, 0));
	EXPECT_EQ(-EINVAL, xwrite(fd, e->buf, 4096, 0)) TH_LOG("a write behind the wp");
	afd = xopen(seq(2), O_WRONLY | O_DIRECT | O_APPEND);
	ASSERT_LE(0, afd);
	fill(e->buf, 65536, 8192);
	/* O_APPEND: the offset given is ignored */
	EXPECT_EQ(65536, xwrite(afd, e->buf, 65536, 0));
	EXPECT_EQ(73728, fsize(seq(2)));
	EXPECT_EQ(73728, zwp(e, 2));
	EXPECT_COND(e, 2, BLK_ZONE_COND_EXP_OPEN);
	CHECK_COUNTERS(e, 1);
	rfd = xopen(seq(2), O_RDONLY | O_DIRECT);
	ASSERT_LE(0, rfd);
	EXPECT_EQ(65536, pread(rfd, rb, 65536, 8192));
	EXPECT_EQ(0, memcmp(rb, e->buf, 65536));
	close(rfd);
	close(afd);
	close(fd);
	EXPECT_COND(e, 2, BLK_ZONE_COND_CLOSED);
	CHECK_COUNTERS(e, 0);
	free(rb);
}

/*
 * Writes that fill the zone: FULL, no longer active (nr_active_seq_files drops while the
 * file is still open), still a writer; the last close sends nothing; EFBIG beyond.
 * Fails if: a full zone stays counted active or keeps its open flag (then a CLOSE goes to
 * a FULL zone at close: refused, error handling, read-only file system).
 */
TEST_F(lim, fill_zone_full_then_close)
{
	struct eo *e = &self->e;
	off_t pos = 0;
	int fd;

	fd = wopen(3);
	ASSERT_LE(0, fd);
	CHECK_COUNTERS(e, 1);
	while (pos < e->d.cap_bytes) {
		size_t len = e->d.cap_bytes - pos < BUFSZ ? e->d.cap_bytes - pos : BUFSZ;

		fill(e->buf, len, pos);
		ASSERT_EQ((long)len, xwrite(fd, e->buf, len, pos)) TH_LOG("at %lld",
									   (long long)pos);
		pos += len;
		if (pos < e->d.cap_bytes) {
			EXPECT_COND(e, 3, BLK_ZONE_COND_EXP_OPEN);
		}
	}
	EXPECT_COND(e, 3, BLK_ZONE_COND_FULL);
	EXPECT_EQ(e->d.cap_bytes, fsize(seq(3)));
	CHECK_COUNTERS(e, 1);
	EXPECT_EQ(0, ctr(e, "nr_active_seq_files"));
	EXPECT_EQ(-EFBIG, xwrite(fd, e->buf, 4096, pos));
	EXPECT_EQ(0, close(fd));
	EXPECT_COND(e, 3, BLK_ZONE_COND_FULL);
	EXPECT_EQ(0, fs_readonly()) TH_LOG("a command was sent to the full zone at close");
	CHECK_COUNTERS(e, 0);
}

/*
 * Truncate to 0 while a writer holds the zone open: reset, then opened again (EXP_OPEN,
 * still counted active), so writes go on; by path (truncate) and by descriptor.
 * Fails if: the zone is not opened again after the reset (EMPTY; the guarantee is lost);
 * the active count drops for the still open zone; the open flag is dropped (the last close
 * then sends nothing and the written zone stays EXP_OPEN).
 */
TEST_F(lim, truncate_zero_reopens)
{
	struct eo *e = &self->e;
	int fd;

	fd = wopen(4);
	ASSERT_LE(0, fd);
	EXPECT_EQ(8192, append(e, fd, 4, 8192));
	EXPECT_EQ(0, ftruncate(fd, 0));
	EXPECT_EQ(0, fsize(seq(4)));
	EXPECT_EQ(0, zwp(e, 4));
	EXPECT_COND(e, 4, BLK_ZONE_COND_EXP_OPEN);
	CHECK_COUNTERS(e, 1);
	EXPECT_EQ(1, ctr(e, "nr_active_seq_files"));
	EXPECT_EQ(4096, append(e, fd, 4, 4096));
	EXPECT_EQ(0, truncate(seq(4), 0));
	EXPECT_COND(e, 4, BLK_ZONE_COND_EXP_OPEN);
	CHECK_COUNTERS(e, 1);
	EXPECT_EQ(4096, append(e, fd, 4, 4096));
	EXPECT_EQ(0, close(fd));
	EXPECT_COND(e, 4, BLK_ZONE_COND_CLOSED);
	CHECK_COUNTERS(e, 0);
	/* Without a writer, truncate to 0 is a reset and nothing more. */
	EXPECT_EQ(0, truncate(seq(4), 0));
	EXPECT_COND(e, 4, BLK_ZONE_COND_EMPTY);
	CHECK_COUNTERS(e, 0);
}

/*
 * Truncate to the zone capacity while open: FINISH, FULL, not active; the last close sends
 * nothing. Any other size is EPERM (or EFBIG beyond the largest file).
 * Fails if: the open flag survives the finish (a CLOSE to a FULL zone at close: refused,
 * the file system goes read-only); the finished zone stays counted active.
 */
TEST_F(lim, truncate_capacity_finishes)
{
	struct eo *e = &self->e;
	int fd;

	fd = wopen(5);
	ASSERT_LE(0, fd);
	EXPECT_EQ(4096, append(e, fd, 5, 4096));
	EXPECT_EQ(-1, ftruncate(fd, 8192));
	EXPECT_EQ(EPERM, errno);
	/*
	 * The zone size, beyond the capacity: EPERM from zonefs, or EFBIG from the VFS when
	 * it is beyond the largest file (s_maxbytes: conventional zones have no smaller
	 * capacity, so only a device without them, NVMe here, gets EFBIG).
	 */
	if (e->d.cap_bytes != e->d.zone_bytes) {
		EXPECT_EQ(-1, ftruncate(fd, e->d.zone_bytes));
		EXPECT_EQ(e->d.nr_cnv ? EPERM : EFBIG, errno);
	}
	EXPECT_COND(e, 5, BLK_ZONE_COND_EXP_OPEN);
	EXPECT_EQ(0, ftruncate(fd, e->d.cap_bytes));
	EXPECT_COND(e, 5, BLK_ZONE_COND_FULL);
	EXPECT_EQ(e->d.cap_bytes, fsize(seq(5)));
	CHECK_COUNTERS(e, 1);
	EXPECT_EQ(0, close(fd));
	EXPECT_COND(e, 5, BLK_ZONE_COND_FULL);
	EXPECT_EQ(0, fs_readonly()) TH_LOG("a command was sent to the finished zone at close");
	CHECK_COUNTERS(e, 0);
	/* An unwritten file, open: finish from EXP_OPEN. */
	fd = wopen(6);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, ftruncate(fd, e->d.cap_bytes));
	EXPECT_COND(e, 6, BLK_ZONE_COND_FULL);
	CHECK_COUNTERS(e, 1);
	EXPECT_EQ(0, close(fd));
	EXPECT_EQ(0, fs_readonly());
	CHECK_COUNTERS(e, 0);
}

/*
 * O_TRUNC: the open comes first, so a refused open (EBUSY at the limit) truncates nothing;
 * an accepted one opens the zone (CLOSED -> EXP_OPEN), resets it and opens it again.
 * Fails if: the limit is checked after the truncate (data lost on EBUSY); O_TRUNC's reset
 * leaves the zone EMPTY.
 */
TEST_F(lim, o_trunc_open)
{
	struct eo *e = &self->e;
	int fds[32], i, fd;

	fd = wopen(0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(8192, append(e, fd, 0, 8192));
	close(fd);
	EXPECT_COND(e, 0, BLK_ZONE_COND_CLOSED);
	for (i = 1; i <= (int)N; i++) {
		fds[i] = wopen(i);
		ASSERT_LE(0, fds[i]);
	}
	EXPECT_EQ(-EBUSY, xopen(seq(0), O_WRONLY | O_TRUNC));
	EXPECT_EQ(8192, fsize(seq(0)));
	EXPECT_COND(e, 0, BLK_ZONE_COND_CLOSED);
	close(fds[N]);
	fd = xopen(seq(0), O_WRONLY | O_TRUNC | O_DIRECT);
	ASSERT_LE(0, fd) TH_LOG("%s", strerror(-fd));
	EXPECT_EQ(0, fsize(seq(0)));
	EXPECT_COND(e, 0, BLK_ZONE_COND_EXP_OPEN);
	CHECK_COUNTERS(e, N);
	close(fd);
	EXPECT_COND(e, 0, BLK_ZONE_COND_EMPTY);
	for (i = 1; i < (int)N; i++)
		close(fds[i]);
	CHECK_COUNTERS(e, 0);
}

/*
 * uid 1000: with the default permissions (0640 root:root) every open is EACCES and nothing
 * is counted or opened; with perm=0666 (super block feature) the user's write-opens count
 * and open zones like root's, and the user gets EBUSY at the limit too.
 * Fails if: the accounting runs before the permission check (a refused open counted or a
 * zone opened); the limit is applied only to some users.
 */
TEST_F(lim, unprivileged_user)
{
	struct eo *e = &self->e;
	int fds[32], i, fd;

	as_user();
	EXPECT_EQ(-EACCES, wopen(0));
	EXPECT_EQ(-EACCES, xopen(seq(0), O_RDWR));
	EXPECT_EQ(-EACCES, xopen(seq(0), O_RDONLY));
	EXPECT_EQ(-1, truncate(seq(0), 0));
	EXPECT_EQ(EACCES, errno);
	as_root();
	EXPECT_COND(e, 0, BLK_ZONE_COND_EMPTY);
	CHECK_COUNTERS(e, 0);

	ASSERT_EQ(0, reformat(e, "-f perm=0666", "explicit-open"));
	as_user();
	for (i = 0; i < (int)N; i++) {
		fds[i] = wopen(i);
		ASSERT_LE(0, fds[i]) TH_LOG("uid 1000 write-open: %s", strerror(-fds[i]));
	}
	fd = wopen(N);
	as_root();
	EXPECT_EQ(-EBUSY, fd);
	EXPECT_COND(e, 0, BLK_ZONE_COND_EXP_OPEN);
	CHECK_COUNTERS(e, N);
	/* root is held to the same limit */
	EXPECT_EQ(-EBUSY, wopen(N));
	as_user();
	EXPECT_EQ(4096, append(e, fds[0], 0, 4096));
	for (i = 0; i < (int)N; i++)
		close(fds[i]);
	as_root();
	EXPECT_COND(e, 0, BLK_ZONE_COND_CLOSED);
	EXPECT_COND(e, 1, BLK_ZONE_COND_EMPTY);
	CHECK_COUNTERS(e, 0);
}

/*
 * Without the option: no zone command at all. More than N files open for writing, all
 * counted (nr_wro_seq_files has no limit), zones EMPTY until written, then implicitly open,
 * and left as the device has them after the close.
 * Fails if: open commands or the limit apply without the option; the counting of writers
 * depends on the option (the baseline keeps it).
 */
TEST_F(lim, no_option_no_commands)
{
	struct eo *e = &self->e;
	int fds[32], i, n = N + 2;

	ASSERT_EQ(0, reformat(e, NULL, NULL));
	EXPECT_EQ(0, has_opt("explicit-open"));
	for (i = 0; i < n; i++) {
		fds[i] = wopen(i);
		ASSERT_LE(0, fds[i]) TH_LOG("write-open %d: %s", i + 1, strerror(-fds[i]));
	}
	EXPECT_COND(e, 0, BLK_ZONE_COND_EMPTY);
	CHECK_COUNTERS(e, n);
	EXPECT_EQ(4096, append(e, fds[0], 0, 4096));
	EXPECT_COND(e, 0, BLK_ZONE_COND_IMP_OPEN);
	CHECK_COUNTERS(e, n);
	for (i = 0; i < n; i++)
		close(fds[i]);
	EXPECT_COND(e, 0, BLK_ZONE_COND_IMP_OPEN);
	EXPECT_COND(e, 1, BLK_ZONE_COND_EMPTY);
	CHECK_COUNTERS(e, 0);
}

/*
 * A remount adds the option (it cannot take it away: no token clears it). Files opened
 * for writing before the remount were not opened on the device and are not by later opens
 * of the same file while they stay open.
 * Fails if: remount ignores the option; a remount without it (errors=repair) drops it;
 * existing writers are opened on the device or counted again.
 */
TEST_F(lim, remount_adds_option)
{
	struct eo *e = &self->e;
	int a, b, c;

	ASSERT_EQ(0, reformat(e, NULL, NULL));
	a = wopen(0);
	ASSERT_LE(0, a);
	EXPECT_COND(e, 0, BLK_ZONE_COND_EMPTY);
	ASSERT_EQ(0, remount("explicit-open"));
	b = wopen(1);
	ASSERT_LE(0, b);
	EXPECT_COND(e, 1, BLK_ZONE_COND_EXP_OPEN);
	c = wopen(0);
	ASSERT_LE(0, c);
	EXPECT_COND(e, 0, BLK_ZONE_COND_EMPTY);
	CHECK_COUNTERS(e, 2);
	close(c);
	close(a);
	EXPECT_COND(e, 0, BLK_ZONE_COND_EMPTY);
	close(b);
	EXPECT_COND(e, 1, BLK_ZONE_COND_EMPTY);
	CHECK_COUNTERS(e, 0);

	ASSERT_EQ(0, remount("errors=repair"));
	a = wopen(2);
	ASSERT_LE(0, a);
	/* a remount without it keeps it */
	EXPECT_COND(e, 2, BLK_ZONE_COND_EXP_OPEN);
	close(a);
	ASSERT_EQ(0, remount(""));
	a = wopen(2);
	ASSERT_LE(0, a);
	EXPECT_COND(e, 2, BLK_ZONE_COND_EXP_OPEN);
	close(a);
	CHECK_COUNTERS(e, 0);
}

/*
 * Writers that were open before a remount added the option stay counted: nr_wro_seq_files
 * can then be above max_wro_seq_files with explicit-open in effect, and every new first
 * write-open fails with EBUSY until enough of them are closed (stock 6.1 does the same).
 * Fails if: the remount resets or recounts the writers; the limit check lets the count
 * grow further when it is already above the limit.
 */
TEST_F(lim, remount_over_limit)
{
	struct eo *e = &self->e;
	int fds[32], i, fd, n = N + 2;

	ASSERT_EQ(0, reformat(e, NULL, NULL));
	for (i = 0; i < n; i++) {
		fds[i] = wopen(i);
		ASSERT_LE(0, fds[i]);
	}
	ASSERT_EQ(0, remount("explicit-open"));
	CHECK_COUNTERS(e, n);
	EXPECT_LT((long)N, ctr(e, "nr_wro_seq_files"));
	EXPECT_EQ(-EBUSY, wopen(n));
	/* a second open of a counted file is no first open */
	fd = wopen(0);
	EXPECT_LE(0, fd);
	close(fd);
	for (i = 0; i < 3; i++)
		close(fds[i]);
	CHECK_COUNTERS(e, n - 3);
	fd = wopen(n);
	EXPECT_LE(0, fd) TH_LOG("%s", strerror(-fd));
	EXPECT_COND(e, n, BLK_ZONE_COND_EXP_OPEN);
	CHECK_COUNTERS(e, N);
	close(fd);
	for (i = 3; i < n; i++)
		close(fds[i]);
	CHECK_COUNTERS(e, 0);
}

/*
 * A file that was full when it was opened for writing got no zone OPEN (it takes no
 * writes), but its writer is counted. A truncate to 0 while it is open resets the zone and
 * must open it, as for a file whose zone zonefs opened: the writer's guarantee ("if open
 * succeeds, writes cannot fail for zone resources") holds across the truncate. The last
 * close then closes the written zone.
 * Fails on stock 6.1 (patches/fixes/0017): only a zone zonefs opened is reopened, so the
 * zone stays EMPTY, the write opens it implicitly and the last close leaves it open.
 * Fails if: the reopen keys on the zone having been opened at open(2) (stock's behaviour);
 * the truncate leaves the file counted twice or not at all.
 */
TEST_F(lim, truncate_zero_of_file_full_at_open)
{
	struct eo *e = &self->e;
	int fd;

	ASSERT_EQ(0, truncate(seq(0), e->d.cap_bytes));
	fd = wopen(0);
	ASSERT_LE(0, fd);
	EXPECT_COND(e, 0, BLK_ZONE_COND_FULL);
	EXPECT_EQ(0, ftruncate(fd, 0));
	EXPECT_COND(e, 0, BLK_ZONE_COND_EXP_OPEN);
	CHECK_COUNTERS(e, 1);
	EXPECT_EQ(4096, append(e, fd, 0, 4096));
	EXPECT_COND(e, 0, BLK_ZONE_COND_EXP_OPEN);
	CHECK_COUNTERS(e, 1);
	EXPECT_EQ(0, close(fd));
	EXPECT_COND(e, 0, BLK_ZONE_COND_CLOSED);
	EXPECT_EQ(4096, zwp(e, 0));
	EXPECT_EQ(0, fs_readonly());
	CHECK_COUNTERS(e, 0);
}

/*
 * Write @len bytes at the write pointer of seq/@n's zone, past the file system (O_DIRECT
 * on the device): zonefs's idea of the write pointer is then behind the device's, and its
 * next write to the file fails (not at the write pointer). 0 or -errno.
 */
static int dev_write_at_wp(struct eo *e, unsigned int n, size_t len)
{
	off_t zstart = (off_t)(e->d.first_seq + n) * e->d.zone_bytes;
	off_t wp = zwp(e, n);
	ssize_t r;
	int fd;

	if (wp < 0)
		return -EIO;
	fd = open(e->d.nb.dev, O_WRONLY | O_DIRECT);
	if (fd < 0)
		return -errno;
	memset(e->buf, 0x5a, len);
	r = pwrite(fd, e->buf, len, zstart + wp);
	if (r < 0)
		r = -errno;
	close(fd);
	return r == (ssize_t)len ? 0 : r < 0 ? (int)r : -EIO;
}

/*
 * errors=zone-ro and errors=zone-offline: a failed write makes zonefs treat the zone as
 * read-only or offline, but the device still has it explicitly open. The last close must
 * close it on the device (never reset it: the data is still there), or the device keeps one
 * of its N open zones for it until unmount while nr_wro_seq_files says 0.
 */
static void write_error_then_close(struct __test_metadata *_metadata, struct eo *e,
				   const char *opts, mode_t mode_after)
{
	int n = e->d.max_open, fds[32], i, fd;
	struct stat st;

	ASSERT_EQ(0, reformat(e, NULL, opts));
	fd = wopen(0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(4096, append(e, fd, 0, 4096));
	ASSERT_EQ(0, dev_write_at_wp(e, 0, 4096));
	EXPECT_GT(0, xwrite(fd, e->buf, 4096, 4096)) TH_LOG("a write behind the write pointer");
	ASSERT_EQ(0, stat(seq(0), &st));
	EXPECT_EQ(mode_after, st.st_mode & 0777);
	EXPECT_COND(e, 0, BLK_ZONE_COND_EXP_OPEN);
	EXPECT_EQ(0, close(fd));
	EXPECT_COND(e, 0, BLK_ZONE_COND_CLOSED);
	EXPECT_EQ(8192, zwp(e, 0)) TH_LOG("the zone's data must stay on the device");
	EXPECT_EQ(0, ctr(e, "nr_wro_seq_files"));
	EXPECT_EQ(0, fs_readonly());
	for (i = 1; i <= n; i++) {
		fds[i] = wopen(i);
		EXPECT_LE(0, fds[i]) TH_LOG("write-open %d of %d after the error: %s", i, n,
					    strerror(-fds[i]));
		if (fds[i] >= 0) {
			EXPECT_COND(e, i, BLK_ZONE_COND_EXP_OPEN);
		}
	}
	EXPECT_EQ(n, ctr(e, "nr_wro_seq_files"));
	for (i = 1; i <= n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	EXPECT_EQ(0, ctr(e, "nr_wro_seq_files"));
}

/*
 * Fails on stock 6.1 (patches/fixes/0016): the zone stays EXP_OPEN after the last close
 * and the Nth write-open fails with ETOOMANYREFS from the device.
 * Fails if: the open is forgotten for every zone zonefs marks read-only (stock's
 * behaviour); the file stays writable after the error.
 */
TEST_F(lim, write_error_zone_ro_closes_zone)
{
	write_error_then_close(_metadata, &self->e, "explicit-open,errors=zone-ro", 0440);
}

/*
 * As write_error_zone_ro_closes_zone with errors=zone-offline (no access at all: mode 0).
 * Fails if: the close of the zone, whose size zonefs now shows as 0, is turned into a reset
 * (the device's data erased: write pointer 0); the open is forgotten (stock's behaviour).
 */
TEST_F(lim, write_error_zone_offline_closes_zone)
{
	write_error_then_close(_metadata, &self->e, "explicit-open,errors=zone-offline", 0);
}

/*
 * errors= options with explicit-open, in either order: the mount works, /proc/mounts shows
 * the errors= behaviour given last, and explicit-open is in effect.
 * Fails if: the new token breaks the parsing of the others (errors= lost or refused); a
 * later errors= clears explicit-open (a mask that covers its bit).
 */
TEST_F(lim, errors_options_combined)
{
	static const struct { const char *opts, *shown; } t[] = {
		{ "errors=zone-ro,explicit-open", "errors=zone-ro" },
		{ "explicit-open,errors=zone-offline", "errors=zone-offline" },
		{ "errors=repair,explicit-open,errors=remount-ro", "errors=remount-ro" },
		{ "explicit-open,errors=zone-ro,errors=repair", "errors=repair" },
	};
	struct eo *e = &self->e;
	unsigned int i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		ASSERT_EQ(0, reformat(e, NULL, t[i].opts)) TH_LOG("mount -o %s", t[i].opts);
		EXPECT_EQ(1, has_opt(t[i].shown)) TH_LOG("-o %s shows %s", t[i].opts,
							 mount_opts());
		fd = wopen(i);
		ASSERT_LE(0, fd);
		EXPECT_COND(e, i, BLK_ZONE_COND_EXP_OPEN);
		CHECK_COUNTERS(e, 1);
		close(fd);
		CHECK_COUNTERS(e, 0);
	}
	/* a remount changes errors= and keeps explicit-open */
	ASSERT_EQ(0, remount("errors=zone-offline"));
	EXPECT_EQ(1, has_opt("errors=zone-offline"));
	fd = wopen(7);
	ASSERT_LE(0, fd);
	EXPECT_COND(e, 7, BLK_ZONE_COND_EXP_OPEN);
	close(fd);
}

/*
 * The device refuses the zone OPEN for lack of open resources when zones were opened past
 * zonefs (BLKOPENZONE on the block device): open(2) fails with ETOOMANYREFS, nothing is
 * counted, and the slot is free again afterwards.
 * Fails if: the device's error is replaced (EIO, EBUSY); the failed open stays counted.
 */
TEST_F(lim, device_open_limit_errno)
{
	struct eo *e = &self->e;
	unsigned int i, first = e->d.nr_seq - N;
	int fd;

	for (i = first; i < e->d.nr_seq; i++) {
		ASSERT_EQ(0, zdev_zone_op(&e->d, BLKOPENZONE, i));
	}
	zt_kmsg_mark();
	fd = wopen(0);
	EXPECT_EQ(-ETOOMANYREFS, fd);
	EXPECT_EQ(0, ctr(e, "nr_wro_seq_files"));
	EXPECT_COND(e, 0, BLK_ZONE_COND_EMPTY);
	EXPECT_LE(1, zt_kmsg_grep("ZONE_OPEN", 0));
	ASSERT_EQ(0, zdev_zone_op(&e->d, BLKCLOSEZONE, first));
	fd = wopen(0);
	EXPECT_LE(0, fd);
	EXPECT_EQ(1, ctr(e, "nr_wro_seq_files"));
	EXPECT_COND(e, 0, BLK_ZONE_COND_EXP_OPEN);
	close(fd);
	EXPECT_EQ(0, ctr(e, "nr_wro_seq_files"));
	EXPECT_COND(e, 0, BLK_ZONE_COND_EMPTY);
}

/*
 * A zone close that fails at the last close (the zone was reset past zonefs: the device
 * refuses to close an empty zone): close(2) still returns 0, the error is logged and
 * handled, and the file system goes read-only, since the zone might stay open.
 * Fails if: close(2) reports the error; the failure is ignored (file system still
 * writable with a zone that may be stuck open).
 */
TEST_F(lim, failed_close_read_only)
{
	struct eo *e = &self->e;
	int fd;

	ASSERT_EQ(0, reformat(e, NULL, "explicit-open,errors=repair"));
	fd = wopen(0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(4096, append(e, fd, 0, 4096));
	ASSERT_EQ(0, zdev_zone_op(&e->d, BLKRESETZONE, 0));
	zt_kmsg_mark();
	EXPECT_EQ(0, close(fd));
	EXPECT_LE(1, zt_kmsg_grep("ZONE_CLOSE", 0));
	EXPECT_EQ(1, fs_readonly());
	EXPECT_EQ(-EROFS, wopen(1));
}

/*
 * Ours on purpose (stock 6.1 leaks one): after a zone close that failed at the last close,
 * the file no longer counts in nr_wro_seq_files, and all N slots can be used again. Here
 * the zone was finished past zonefs (a CLOSE of a FULL zone fails); errors=repair fixes
 * the file size, so the file system stays writable. Fails on stock (STOCK_FAILS).
 * Fails if: the failure path returns before the count is dropped (stock's behaviour).
 */
TEST_F(lim, failed_close_uncounts)
{
	struct eo *e = &self->e;
	int fds[32], i, fd;

	ASSERT_EQ(0, reformat(e, NULL, "explicit-open,errors=repair"));
	fd = wopen(0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(4096, append(e, fd, 0, 4096));
	ASSERT_EQ(0, zdev_zone_op(&e->d, BLKFINISHZONE, 0));
	zt_kmsg_mark();
	EXPECT_EQ(0, close(fd));
	EXPECT_LE(1, zt_kmsg_grep("ZONE_CLOSE", 0));
	EXPECT_EQ(0, fs_readonly());
	EXPECT_EQ(e->d.cap_bytes, fsize(seq(0)));
	EXPECT_EQ(0, ctr(e, "nr_wro_seq_files")) TH_LOG("the failed close left the file counted");
	for (i = 1; i <= (int)N; i++) {
		fds[i] = wopen(i);
		EXPECT_LE(0, fds[i]) TH_LOG("write-open %d of %u after the failed close: %s",
					    i, N, strerror(-fds[i]));
	}
	CHECK_COUNTERS(e, N);
	for (i = 1; i <= (int)N; i++)
		close(fds[i]);
}

/*
 * Written, closed zones keep their active resource on the device: with K - (N - 1) of them
 * (K the active limit) and N - 1 writers, the device has no active zone left although
 * zonefs is below its open limit, so the next zone OPEN is refused: EOVERFLOW. Truncating
 * a closed file to 0 (reset) gives its zone back. A full file needs no active zone.
 * Fails if: the last close resets written zones (data lost, and the open would succeed);
 * the device's errno is replaced or EBUSY given early; a full file's open sends a command.
 */
TEST_F(lim, closed_zones_hold_active)
{
	struct eo *e = &self->e;
	unsigned int K = e->d.max_active, closed, i;
	int fds[32], fd;

	if (!K)
		SKIP(return, "no active zone limit on this device");
	closed = K - (N - 1);
	ASSERT_LT(closed + N + 1, e->d.nr_seq);
	/* made full first: null_blk wants an active zone for the FINISH of an empty zone */
	ASSERT_EQ(0, truncate(seq(closed + N), e->d.cap_bytes));
	for (i = 0; i < closed; i++) {
		fd = wopen(i);
		ASSERT_LE(0, fd);
		EXPECT_EQ(4096, append(e, fd, i, 4096));
		close(fd);
		EXPECT_COND(e, i, BLK_ZONE_COND_CLOSED);
	}
	CHECK_COUNTERS(e, 0);
	for (i = closed; i < closed + N - 1; i++) {
		fds[i] = wopen(i);
		ASSERT_LE(0, fds[i]);
	}
	CHECK_COUNTERS(e, N - 1);
	EXPECT_EQ(K, ctr(e, "nr_active_seq_files"));
	zt_kmsg_mark();
	fd = wopen(closed + N - 1);
	EXPECT_EQ(-EOVERFLOW, fd);
	EXPECT_LE(1, zt_kmsg_grep("ZONE_OPEN", 0));
	EXPECT_COND(e, closed + N - 1, BLK_ZONE_COND_EMPTY);
	CHECK_COUNTERS(e, N - 1);
	/* a full file takes no active zone */
	fd = wopen(closed + N);
	EXPECT_LE(0, fd) TH_LOG("write-open of a full file: %s", strerror(-fd));
	CHECK_COUNTERS(e, N);
	close(fd);
	/* reset one closed zone: room for one more */
	EXPECT_EQ(0, truncate(seq(0), 0));
	EXPECT_COND(e, 0, BLK_ZONE_COND_EMPTY);
	fd = wopen(closed + N - 1);
	EXPECT_LE(0, fd) TH_LOG("%s", strerror(-fd));
	CHECK_COUNTERS(e, N);
	close(fd);
	for (i = closed; i < closed + N - 1; i++)
		close(fds[i]);
	CHECK_COUNTERS(e, 0);
}

#undef N

/* ------------------------------------------------------------------------------------ */
/* Devices with an active zone limit only: no EBUSY, the device's EOVERFLOW.             */

FIXTURE(act) {
	struct eo e;
};

/*
 * max_open 0, max_active 3: null_blk only. (QEMU's NVMe namespace sets its open limit to
 * the active limit when only the latter is given; lim.closed_zones_hold_active reaches
 * EOVERFLOW there.)
 */
FIXTURE_SETUP(act)
{
	static const struct geom g = NB(0, 3, 0);

	eo_setup(_metadata, &self->e, &g, NULL, "explicit-open");
}

FIXTURE_TEARDOWN(act)
{
	eo_teardown(_metadata, &self->e);
}

#define K	(self->e.d.max_active)

/*
 * K write-opens take the K active zones; the K+1st zone OPEN is refused by the device:
 * open(2) fails with EOVERFLOW, the error is logged, nothing stays counted; closing an
 * unwritten writer (reset) frees an active zone.
 * Fails if: EBUSY from a limit zonefs does not have (max_wro_seq_files is 0); the device's
 * errno is replaced; the failed open stays counted; the option is dropped because the open
 * limit alone is 0.
 */
TEST_F(act, active_limit_eoverflow)
{
	struct eo *e = &self->e;
	int fds[32], i, fd;

	EXPECT_EQ(0, ctr(e, "max_wro_seq_files"));
	for (i = 0; i < (int)K; i++) {
		fds[i] = wopen(i);
		ASSERT_LE(0, fds[i]) TH_LOG("write-open %d: %s", i + 1, strerror(-fds[i]));
		EXPECT_COND(e, i, BLK_ZONE_COND_EXP_OPEN);
		CHECK_COUNTERS(e, i + 1);
	}
	zt_kmsg_mark();
	fd = wopen(K);
	EXPECT_EQ(-EOVERFLOW, fd);
	EXPECT_LE(1, zt_kmsg_grep("ZONE_OPEN", 0));
	EXPECT_COND(e, K, BLK_ZONE_COND_EMPTY);
	CHECK_COUNTERS(e, K);
	EXPECT_EQ(0, close(fds[0]));
	EXPECT_COND(e, 0, BLK_ZONE_COND_EMPTY);
	CHECK_COUNTERS(e, K - 1);
	fd = wopen(K);
	EXPECT_LE(0, fd);
	CHECK_COUNTERS(e, K);
	close(fd);
	for (i = 1; i < (int)K; i++)
		close(fds[i]);
	CHECK_COUNTERS(e, 0);
}

/*
 * Without an open limit, any number of files open for writing count as long as their
 * zones fit the active limit: full files (no command) beyond K opens are fine.
 * Fails if: zonefs invents an open limit from the active one.
 */
TEST_F(act, full_files_beyond_active_limit)
{
	struct eo *e = &self->e;
	int fds[32], i, n = K + 3;

	for (i = K; i < n; i++) {
		ASSERT_EQ(0, truncate(seq(i), e->d.cap_bytes));
	}
	for (i = 0; i < n; i++) {
		fds[i] = wopen(i);
		ASSERT_LE(0, fds[i]) TH_LOG("write-open %d: %s", i + 1, strerror(-fds[i]));
	}
	CHECK_COUNTERS(e, n);
	for (i = 0; i < n; i++)
		close(fds[i]);
	CHECK_COUNTERS(e, 0);
	EXPECT_EQ(0, fs_readonly());
}

/*
 * open(O_WRONLY | O_TRUNC) of a full file while every active zone is taken: the file's
 * writer needs a zone once the truncate has emptied it, and there is none, so open(2) must
 * fail with the device's EOVERFLOW, as the write-open of an empty file does; writes must
 * never be the ones to fail. Once an active zone is free, the same open succeeds and its
 * writes work.
 * Fails on stock 6.1 (patches/fixes/0017): open(2) succeeds, the first write fails with
 * EOVERFLOW (an implicit open) and errors=remount-ro makes the file system read-only.
 * Fails if: the truncate of a full file opened for writing does not open the zone.
 */
TEST_F(act, o_trunc_full_file_at_active_limit)
{
	struct eo *e = &self->e;
	int fds[32], i, fd;
	long r;

	ASSERT_EQ(0, truncate(seq(K), e->d.cap_bytes));
	for (i = 0; i < (int)K; i++) {
		fds[i] = wopen(i);
		ASSERT_LE(0, fds[i]) TH_LOG("write-open %d: %s", i + 1, strerror(-fds[i]));
	}
	fd = xopen(seq(K), O_WRONLY | O_DIRECT | O_TRUNC);
	if (fd >= 0) {
		r = append(e, fd, K, 4096);
		EXPECT_EQ(4096, r) TH_LOG("open(O_TRUNC) succeeded, then its write failed: %s",
					  r < 0 ? strerror(-r) : "short write");
		close(fd);
	}
	EXPECT_EQ(-EOVERFLOW, fd);
	EXPECT_EQ(0, fs_readonly());
	EXPECT_EQ(0, fsize(seq(K)));
	CHECK_COUNTERS(e, K);
	EXPECT_EQ(0, close(fds[0]));
	fd = xopen(seq(K), O_WRONLY | O_DIRECT | O_TRUNC);
	ASSERT_LE(0, fd) TH_LOG("%s", strerror(-fd));
	EXPECT_COND(e, K, BLK_ZONE_COND_EXP_OPEN);
	EXPECT_EQ(4096, append(e, fd, K, 4096));
	CHECK_COUNTERS(e, K);
	close(fd);
	for (i = 1; i < (int)K; i++)
		close(fds[i]);
	CHECK_COUNTERS(e, 0);
}

#undef K

/* ------------------------------------------------------------------------------------ */
/* A device without limits: the option is dropped at mount.                             */

FIXTURE(nolim) {
	struct eo e;
};

FIXTURE_SETUP(nolim)
{
	static const struct geom g = NB(0, 0, 0);

	eo_setup(_metadata, &self->e, &g, NULL, NULL);
}

FIXTURE_TEARDOWN(nolim)
{
	eo_teardown(_metadata, &self->e);
}

/*
 * explicit-open on a device with neither limit: the mount succeeds with a message saying
 * the option is ignored, and the file system behaves as without it: no zone commands,
 * any number of writers.
 * Fails if: the mount is refused; the option is kept (zones EXP_OPEN); no message.
 */
TEST_F(nolim, option_ignored)
{
	struct eo *e = &self->e;
	int fds[32], i, ret;

	zt_kmsg_mark();
	ret = zt_mount(e->d.nb.dev, MNT, 0, "explicit-open");
	ASSERT_EQ(0, ret) TH_LOG("mount -o explicit-open: %s", strerror(-ret));
	/*
	 * stock: "No open and active zone limits. Ignoring explicit_open mount option"; the
	 * words differ in ours: match what both say.
	 */
	EXPECT_EQ(1, zt_kmsg_grep2("gnor", NULL, 1));
	for (i = 0; i < 8; i++) {
		fds[i] = wopen(i);
		ASSERT_LE(0, fds[i]);
	}
	EXPECT_COND(e, 0, BLK_ZONE_COND_EMPTY);
	CHECK_COUNTERS(e, 8);
	EXPECT_EQ(4096, append(e, fds[0], 0, 4096));
	EXPECT_COND(e, 0, BLK_ZONE_COND_IMP_OPEN);
	for (i = 0; i < 8; i++)
		close(fds[i]);
	EXPECT_COND(e, 0, BLK_ZONE_COND_IMP_OPEN);
	CHECK_COUNTERS(e, 0);
}

/*
 * The limit check is made at mount only: a remount adds explicit-open even here, and
 * zones then get zone OPEN and CLOSE/RESET commands (stock does the same).
 * Fails if: remount repeats the mount-time check (or refuses the option).
 */
TEST_F(nolim, remount_adds_option)
{
	struct eo *e = &self->e;
	int fd;

	ASSERT_EQ(0, zt_mount(e->d.nb.dev, MNT, 0, "explicit-open"));
	ASSERT_EQ(0, remount("explicit-open"));
	fd = wopen(0);
	ASSERT_LE(0, fd);
	EXPECT_COND(e, 0, BLK_ZONE_COND_EXP_OPEN);
	CHECK_COUNTERS(e, 1);
	close(fd);
	EXPECT_COND(e, 0, BLK_ZONE_COND_EMPTY);
	CHECK_COUNTERS(e, 0);
}

/* ------------------------------------------------------------------------------------ */
/* Option parsing and display (null_blk, max_open 4, max_active 6).                    */

FIXTURE(opts) {
	struct eo e;
};

FIXTURE_SETUP(opts)
{
	static const struct geom g = NB(4, 6, 0);

	eo_setup(_metadata, &self->e, &g, NULL, NULL);
}

FIXTURE_TEARDOWN(opts)
{
	eo_teardown(_metadata, &self->e);
}

/*
 * The token is exactly "explicit-open": any other spelling, a value, or an unknown token
 * beside it fails the mount with EINVAL; the token itself mounts.
 * Fails if: the match is a prefix or case-insensitive match; unknown tokens are ignored.
 */
TEST_F(opts, unknown_options_einval)
{
	static const char *const bad[] = {
		"explicit-open=1", "Explicit-open", "explicit_open", "explicit", "explicit-opened",
		"noexplicit-open", "explicit-open,bogus", "errors=ro,explicit-open",
		"explicit-open=", " explicit-open",
	};
	struct eo *e = &self->e;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, zt_mount(e->d.nb.dev, MNT, 0, bad[i]))
			TH_LOG("mount -o '%s'", bad[i]);
		umount(MNT);
	}
	EXPECT_EQ(0, zt_mount(e->d.nb.dev, MNT, 0, "explicit-open"));
}

/*
 * Empty items are skipped, the token may come anywhere and twice.
 * Fails if: the parser refuses empty items or a repeated token.
 */
TEST_F(opts, empty_items_and_repeats)
{
	static const char *const good[] = {
		"errors=repair,explicit-open,,", ",explicit-open", "explicit-open,explicit-open",
		",,explicit-open,,errors=zone-ro",
	};
	struct eo *e = &self->e;
	unsigned int i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(good); i++) {
		ASSERT_EQ(0, zt_mount(e->d.nb.dev, MNT, 0, good[i])) TH_LOG("-o '%s'", good[i]);
		fd = wopen(i);
		ASSERT_LE(0, fd);
		EXPECT_COND(e, i, BLK_ZONE_COND_EXP_OPEN);
		close(fd);
		ASSERT_EQ(0, umount(MNT));
	}
}

/*
 * A remount with a bad token fails with EINVAL, but the tokens before it are applied
 * already (as stock: the options are parsed into the live mount): here explicit-open.
 * Fails if: our parsing changes the order of applying (explicit-open not in effect), or a
 * bad remount is not refused.
 */
TEST_F(opts, remount_bad_option)
{
	struct eo *e = &self->e;
	int fd;

	ASSERT_EQ(0, zt_mount(e->d.nb.dev, MNT, 0, NULL));
	EXPECT_EQ(-EINVAL, remount("errors=zone-ro,explicit-open,bogus"));
	EXPECT_EQ(1, has_opt("errors=zone-ro"));
	fd = wopen(0);
	ASSERT_LE(0, fd);
	EXPECT_COND(e, 0, BLK_ZONE_COND_EXP_OPEN);
	close(fd);
}

/*
 * Ours on purpose (stock shows only errors=): /proc/mounts shows explicit-open while it is
 * in effect: after a mount with it, after a remount that adds it, not after a mount
 * without it, nor where the mount dropped it (no limits). Fails on stock (STOCK_FAILS).
 * Fails if: show_options() does not print it, or prints it from the mount string rather
 * than the option in effect.
 */
TEST_F(opts, proc_mounts_shows_option)
{
	struct eo *e = &self->e;
	static const struct geom g = NB(0, 0, 0);
	struct eo nl = { 0 };

	ASSERT_EQ(0, zt_mount(e->d.nb.dev, MNT, 0, "explicit-open"));
	EXPECT_EQ(1, has_opt("explicit-open")) TH_LOG("shown: %s", mount_opts());
	EXPECT_EQ(1, has_opt("errors=remount-ro")) TH_LOG("shown: %s", mount_opts());
	ASSERT_EQ(0, umount(MNT));
	ASSERT_EQ(0, zt_mount(e->d.nb.dev, MNT, 0, NULL));
	EXPECT_EQ(0, has_opt("explicit-open"));
	ASSERT_EQ(0, remount("explicit-open"));
	EXPECT_EQ(1, has_opt("explicit-open")) TH_LOG("after remount: %s", mount_opts());
	ASSERT_EQ(0, remount("errors=repair"));
	EXPECT_EQ(1, has_opt("explicit-open")) TH_LOG("after remount: %s", mount_opts());
	ASSERT_EQ(0, umount(MNT));

	/* a device without limits: dropped, so not shown */
	nullb_destroy(&e->d.nb);
	eo_setup(_metadata, &nl, &g, NULL, "explicit-open");
	EXPECT_EQ(0, has_opt("explicit-open")) TH_LOG("shown: %s", mount_opts());
	zt_cleanup_mount(MNT);
	nullb_destroy(&nl.d.nb);
	free(nl.buf);
}

/*
 * zonefs mounts need CAP_SYS_ADMIN in the initial namespace: uid 1000 gets EPERM, with
 * the option or without.
 */
TEST_F(opts, unprivileged_mount_eperm)
{
	struct eo *e = &self->e;
	int r1, r2;

	as_user();
	r1 = zt_mount(e->d.nb.dev, MNT, 0, "explicit-open");
	r2 = zt_mount(e->d.nb.dev, MNT, 0, NULL);
	as_root();
	EXPECT_EQ(-EPERM, r1);
	EXPECT_EQ(-EPERM, r2);
}

/*
 * Every mount starts with no zone open, so that the write-open count and the device agree:
 * an implicitly open zone left by an earlier mount is closed, an empty zone explicitly
 * opened past zonefs is reset (stock 6.1 does this with or without the option; the
 * explicit-open accounting relies on it). With the zones closed, N write-opens succeed.
 * Fails if: the option's mount path skips the closing (the device could refuse later
 * zone OPENs with ETOOMANYREFS below the limit).
 */
TEST_F(opts, mount_closes_open_zones)
{
	struct eo *e = &self->e;
	int fds[8], i, fd;

	ASSERT_EQ(0, zt_mount(e->d.nb.dev, MNT, 0, NULL));
	fd = wopen(0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(4096, append(e, fd, 0, 4096));
	close(fd);
	ASSERT_EQ(0, umount(MNT));
	EXPECT_COND(e, 0, BLK_ZONE_COND_IMP_OPEN);
	for (i = 10; i < 13; i++) {
		ASSERT_EQ(0, zdev_zone_op(&e->d, BLKOPENZONE, i));
	}
	ASSERT_EQ(0, zt_mount(e->d.nb.dev, MNT, 0, "explicit-open"));
	EXPECT_COND(e, 0, BLK_ZONE_COND_CLOSED);
	EXPECT_COND(e, 10, BLK_ZONE_COND_EMPTY);
	CHECK_COUNTERS(e, 0);
	EXPECT_EQ(1, ctr(e, "nr_active_seq_files"));
	for (i = 1; i <= 4; i++) {
		fds[i] = wopen(i);
		EXPECT_LE(0, fds[i]) TH_LOG("write-open %d: %s", i, strerror(-fds[i]));
	}
	CHECK_COUNTERS(e, 4);
	for (i = 1; i <= 4; i++)
		close(fds[i]);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * Regression test for patches/fixes/0001: synchronous direct writes to sequential zone files.
 *
 * On Debian's 6.1.192 as shipped, a synchronous O_DIRECT write (pwrite, write, pwritev2) to a
 * sequential zone file fails with EIO: zonefs advances the file's write pointer offset before
 * the write is issued (the 6.1.79 backport of upstream's "zonefs: Improve error handling"),
 * but the zone append path that 6.1 still uses for synchronous writes then checks the sector
 * the device wrote at against that already advanced offset, logs "Corrupted write pointer"
 * and fails the write; the error handling then finds the data on the device beyond the file
 * size, hides it (errors=remount-ro, the default, makes the file system read-only), and the
 * zone is left active on the device while zonefs counts it as inactive.  Asynchronous direct
 * writes (io_submit) take the iomap path and work.
 *
 * The explicit-open cases are skipped where the option does not exist (the baseline kernel).
 * Each case makes its own zoned null_blk device (1 conventional zone for the super block, 15
 * sequential 4 MiB zones, at most 4 open and 6 active zones), formats it with ./mkzonefs and
 * mounts it, without and with explicit-open.  Checked after every step: the return value, the
 * file size, the zone's write pointer and condition from BLKREPORTZONE, the data read back,
 * the file system still writable, no "Corrupted write pointer" / "invalid size" in the kernel
 * log, and the sysfs counters: nr_wro_seq_files equal to the sequential files open for
 * writing, and nr_active_seq_files equal to the zones the device reports active (implicitly
 * or explicitly open, or closed).
 */
#define _GNU_SOURCE
#include <linux/aio_abi.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "kselftest_harness.h"
#include "zonefs_util.h"

#define MNT		"/mnt/zfs-dio"
#define ZONE_MB		4
#define ZONE_BYTES	((off_t)ZONE_MB << 20)
#define NR_ZONES	16
#define NR_CONV		1
#define MAX_OPEN	4
#define MAX_ACTIVE	6

FIXTURE(zfs) {
	struct nullb nb;
	char *buf;
	char *rbuf;
};

FIXTURE_VARIANT(zfs) {
	const char *opts;
};

FIXTURE_VARIANT_ADD(zfs, default_opts) {
	.opts = NULL,
};

FIXTURE_VARIANT_ADD(zfs, explicit_open) {
	.opts = "explicit-open",
};

#define BUFSZ	(4 << 20)

FIXTURE_SETUP(zfs)
{
	struct nullb_cfg c = {
		.size_mb = NR_ZONES * ZONE_MB, .zone_size_mb = ZONE_MB,
		.zone_nr_conv = NR_CONV, .zone_max_open = MAX_OPEN,
		.zone_max_active = MAX_ACTIVE,
	};
	int ret;

	umount(MNT);	/* a leftover of a case whose set-up failed */
	ret = nullb_create(&self->nb, "zfs-dio", &c);

	if (ret == -ENOENT)
		ZT_SETUP_SKIP("no configfs null_blk (CONFIG_BLK_DEV_NULL_BLK, CONFIGFS_FS)");
	ASSERT_EQ(0, ret) TH_LOG("nullb_create: %s", strerror(-ret));
	ASSERT_EQ(0, zt_mkzonefs(self->nb.dev, NULL));
	ret = zt_mount(self->nb.dev, MNT, 0, variant->opts);
	/* The baseline kernel has no explicit-open: the fix is tested there without it. */
	if (ret == -EINVAL && variant->opts) {
		nullb_destroy(&self->nb);
		ZT_SETUP_SKIP("mount -o %s: EINVAL (option not supported)", variant->opts);
	}
	ASSERT_EQ(0, ret) TH_LOG("mount -o %s: %s", variant->opts ?: "", strerror(-ret));
	ASSERT_EQ(0, posix_memalign((void **)&self->buf, 4096, BUFSZ));
	ASSERT_EQ(0, posix_memalign((void **)&self->rbuf, 4096, BUFSZ));
	zt_kmsg_mark();
}

FIXTURE_TEARDOWN(zfs)
{
	/* Show what the kernel said, for the log of a failing case. */
	zt_kmsg_grep("", 1);
	zt_cleanup_mount(MNT);
	nullb_destroy(&self->nb);
	free(self->buf);
	free(self->rbuf);
}

/* On CPU 0 only: zt_pin_cpu() says why (the counters are read right after closes). */
static void __attribute__((constructor)) pin_cpu0(void)
{
	zt_pin_cpu(0);
}

static void fill(char *buf, size_t len, off_t pos)
{
	size_t i;

	for (i = 0; i < len; i += 8)
		*(uint64_t *)(buf + i) = 0x5a4f4653ULL << 32 | (uint64_t)(pos + i);
}

static const char *seq_path(int n)
{
	static char p[64];

	snprintf(p, sizeof(p), MNT "/seq/%d", n);
	return p;
}

/* The device zone behind seq/@n. */
static int seq_zone(struct nullb *nb, int n, struct blk_zone *z)
{
	return zt_report_zone_nr(nb->dev, NR_CONV + n, z);
}

static int zone_active(const struct blk_zone *z)
{
	return z->cond == BLK_ZONE_COND_IMP_OPEN || z->cond == BLK_ZONE_COND_EXP_OPEN ||
	       z->cond == BLK_ZONE_COND_CLOSED;
}

static int device_active_zones(struct nullb *nb)
{
	struct blk_zone z = { 0 };
	int n, active = 0;

	for (n = 0; n < NR_ZONES - NR_CONV; n++) {
		if (seq_zone(nb, n, &z))
			return -1;
		active += zone_active(&z);
	}
	return active;
}

static int fs_readonly(void)
{
	struct statvfs sv;

	if (statvfs(MNT, &sv))
		return -1;
	return !!(sv.f_flag & ST_RDONLY);
}

/* Everything that must hold after a good write: size, write pointer, data, log, state. */
static void check_file(struct __test_metadata *_metadata, FIXTURE_DATA(zfs) *self,
		       int n, off_t size)
{
	struct blk_zone z = { 0 };
	struct stat st;
	int fd;

	ASSERT_EQ(0, stat(seq_path(n), &st));
	EXPECT_EQ(size, st.st_size);
	ASSERT_EQ(0, seq_zone(&self->nb, n, &z));
	EXPECT_EQ(size >> 9, (off_t)(z.wp - z.start))
		TH_LOG("seq/%d: zone write pointer at +%llu sectors, file size %lld", n,
		       (unsigned long long)(z.wp - z.start), (long long)st.st_size);
	if (size == ZONE_BYTES) {
		EXPECT_EQ(BLK_ZONE_COND_FULL, z.cond);
	}
	EXPECT_EQ(0, fs_readonly()) TH_LOG("the file system went read-only");
	/* zonefs_warn()/zonefs_err(): "Corrupted write pointer", "invalid size", ... */
	EXPECT_EQ(0, zt_kmsg_grep2(") WARNING: ", ") ERROR: ", 1));
	zt_kmsg_mark();

	if (size) {
		off_t len = size > BUFSZ ? BUFSZ : size;

		fd = open(seq_path(n), O_RDONLY | O_DIRECT);
		ASSERT_LE(0, fd);
		ASSERT_EQ(len, pread(fd, self->rbuf, len, 0));
		close(fd);
		fill(self->buf, len, 0);
		EXPECT_EQ(0, memcmp(self->buf, self->rbuf, len))
			TH_LOG("seq/%d: data read back differs", n);
	}
}

static void check_counters(struct __test_metadata *_metadata, FIXTURE_DATA(zfs) *self,
			   int writers)
{
	EXPECT_EQ(writers, zt_sysfs(&self->nb, "nr_wro_seq_files"));
	EXPECT_EQ(device_active_zones(&self->nb), zt_sysfs(&self->nb, "nr_active_seq_files"))
		TH_LOG("zonefs active count differs from the zones the device has active");
}

/* The bug report's case: one 4 KiB pwrite to an O_DIRECT|O_WRONLY fd of seq/0. */
TEST_F(zfs, sync_pwrite_4k)
{
	int fd = open(seq_path(0), O_WRONLY | O_DIRECT);

	ASSERT_LE(0, fd);
	fill(self->buf, 4096, 0);
	EXPECT_EQ(4096, pwrite(fd, self->buf, 4096, 0)) TH_LOG("pwrite: %s", strerror(errno));
	check_counters(_metadata, self, 1);
	fill(self->buf, 4096, 4096);
	EXPECT_EQ(4096, pwrite(fd, self->buf, 4096, 4096)) TH_LOG("pwrite: %s", strerror(errno));
	ASSERT_EQ(0, close(fd));
	check_file(_metadata, self, 0, 8192);
	check_counters(_metadata, self, 0);
}

/* write() at the file position, and O_APPEND, and pwritev2 with RWF_DSYNC. */
TEST_F(zfs, sync_write_append_dsync)
{
	struct iovec iov;
	int fd = open(seq_path(1), O_WRONLY | O_DIRECT);

	ASSERT_LE(0, fd);
	fill(self->buf, 3 * 8192, 0);
	EXPECT_EQ(8192, write(fd, self->buf, 8192)) TH_LOG("write: %s", strerror(errno));
	EXPECT_EQ(8192, lseek(fd, 0, SEEK_CUR));
	ASSERT_EQ(0, close(fd));
	fd = open(seq_path(1), O_WRONLY | O_DIRECT | O_APPEND);
	ASSERT_LE(0, fd);
	EXPECT_EQ(8192, write(fd, self->buf + 8192, 8192)) TH_LOG("append: %s", strerror(errno));
	iov.iov_base = self->buf + 16384;
	iov.iov_len = 8192;
	EXPECT_EQ(8192, pwritev2(fd, &iov, 1, 16384, RWF_DSYNC))
		TH_LOG("pwritev2 RWF_DSYNC: %s", strerror(errno));
	ASSERT_EQ(0, close(fd));
	check_file(_metadata, self, 1, 3 * 8192);
	check_counters(_metadata, self, 0);
}

/*
 * One synchronous write larger than a single bio can carry (256 pages): the write must be
 * whole, not short or failed; then fill the zone to its end with sync writes.
 */
TEST_F(zfs, sync_large_and_fill)
{
	off_t pos = 0;
	int fd = open(seq_path(2), O_WRONLY | O_DIRECT);

	ASSERT_LE(0, fd);
	fill(self->buf, 2 << 20, 0);
	EXPECT_EQ(2 << 20, pwrite(fd, self->buf, 2 << 20, 0)) TH_LOG("%s", strerror(errno));
	pos = 2 << 20;
	check_file(_metadata, self, 2, pos);
	check_counters(_metadata, self, 1);
	while (pos < ZONE_BYTES) {
		fill(self->buf, 1 << 20, pos);
		ASSERT_EQ(1 << 20, pwrite(fd, self->buf, 1 << 20, pos))
			TH_LOG("at %lld: %s", (long long)pos, strerror(errno));
		pos += 1 << 20;
	}
	/* Full: one more byte is EFBIG, as for any write at the capacity. */
	EXPECT_EQ(-1, pwrite(fd, self->buf, 4096, pos));
	EXPECT_EQ(EFBIG, errno);
	check_counters(_metadata, self, 1);
	ASSERT_EQ(0, close(fd));
	/* check_file() compares the first BUFSZ bytes; the whole zone was written. */
	check_file(_metadata, self, 2, ZONE_BYTES);
	check_counters(_metadata, self, 0);
}

static long io_setup(unsigned int nr, aio_context_t *ctx)
{
	return syscall(__NR_io_setup, nr, ctx);
}

static long io_submit(aio_context_t ctx, long nr, struct iocb **iocbs)
{
	return syscall(__NR_io_submit, ctx, nr, iocbs);
}

static long io_getevents(aio_context_t ctx, long min, long max, struct io_event *ev)
{
	return syscall(__NR_io_getevents, ctx, min, max, ev, NULL);
}

static long io_destroy(aio_context_t ctx)
{
	return syscall(__NR_io_destroy, ctx);
}

/* Asynchronous direct writes: several in flight, in order. They work on stock too. */
TEST_F(zfs, async_writes)
{
	struct iocb cbs[4], *cbp[4];
	struct io_event ev[4];
	aio_context_t ctx = 0;
	int fd, i, got = 0;

	fd = open(seq_path(3), O_WRONLY | O_DIRECT);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, io_setup(4, &ctx));
	fill(self->buf, 4 * 65536, 0);
	for (i = 0; i < 4; i++) {
		memset(&cbs[i], 0, sizeof(cbs[i]));
		cbs[i].aio_fildes = fd;
		cbs[i].aio_lio_opcode = IOCB_CMD_PWRITE;
		cbs[i].aio_buf = (uintptr_t)(self->buf + i * 65536);
		cbs[i].aio_nbytes = 65536;
		cbs[i].aio_offset = i * 65536;
		cbs[i].aio_data = i;
		cbp[i] = &cbs[i];
	}
	ASSERT_EQ(4, io_submit(ctx, 4, cbp)) TH_LOG("io_submit: %s", strerror(errno));
	while (got < 4) {
		long n = io_getevents(ctx, 1, 4 - got, ev + got);

		ASSERT_LT(0, n);
		got += n;
	}
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(65536, (long)ev[i].res) TH_LOG("aio %llu: res %lld",
			(unsigned long long)ev[i].data, (long long)ev[i].res);
	}
	io_destroy(ctx);
	check_counters(_metadata, self, 1);
	ASSERT_EQ(0, close(fd));
	check_file(_metadata, self, 3, 4 * 65536);
	check_counters(_metadata, self, 0);
}

/* Sync, then async, then sync again on the same file. */
TEST_F(zfs, sync_async_mixed)
{
	struct iocb cb, *cbp = &cb;
	struct io_event ev;
	aio_context_t ctx = 0;
	int fd;

	fd = open(seq_path(4), O_WRONLY | O_DIRECT);
	ASSERT_LE(0, fd);
	fill(self->buf, 3 * 4096, 0);
	EXPECT_EQ(4096, pwrite(fd, self->buf, 4096, 0)) TH_LOG("pwrite: %s", strerror(errno));
	ASSERT_EQ(0, io_setup(1, &ctx));
	memset(&cb, 0, sizeof(cb));
	cb.aio_fildes = fd;
	cb.aio_lio_opcode = IOCB_CMD_PWRITE;
	cb.aio_buf = (uintptr_t)(self->buf + 4096);
	cb.aio_nbytes = 4096;
	cb.aio_offset = 4096;
	ASSERT_EQ(1, io_submit(ctx, 1, &cbp));
	ASSERT_EQ(1, io_getevents(ctx, 1, 1, &ev));
	EXPECT_EQ(4096, (long)ev.res);
	io_destroy(ctx);
	EXPECT_EQ(4096, pwrite(fd, self->buf + 8192, 4096, 8192))
		TH_LOG("pwrite: %s", strerror(errno));
	ASSERT_EQ(0, close(fd));
	check_file(_metadata, self, 4, 3 * 4096);
	check_counters(_metadata, self, 0);
}

/*
 * Several files written with sync writes and closed: no writer left, and zonefs counts as
 * active exactly the zones the device has active; the same after a remount.
 */
TEST_F(zfs, counters_after_close)
{
	int fds[3], i;

	for (i = 0; i < 3; i++) {
		fds[i] = open(seq_path(5 + i), O_WRONLY | O_DIRECT);
		ASSERT_LE(0, fds[i]);
	}
	check_counters(_metadata, self, 3);
	for (i = 0; i < 3; i++) {
		fill(self->buf, 4096, 0);
		EXPECT_EQ(4096, pwrite(fds[i], self->buf, 4096, 0))
			TH_LOG("seq/%d: %s", 5 + i, strerror(errno));
	}
	check_counters(_metadata, self, 3);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, close(fds[i]));
	}
	check_counters(_metadata, self, 0);
	EXPECT_EQ(3, zt_sysfs(&self->nb, "nr_active_seq_files"));
	for (i = 0; i < 3; i++)
		check_file(_metadata, self, 5 + i, 4096);

	/* A remount counts from the device: the same figures. */
	ASSERT_EQ(0, umount(MNT));
	ASSERT_EQ(0, zt_mount(self->nb.dev, MNT, 0, variant->opts));
	check_counters(_metadata, self, 0);
	EXPECT_EQ(3, zt_sysfs(&self->nb, "nr_active_seq_files"));
}

/* Truncate to 0 after sync writes: the zone is empty and no longer counted. */
TEST_F(zfs, truncate_after_sync_write)
{
	struct blk_zone z = { 0 };
	int fd = open(seq_path(8), O_WRONLY | O_DIRECT);

	ASSERT_LE(0, fd);
	fill(self->buf, 8192, 0);
	EXPECT_EQ(8192, pwrite(fd, self->buf, 8192, 0)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, ftruncate(fd, 0));
	check_counters(_metadata, self, 1);
	ASSERT_EQ(0, close(fd));
	ASSERT_EQ(0, seq_zone(&self->nb, 8, &z));
	EXPECT_EQ(BLK_ZONE_COND_EMPTY, z.cond);
	check_file(_metadata, self, 8, 0);
	check_counters(_metadata, self, 0);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * The group's zonefs formatter (./mkzonefs) against the kernel that reads what it writes.
 *
 * The reference is zonefs_read_super() and zonefs_fill_super() of Debian's 6.1:
 *  - the super block is the 4 KiB block at sector 0; zone 0 is never a file, whatever its
 *    type; a sequential zone 0 is left full by the formatter;
 *  - the magic is checked first, then a CRC32 of the block with s_crc zeroed (crc32_le seeded
 *    with ~0, no final inversion), then the features (unknown bits refused), the uid/gid, and
 *    a reserved area that must be all zeroes; every refusal is EINVAL from mount(2);
 *  - F_UID, F_GID and F_PERM set the owner and mode of every file; F_AGGRCNV makes one file
 *    of contiguous conventional zones; the uuid folds into statfs' f_fsid.
 * Each test makes its own zoned null_blk device through configfs (4 MiB zones).
 */
#define _GNU_SOURCE
#include <sys/statfs.h>
#include <sys/vfs.h>
#include <dirent.h>
#include <endian.h>

#include "kselftest_harness.h"
#include "zonefs_util.h"

#define MNT		"/mnt/zfs-mk"
#define ZONE_MB		4
#define ZONE_BYTES	((off_t)ZONE_MB << 20)
#ifndef ZONEFS_MAGIC
#define ZONEFS_MAGIC	0x5a4f4653
#endif

FIXTURE(dev) {
	struct nullb nb;
};

FIXTURE_VARIANT(dev) {
	unsigned int nr_conv;
};

/* Zone 0 conventional (and one conventional file zone). */
FIXTURE_VARIANT_ADD(dev, conv) {
	.nr_conv = 2,
};

/* No conventional zone at all: the super block lives in a sequential zone 0. */
FIXTURE_VARIANT_ADD(dev, seq) {
	.nr_conv = 0,
};

FIXTURE_SETUP(dev)
{
	struct nullb_cfg c = {
		.size_mb = 16 * ZONE_MB, .zone_size_mb = ZONE_MB,
		.zone_nr_conv = variant->nr_conv,
	};
	int ret;

	umount(MNT);	/* a leftover of a case whose set-up failed */
	ret = nullb_create(&self->nb, "zfs-mk", &c);

	if (ret == -ENOENT)
		ZT_SETUP_SKIP("no configfs null_blk (CONFIG_BLK_DEV_NULL_BLK, CONFIGFS_FS)");
	ASSERT_EQ(0, ret) TH_LOG("nullb_create: %s", strerror(-ret));
	zt_kmsg_mark();
}

FIXTURE_TEARDOWN(dev)
{
	zt_cleanup_mount(MNT);
	nullb_destroy(&self->nb);
}

static int count_files(const char *dir)
{
	struct dirent *d;
	DIR *dp = opendir(dir);
	int n = 0;

	if (!dp)
		return -errno;
	while ((d = readdir(dp)))
		if (d->d_name[0] != '.')
			n++;
	closedir(dp);
	return n;
}

/* What mkzonefs writes, the kernel mounts: files, sizes, zone 0 left alone. */
TEST_F(dev, format_and_mount)
{
	struct blk_zone z = { 0 };
	struct statfs sfs;
	struct stat st;

	ASSERT_EQ(0, zt_mkzonefs(self->nb.dev, NULL));
	ASSERT_EQ(0, zt_mount(self->nb.dev, MNT, 0, NULL)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, statfs(MNT, &sfs));
	EXPECT_EQ(ZONEFS_MAGIC, sfs.f_type);
	/* 16 zones; zone 0, conventional or not, is the super block. */
	EXPECT_EQ(16 - (int)(variant->nr_conv ?: 1), count_files(MNT "/seq"));
	if (variant->nr_conv > 1) {
		EXPECT_EQ((int)variant->nr_conv - 1, count_files(MNT "/cnv"));
		ASSERT_EQ(0, stat(MNT "/cnv/0", &st));
		EXPECT_EQ(ZONE_BYTES, st.st_size);
	} else {
		EXPECT_EQ(-1, stat(MNT "/cnv", &st));
		EXPECT_EQ(ENOENT, errno);
	}
	ASSERT_EQ(0, stat(MNT "/seq/0", &st));
	EXPECT_EQ(0, st.st_size);
	EXPECT_EQ(0640, st.st_mode & 07777);
	EXPECT_EQ(0, st.st_uid);
	EXPECT_EQ(0, st.st_gid);

	ASSERT_EQ(0, zt_report_zone_nr(self->nb.dev, 0, &z));
	if (variant->nr_conv) {
		EXPECT_EQ(BLK_ZONE_TYPE_CONVENTIONAL, z.type);
	} else {
		EXPECT_EQ(BLK_ZONE_COND_FULL, z.cond)
			TH_LOG("a sequential zone 0 must be left full, cond 0x%x", z.cond);
	}
	EXPECT_EQ(0, zt_kmsg_grep("ERROR", 1));
}

/* The block at sector 0 is what struct zonefs_super says, CRC included. */
TEST_F(dev, on_disk_layout)
{
	static const char uuid[] = "0123456789abcdef0011223344556677";
	unsigned char *b;
	uint32_t crc, stored;
	struct statfs sfs;
	uint64_t lo, hi;
	int fd, i, j;

	ASSERT_EQ(0, zt_mkzonefs(self->nb.dev, "-L test-label -U %s -f perm=600", uuid));
	ASSERT_EQ(0, posix_memalign((void **)&b, 4096, 4096));
	fd = open(self->nb.dev, O_RDONLY | O_DIRECT);
	ASSERT_LE(0, fd);
	ASSERT_EQ(4096, pread(fd, b, 4096, 0));
	close(fd);
	EXPECT_EQ(ZONEFS_MAGIC, le32toh(*(uint32_t *)b));
	EXPECT_EQ(0, memcmp(b + 8, "test-label", 11));
	EXPECT_EQ(0x01, b[72]);
	EXPECT_EQ(0x77, b[87]);
	EXPECT_EQ(1ULL << 3, le64toh(*(uint64_t *)(b + 88)));	/* ZONEFS_F_PERM */
	EXPECT_EQ(0600, le32toh(*(uint32_t *)(b + 104)));
	for (i = 108; i < 4096; i++)
		if (b[i])
			break;
	EXPECT_EQ(4096, i) TH_LOG("reserved byte %d is 0x%x", i, b[i]);
	/* An independent CRC: the kernel's crc32(~0U, sb) over the block with s_crc = 0. */
	stored = le32toh(*(uint32_t *)(b + 4));
	memset(b + 4, 0, 4);
	crc = ~0U;
	for (i = 0; i < 4096; i++) {
		crc ^= b[i];
		for (j = 0; j < 8; j++)
			crc = (crc & 1) ? (crc >> 1) ^ 0xedb88320U : crc >> 1;
	}
	EXPECT_EQ(crc, stored);
	free(b);

	ASSERT_EQ(0, zt_mount(self->nb.dev, MNT, 0, NULL));
	ASSERT_EQ(0, statfs(MNT, &sfs));
	/* uuid_to_fsid(): the two little-endian halves of the uuid, xored. */
	lo = __builtin_bswap64(0x0123456789abcdefULL);	/* bytes 01 23 .. ef, read LE */
	hi = __builtin_bswap64(0x0011223344556677ULL);
	EXPECT_EQ((uint32_t)(lo ^ hi), (uint32_t)sfs.f_fsid.__val[0]);
	EXPECT_EQ((uint32_t)((lo ^ hi) >> 32), (uint32_t)sfs.f_fsid.__val[1]);
}

static void expect_refused(struct __test_metadata *_metadata, struct nullb *nb,
			   const char *args, const char *kmsg)
{
	ASSERT_EQ(0, zt_mkzonefs(nb->dev, "%s", args));
	zt_kmsg_mark();
	EXPECT_EQ(-EINVAL, zt_mount(nb->dev, MNT, 0, NULL))
		TH_LOG("mkzonefs %s: mount must fail with EINVAL", args);
	/* A good super block over it mounts again. */
	ASSERT_EQ(0, zt_mkzonefs(nb->dev, NULL));
	EXPECT_EQ(0, zt_mount(nb->dev, MNT, 0, NULL));
	/*
	 * Read the log after that mount: stock's "Invalid checksum" message has no newline,
	 * so it only reaches /dev/kmsg as a record when the next message is printed.
	 */
	if (kmsg) {
		EXPECT_LT(0, zt_kmsg_grep(kmsg, 1)) TH_LOG("no '%s' in the kernel log", kmsg);
	}
	umount(MNT);
}

TEST_F(dev, bad_crc_refused)
{
	expect_refused(_metadata, &self->nb, "-C crc", "Invalid checksum");
}

/* The magic is checked before the CRC, silently. */
TEST_F(dev, bad_magic_refused)
{
	expect_refused(_metadata, &self->nb, "-C magic", NULL);
}

TEST_F(dev, reserved_area_refused)
{
	expect_refused(_metadata, &self->nb, "-C reserved", "Reserved area is being used");
}

TEST_F(dev, unknown_feature_refused)
{
	expect_refused(_metadata, &self->nb, "-f 0x10", "Unknown features set 0x10");
}

/* uid/gid/perm features set every file's owner and mode. */
TEST_F(dev, uid_gid_perm)
{
	struct stat st;

	ASSERT_EQ(0, zt_mkzonefs(self->nb.dev, "-f uid=1000,gid=1001,perm=0604"));
	ASSERT_EQ(0, zt_mount(self->nb.dev, MNT, 0, NULL));
	ASSERT_EQ(0, stat(MNT "/seq/3", &st));
	EXPECT_EQ(1000, st.st_uid);
	EXPECT_EQ(1001, st.st_gid);
	EXPECT_EQ(0604, st.st_mode & 07777);
	if (variant->nr_conv > 1) {
		ASSERT_EQ(0, stat(MNT "/cnv/0", &st));
		EXPECT_EQ(0604, st.st_mode & 07777);
	}
}

/* aggr_cnv: the conventional zones after zone 0 make a single file. */
TEST_F(dev, aggr_cnv)
{
	struct stat st;

	if (variant->nr_conv < 2)
		SKIP(return, "needs conventional file zones");
	ASSERT_EQ(0, zt_mkzonefs(self->nb.dev, "-o aggr_cnv"));
	ASSERT_EQ(0, zt_mount(self->nb.dev, MNT, 0, NULL));
	EXPECT_EQ(1, count_files(MNT "/cnv"));
	ASSERT_EQ(0, stat(MNT "/cnv/0", &st));
	EXPECT_EQ((off_t)(variant->nr_conv - 1) * ZONE_BYTES, st.st_size);
}

/* Formatting empties sequential zones written before; -n leaves them. */
TEST_F(dev, format_resets_sequential_zones)
{
	/* seq/1: the second sequential zone after zone 0 and the conventional ones. */
	unsigned int zn = (variant->nr_conv ? variant->nr_conv : 1) + 1;
	struct blk_zone z = { 0 };
	struct stat st;
	void *buf;
	int fd;

	ASSERT_EQ(0, posix_memalign(&buf, 4096, 8192));
	memset(buf, 0xa5, 8192);
	ASSERT_EQ(0, zt_report_zone_nr(self->nb.dev, zn, &z));
	fd = open(self->nb.dev, O_WRONLY | O_DIRECT);
	ASSERT_LE(0, fd);
	ASSERT_EQ(8192, pwrite(fd, buf, 8192, z.start << 9));
	close(fd);
	free(buf);

	ASSERT_EQ(0, zt_mkzonefs(self->nb.dev, "-n"));
	ASSERT_EQ(0, zt_mount(self->nb.dev, MNT, 0, NULL));
	ASSERT_EQ(0, stat(MNT "/seq/1", &st));
	EXPECT_EQ(8192, st.st_size);
	ASSERT_EQ(0, umount(MNT));

	ASSERT_EQ(0, zt_mkzonefs(self->nb.dev, NULL));
	ASSERT_EQ(0, zt_report_zone_nr(self->nb.dev, zn, &z));
	EXPECT_EQ(BLK_ZONE_COND_EMPTY, z.cond);
	ASSERT_EQ(0, zt_mount(self->nb.dev, MNT, 0, NULL));
	ASSERT_EQ(0, stat(MNT "/seq/1", &st));
	EXPECT_EQ(0, st.st_size);
}

/* mkzonefs refuses a device that is not zoned. */
TEST(not_zoned)
{
	struct nullb nb;
	char path[PATH_MAX];
	int ret;

	ret = zt_configfs();
	if (ret)
		SKIP(return, "no configfs");
	snprintf(path, sizeof(path), NULLB_CONFIGFS "/zfs-plain");
	rmdir(path);
	ASSERT_EQ(0, mkdir(path, 0755));
	snprintf(nb.name, sizeof(nb.name), "zfs-plain");
	ASSERT_EQ(0, zt_attr("zfs-plain", "size", 16));
	ASSERT_EQ(0, zt_attr("zfs-plain", "power", 1));
	snprintf(nb.dev, sizeof(nb.dev), "/dev/zfs-plain");
	usleep(100000);
	EXPECT_EQ(1, zt_mkzonefs(nb.dev, NULL));
	nullb_destroy(&nb);
}

TEST_HARNESS_MAIN

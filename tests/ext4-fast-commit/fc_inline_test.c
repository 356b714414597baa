// SPDX-License-Identifier: GPL-2.0
/*
 * A file with inline data (mke2fs -O inline_data,fast_commit) whose first block is
 * allocated by ext4_convert_inline_data(): truncate past the inline size, fallocate, or a
 * hole punched past the end (found by ext4-fast-commit-fuzz, seed 11 case 9 and seed 7
 * case 22: fsynced and sync()ed data read back as the old inline bytes and zeros).
 *
 * 6.1 writes the inline bytes into the new block as journalled metadata (through the block
 * device's buffer), while every later write to the block goes through the file's page cache
 * to its place on disk, outside the journal.  The logged copy is older than those writes:
 *  - cut:  conversion committed, then data written into the block and fsynced, then the
 *          power cut: the journal replay writes the logged copy back over the fsynced data;
 *  - sync: conversion, data written, syncfs: the commit dirties the block device's copy
 *          and the block device's writeback, after the file's, puts it over the data on
 *          disk; after a clean unmount and mount the data is gone, with no crash at all;
 *  - cold: the file's pages not cached (a fresh mount), the conversion, then a write into
 *          the block reads it from disk, where the inline bytes are not yet (only in the
 *          journal): they read back as zeros at once.
 * patches/fixes/0021 writes the block in place instead and waits for it, as data=ordered
 * orders file data before the commit that maps it.  Each row checks every byte of the file
 * against what was written, and e2fsck -fn after the crash rows.
 */
#include <linux/falloc.h>

#include "fc_util.h"
#include "kselftest_harness.h"

#define DISK FC_DIR "/idisk.img"
#define CRASH FC_DIR "/icrash.img"
#define FILE_PATH FC_MNT "/f"
#define INLINE_LEN 80		/* fits in i_block and the system.data xattr */
#define DATA_LEN 1000		/* written at INLINE_LEN, inside the first 4 KiB block */
#define BIG 8192		/* the truncate target */

enum trigger { BY_TRUNCATE, BY_FALLOCATE, BY_PUNCH };

/* The conversion: the file's inline data moved to its first block. */
static int convert(int fd, enum trigger how)
{
	switch (how) {
	case BY_TRUNCATE:
		return ftruncate(fd, BIG) ? -errno : 0;
	case BY_FALLOCATE:
		return fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 4096) ? -errno : 0;
	case BY_PUNCH:
		return fallocate(fd, FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE, 64 * 1024,
				 64 * 1024) ? -errno : 0;
	}
	return -EINVAL;
}

/* What the file must hold: the inline bytes, the data after them, zeros to the size. */
static void expected(enum trigger how, struct layout *l)
{
	memset(l, 0, sizeof(*l));
	l->s[0] = (struct seg){ 1, 0, INLINE_LEN };
	l->s[1] = (struct seg){ 2, INLINE_LEN, DATA_LEN };
	l->n = 2;
	if (how == BY_TRUNCATE) {
		l->s[2] = (struct seg){ 0, 0, BIG - INLINE_LEN - DATA_LEN };
		l->n = 3;
	}
}

/* Is the file's data inline?  FIEMAP's one extent is then flagged DATA_INLINE. */
static bool is_inline(const char *path)
{
	struct { struct fiemap f; struct fiemap_extent e[2]; } m;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ret;

	if (fd < 0)
		return false;
	memset(&m, 0, sizeof(m));
	m.f.fm_length = ~0ULL;
	m.f.fm_extent_count = 2;
	ret = !ioctl(fd, FS_IOC_FIEMAP, &m) && m.f.fm_mapped_extents == 1 &&
	      (m.e[0].fe_flags & FIEMAP_EXTENT_DATA_INLINE);
	close(fd);
	return ret;
}

FIXTURE(inl) {
	struct fcfs fs;
	int fd;
};

FIXTURE_VARIANT(inl) {
	enum trigger how;
};

FIXTURE_VARIANT_ADD(inl, truncate) { .how = BY_TRUNCATE };
FIXTURE_VARIANT_ADD(inl, fallocate) { .how = BY_FALLOCATE };
FIXTURE_VARIANT_ADD(inl, punch_past_end) { .how = BY_PUNCH };

FIXTURE_SETUP(inl)
{
	setlinebuf(stdout);
	self->fd = -1;
	self->fs.loop = -1;
	ASSERT_EQ(0, fc_start(&self->fs, "fast_commit,inline_data", 4096, DISK,
			      "commit=600"));
	ASSERT_EQ(0, pat_create(FILE_PATH, 0644, 1, INLINE_LEN));
	ASSERT_EQ(0, syncfs_path(FC_MNT));
	ASSERT_TRUE(is_inline(FILE_PATH)) TH_LOG("the file is not inline: no inline_data?");
}

FIXTURE_TEARDOWN(inl)
{
	if (self->fd >= 0)
		close(self->fd);
	fs_close(&self->fs);
	unlink(DISK);
	unlink(CRASH);
}

static void open_file(struct __test_metadata *_metadata, int *fd)
{
	*fd = open(FILE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, *fd);
}

static void check(struct __test_metadata *_metadata, const struct layout *l, const char *when)
{
	char why[256];
	int r = check_layout(FILE_PATH, l, why, sizeof(why));

	EXPECT_EQ(0, r) TH_LOG("%s: %s", when, why);
}

/* Conversion committed, data written into the block and fsynced, the power cut. */
TEST_F(inl, cut)
{
	struct layout l;
	int r;

	expected(variant->how, &l);
	open_file(_metadata, &self->fd);
	ASSERT_EQ(0, convert(self->fd, variant->how));
	ASSERT_FALSE(is_inline(FILE_PATH));
	ASSERT_EQ(0, syncfs_path(FC_MNT));
	ASSERT_EQ(0, pat_pwrite(self->fd, 2, INLINE_LEN, DATA_LEN));
	ASSERT_EQ(0, fsync(self->fd));
	check(_metadata, &l, "before the power cut");
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, fc_power_cut(&self->fs, CRASH));
	unlink(DISK);
	r = fs_open(&self->fs, CRASH, 0, "commit=600");
	ASSERT_EQ(0, r) TH_LOG("kernel replay: mount: %s", strerror(-r));
	check(_metadata, &l, "after the kernel's replay");
	fs_close(&self->fs);
	EXPECT_EQ(0, fsck_clean(CRASH, "kernel replay"));
}

/* Conversion, data written, syncfs, a clean unmount and mount: no crash. */
TEST_F(inl, sync)
{
	struct layout l;

	expected(variant->how, &l);
	open_file(_metadata, &self->fd);
	ASSERT_EQ(0, convert(self->fd, variant->how));
	ASSERT_EQ(0, pat_pwrite(self->fd, 2, INLINE_LEN, DATA_LEN));
	ASSERT_EQ(0, syncfs_path(FC_MNT));
	close(self->fd);
	self->fd = -1;
	fs_close(&self->fs);
	ASSERT_EQ(0, fs_open(&self->fs, DISK, 0, "commit=600"));
	check(_metadata, &l, "after syncfs, unmount and mount");
	fs_close(&self->fs);
	EXPECT_EQ(0, fsck_clean(DISK, "clean unmount"));
}

/* Nothing of the file cached: conversion, then a write into the block reads it first. */
TEST_F(inl, cold)
{
	struct layout l;

	expected(variant->how, &l);
	fs_close(&self->fs);
	ASSERT_EQ(0, fs_open(&self->fs, DISK, 0, "commit=600"));
	open_file(_metadata, &self->fd);
	ASSERT_EQ(0, convert(self->fd, variant->how));
	ASSERT_EQ(0, pat_pwrite(self->fd, 2, INLINE_LEN, DATA_LEN));
	check(_metadata, &l, "read back at once");
	ASSERT_EQ(0, fsync(self->fd));
	close(self->fd);
	self->fd = -1;
	fs_close(&self->fs);
	ASSERT_EQ(0, fs_open(&self->fs, DISK, 0, "commit=600"));
	check(_metadata, &l, "after fsync, unmount and mount");
}

TEST_HARNESS_MAIN

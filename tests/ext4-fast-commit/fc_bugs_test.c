// SPDX-License-Identifier: GPL-2.0
/*
 * Reproducers of bugs in stock 6.1's fast commits.  Not in the group's PROGS: every test here
 * fails on stock (and on any kernel carrying stock's fast commits unfixed) and passes on a
 * kernel without fast commits (baseline).  Once patches/fixes/ repairs them, add this program
 * to PROGS with STOCK_FAILS and BASELINE_PASSES naming it.
 *
 * 1. (Fast commits lost after a journal flush: moved to fc_log_test.c, whose
 *    freeze_thaw_then_fsync, checkpoint_then_fsync and resize_then_fsync rows fail on stock;
 *    patches/fixes/0011 mends it.)
 *
 * 2. (Passed on stock 6.1.192 when run on 2026-12-06; kept as a regression test.)
 *    A read-only mount cannot replay fast commits: mount -o ro of a file system whose journal
 *    holds a fast commit fails with EIO ("INFO: recovery required on readonly filesystem",
 *    "write access will be enabled during recovery", "JBD2: recovery failed", "error loading
 *    journal"), where a journal of full commits is replayed.  Test ro_mount_replay.
 *
 * 3. An inode whose last name is unlinked while the inode is still queued for the fast
 *    commit (the file still open, or another thread's fast commit running between the unlink
 *    and the eviction): the fast commit holds [DEL_ENTRY name, ..., INODE n] with the raw
 *    inode at nlink 0; the replay frees the inode on the DEL_ENTRY, then fails on the INODE
 *    tag, and the mount fails (EIO, "JBD2: recovery failed").  The deterministic case moved
 *    to fc_log_test.c (unlink_open_file_then_fsync, patches/fixes/0013); here the fc_mt_test
 *    procedure with unlinks
 *    (mt.*rename_unlink*: random interleavings; on stock those also left, once each,
 *    a duplicate directory entry and an inode with i_size 0 after a replay).
 *
 * 4. A full fast-commit area: fc_log_test.c's fc_area_full_15_blocks, which fails on stock
 *    and passes with patches/fixes/0012; fc_mt_test's procedure on the default 16-block
 *    area (mt.parallel_append_small_area).
 *
 * 5. (Replay of directory creation and removal: moved to fc_ops_test.c, whose
 *    mkdir_fsync_file and rmdir_fsync_file variants fail on stock; patches/fixes/0019 and
 *    0020 mend the kernel's replay.  e2fsprogs 1.47.0's own replay still makes the same
 *    mistakes, which those variants show without judging.)
 */
#define FC_STOCK_BUGS
#include "fc_mt_test.c"


/* A fast commit, the power cut, then mount -o ro: the data must be there. */
TEST(ro_mount_replay)
{
	struct layout l = { 1, { { 1, 0, 36 * 1024 } } };
	const char *disk = FC_DIR "/bdisk.img", *crash = FC_DIR "/bcrash.img";
	char tpl[PATH_MAX], why[256];
	struct fcfs fs = { .loop = -1 };
	int fd, r;

	setlinebuf(stdout);
	ASSERT_EQ(0, make_template(tpl, sizeof(tpl), "fast_commit", 4096, FC_IMG_SIZE));
	ASSERT_EQ(0, sparse_copy(tpl, disk));
	ASSERT_EQ(0, fs_open(&fs, disk, 0, "commit=600"));
	ASSERT_EQ(0, pat_create(FC_MNT "/f", 0644, 1, 32 * 1024));
	ASSERT_EQ(0, syncfs_path(FC_MNT));
	fd = open(FC_MNT "/f", O_WRONLY | O_CLOEXEC);
	ASSERT_EQ(0, pat_pwrite(fd, 1, 32 * 1024, 4096));
	ASSERT_EQ(0, fsync(fd));
	close(fd);
	ASSERT_EQ(0, fc_power_cut(&fs, crash));
	unlink(disk);
	r = fs_open(&fs, crash, MS_RDONLY, "");
	EXPECT_EQ(0, r) TH_LOG("mount -o ro: %s", strerror(-r));
	if (!r) {
		r = check_layout(FC_MNT "/f", &l, why, sizeof(why));
		EXPECT_EQ(0, r) TH_LOG("%s", why);
	}
	fs_close(&fs);
	unlink(crash);
}

TEST_HARNESS_MAIN

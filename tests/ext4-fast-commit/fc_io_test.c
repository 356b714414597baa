// SPDX-License-Identifier: GPL-2.0
/*
 * ext4 fast commits: the fast path is really taken, the power cut is really one, and the
 * interfaces.
 *
 *  - fast_path_*: after a syncfs, an fsync after a 4 KiB append (4 KiB and 1 KiB blocks),
 *    after a create (5000 bytes) and after a rename, each five times; the loop device's
 *    completed writes, sectors and flushes per fsync (/sys/block/loopN/stat fields 5, 7 and
 *    16) are printed ("# fsync append: N writes, M sectors, F flushes") and must be the
 *    physical floor stock reaches: the file's new data plus ONE fast-commit block (one write
 *    of one block, with REQ_PREFLUSH | REQ_FUA: the loop device has a volatile write cache
 *    and no FUA, so the block layer makes that two flushes), and fc_info counts one fast
 *    commit of one block.  A full jbd2 commit writes a descriptor, the metadata blocks and a
 *    commit block: a kernel without fast commits fails here.
 *  - control_no_fast_commit: the same on a file system made without -O fast_commit: full
 *    commits (more writes, fc_info's counters stay 0).
 *  - first_fsync_after_mount: before the journal's first full commit jbd2 refuses fast
 *    commits (jbd2_fc_begin_commit() -EINVAL): that fsync counts as ineligible, no reason.
 *  - power_cut_method: what reaches the disk from the fsync's return on: the image copied
 *    right after the fsync, after the shutdown (EXT4_IOC_SHUTDOWN, NOLOGFLUSH) and after the
 *    unmount, compared block by block; the shutdown writes the journal superblock once (its
 *    s_errno; its bytes do not change) and nothing else, then nothing at all reaches the
 *    disk, not even with sync(2) and dirty data in the page cache; the unmount writes the
 *    ext4 superblock only.  The tests take the crash image right after the shutdown, so that
 *    write at unmount is not part of it.
 *  - fc_info_format, interfaces: /proc/fs/ext4/<dev>/fc_info's exact text, mode 0444;
 *    /sys/fs/ext4/features/fast_commit; fc_debug_force and fc_debug_max_replay (without
 *    CONFIG_EXT4_DEBUG: unknown parameters, EINVAL, no WARN); data=journal turns fast
 *    commits off; noload; the jbd2 FAST_COMMIT incompat bit set while fast commits may be
 *    in the journal and cleared by a clean unmount (so older kernels mount it); tune2fs -O
 *    [^]fast_commit.
 */
#include "fc_util.h"
#include <sys/klog.h>
#include "kselftest_harness.h"

#define DISK FC_DIR "/idisk.img"
#define CRASH FC_DIR "/icrash.img"
#define M(rel) FC_MNT "/" rel
#define KB 1024

static int append_fd(const char *path, uint32_t seed, off_t off, size_t len, bool sync)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), r;

	if (fd < 0)
		return -errno;
	r = pat_pwrite(fd, seed, off, len) || (sync && fsync(fd)) ? -EIO : 0;
	close(fd);
	return r;
}

/* ------------------------------------------------------------------ the fast path */

enum wl { WL_APPEND, WL_CREATE, WL_RENAME };

static void fast_path(struct __test_metadata *_metadata, enum wl w, int bs, const char *features,
		      bool want_fast)
{
	static const char * const names[] = { "append", "create", "rename" };
	struct fcfs fs = { .loop = -1 };
	int i, bad = 0;

	setlinebuf(stdout);
	ASSERT_EQ(0, fc_start(&fs, features, bs, DISK, "commit=600"));
	ASSERT_EQ(0, pat_create(M("f"), 0644, 1, 32 * KB));
	ASSERT_EQ(0, pat_create(M("r0"), 0644, 2, 4 * KB));
	ASSERT_EQ(0, syncfs_path(FC_MNT));
	for (i = 0; i < 5; i++) {
		struct dstat a = { 0 }, b = { 0 }, d;
		struct fcinfo f0, f1;
		unsigned long long data_sect = 0, data_ios = 0;
		char n1[64], n2[64];
		int r = 0;

		fcinfo_read(fs.loop, &f0, NULL, 0);
		dstat_read(fs.loop, &a);
		switch (w) {
		case WL_APPEND:
			r = append_fd(M("f"), 1, (32 + 4 * i) * KB, 4 * KB, true);
			data_sect = 8;
			data_ios = 1;
			break;
		case WL_CREATE:
			snprintf(n1, sizeof(n1), M("c%d"), i);
			r = pat_create(n1, 0644, 3, 5000) ?: fsync_path(n1, false);
			data_sect = (5000 + bs - 1) / bs * bs / 512;
			data_ios = 1;
			break;
		case WL_RENAME:
			snprintf(n1, sizeof(n1), M("r%d"), i);
			snprintf(n2, sizeof(n2), M("r%d"), i + 1);
			r = rename(n1, n2) ? -errno : fsync_path(n2, false);
			break;
		}
		dstat_read(fs.loop, &b);
		fcinfo_read(fs.loop, &f1, NULL, 0);
		ASSERT_EQ(0, r);
		d = dstat_sub(b, a);
		printf("# fsync %s (%d-byte blocks): %llu writes, %llu sectors, %llu flushes; fc_info: %ld commits, %ld blocks, %ld ineligible\n",
		       names[w], bs, d.w_ios, d.w_sect, d.flush, f1.commits - f0.commits,
		       f1.numblks - f0.numblks, f1.ineligible - f0.ineligible);
		if (!want_fast) {
			/* a full commit: at least a descriptor, a metadata block and a commit block */
			if (d.w_sect < data_sect + 3 * (bs / 512) ||
			    (f1.present && (f1.commits != f0.commits ||
					    f1.ineligible != f0.ineligible)))
				bad++;
			continue;
		}
		/* the floor: the data, one fast-commit block, two flushes */
		if (d.w_sect != data_sect + bs / 512 || d.w_ios > data_ios + 1 || d.flush > 2 ||
		    !f1.present || f1.commits - f0.commits != 1 || f1.numblks - f0.numblks != 1 ||
		    f1.ineligible != f0.ineligible) {
			printf("# want %llu sectors (%llu of data, one %d-byte block), at most %llu writes and 2 flushes, and one fast commit of one block\n",
			       data_sect + bs / 512, data_sect, bs, data_ios + 1);
			bad++;
		}
	}
	fs_close(&fs);
	unlink(DISK);
	EXPECT_EQ(0, bad);
}

TEST(fast_path_append)		{ fast_path(_metadata, WL_APPEND, 4096, "fast_commit", true); }
TEST(fast_path_append_1k)	{ fast_path(_metadata, WL_APPEND, 1024, "fast_commit", true); }
TEST(fast_path_create)		{ fast_path(_metadata, WL_CREATE, 4096, "fast_commit", true); }
TEST(fast_path_rename)		{ fast_path(_metadata, WL_RENAME, 4096, "fast_commit", true); }
TEST(control_no_fast_commit)	{ fast_path(_metadata, WL_APPEND, 4096, "^fast_commit", false); }

TEST(first_fsync_after_mount)
{
	struct fcfs fs = { .loop = -1 };
	struct fcinfo f0, f1, f2;
	char why[256];

	setlinebuf(stdout);
	ASSERT_EQ(0, fc_start(&fs, "fast_commit", 4096, DISK, "commit=600"));
	ASSERT_EQ(0, fcinfo_read(fs.loop, &f0, why, sizeof(why))) TH_LOG("%s", why);
	ASSERT_EQ(0, pat_create(M("f"), 0644, 1, 4 * KB));
	ASSERT_EQ(0, fsync_path(M("f"), false));
	ASSERT_EQ(0, fcinfo_read(fs.loop, &f1, why, sizeof(why)));
	ASSERT_EQ(0, append_fd(M("f"), 1, 4 * KB, 4 * KB, true));
	ASSERT_EQ(0, fcinfo_read(fs.loop, &f2, why, sizeof(why)));
	printf("# first fsync: %ld commits, %ld ineligible; second: %ld commits, %ld ineligible\n",
	       f1.commits - f0.commits, f1.ineligible - f0.ineligible, f2.commits - f1.commits,
	       f2.ineligible - f1.ineligible);
	EXPECT_EQ(0, f1.commits - f0.commits);
	EXPECT_EQ(1, f1.ineligible - f0.ineligible);
	for (int i = 0; i < FC_NREASONS; i++) {
		EXPECT_EQ(0, f1.reason[i]);
	}
	EXPECT_EQ(1, f2.commits - f1.commits);
	EXPECT_EQ(0, f2.ineligible - f1.ineligible);
	fs_close(&fs);
	unlink(DISK);
}

/* ------------------------------------------------------------------ the power cut */

TEST(power_cut_method)
{
	const char *a = FC_DIR "/pa.img", *b = FC_DIR "/pb.img", *c = FC_DIR "/pc.img";
	struct dstat s1 = { 0 }, s2 = { 0 }, s3 = { 0 }, s4 = { 0 };
	struct fcfs fs = { .loop = -1 };
	long long blk[16];
	struct jsb j;
	int n, i;

	setlinebuf(stdout);
	ASSERT_EQ(0, fc_start(&fs, "fast_commit", 4096, DISK, "commit=600"));
	ASSERT_EQ(0, pat_create(M("f"), 0644, 1, 32 * KB));
	ASSERT_EQ(0, syncfs_path(FC_MNT));
	ASSERT_EQ(0, append_fd(M("f"), 1, 32 * KB, 4 * KB, true));
	/* dirty data and metadata left in memory, never synced */
	ASSERT_EQ(0, pat_create(M("dirty"), 0644, 2, 64 * KB));
	ASSERT_EQ(0, append_fd(M("f"), 1, 36 * KB, 4 * KB, false));
	dstat_read(fs.loop, &s1);
	ASSERT_EQ(0, sparse_copy(DISK, a));
	ASSERT_EQ(0, fs_shutdown(FC_MNT, EXT4_GOING_FLAGS_NOLOGFLUSH));
	dstat_read(fs.loop, &s2);
	ASSERT_EQ(0, sparse_copy(DISK, b));
	/* nothing more after the shutdown, even when asked */
	sync();
	syncfs_path(FC_MNT);
	usleep(1500 * 1000);
	dstat_read(fs.loop, &s3);
	fs_umount(&fs);
	dstat_read(fs.loop, &s4);
	fs_close(&fs);
	ASSERT_EQ(0, sparse_copy(DISK, c));

	ASSERT_EQ(0, jsb_read(b, 4096, &j));
	printf("# shutdown: %llu writes, %llu flushes; then sync(2), syncfs and 1.5 s: %llu writes, %llu flushes; umount: %llu writes, %llu flushes\n",
	       dstat_sub(s2, s1).w_ios, dstat_sub(s2, s1).flush, dstat_sub(s3, s2).w_ios,
	       dstat_sub(s3, s2).flush, dstat_sub(s4, s3).w_ios, dstat_sub(s4, s3).flush);
	EXPECT_GE(1, dstat_sub(s2, s1).w_ios);
	EXPECT_EQ(0, dstat_sub(s3, s2).w_ios);
	EXPECT_EQ(0, dstat_sub(s3, s2).flush);

	n = diff_files(a, b, 4096, blk, 16);
	printf("# blocks changed by the shutdown: %d", n);
	for (i = 0; i < n && i < 16; i++)
		printf(" %lld%s", blk[i], blk[i] == j.pblk ? " (journal superblock)" : "");
	printf("\n");
	for (i = 0; i < n && i < 16; i++) {
		EXPECT_EQ(j.pblk, blk[i]);
	}
	EXPECT_GE(1, n);

	n = diff_files(b, c, 4096, blk, 16);
	printf("# blocks changed by the unmount: %d", n);
	for (i = 0; i < n && i < 16; i++)
		printf(" %lld%s", blk[i], blk[i] == 0 ? " (ext4 superblock)" : "");
	printf("\n");
	EXPECT_EQ(1, n);
	EXPECT_EQ(0, blk[0]);
	unlink(a);
	unlink(b);
	unlink(c);
	unlink(DISK);
}

/* ------------------------------------------------------------------ interfaces */

TEST(fc_info_format)
{
	static const char fresh[] =
		"fc stats:\n0 commits\n0 ineligible\n0 numblks\n0us avg_commit_time\n"
		"Ineligible reasons:\n"
		"\"Extended attributes changed\":\t0\n\"Cross rename\":\t0\n"
		"\"Journal flag changed\":\t0\n\"Insufficient memory\":\t0\n\"Swap boot\":\t0\n"
		"\"Resize\":\t0\n\"Dir renamed\":\t0\n\"Falloc range op\":\t0\n"
		"\"Data journalling\":\t0\n\"Encrypted filename\":\t0\n";
	struct fcfs fs = { .loop = -1 };
	char path[64], buf[2048], why[256];
	struct fcinfo fi;
	struct stat st;

	setlinebuf(stdout);
	ASSERT_EQ(0, fc_start(&fs, "fast_commit", 4096, DISK, "commit=600"));
	snprintf(path, sizeof(path), "/proc/fs/ext4/loop%d/fc_info", fs.loop);
	ASSERT_EQ(0, stat(path, &st)) TH_LOG("%s: %s", path, strerror(errno));
	EXPECT_TRUE(S_ISREG(st.st_mode));
	EXPECT_EQ(0444, st.st_mode & 07777);
	ASSERT_LT(0, read_small(path, buf, sizeof(buf)));
	EXPECT_STREQ(fresh, buf);
	/* after fast commits and an ineligible one: the same layout, parsed strictly */
	ASSERT_EQ(0, pat_create(M("f"), 0644, 1, 4 * KB));
	ASSERT_EQ(0, syncfs_path(FC_MNT));
	ASSERT_EQ(0, append_fd(M("f"), 1, 4 * KB, 4 * KB, true));
	ASSERT_EQ(0, append_fd(M("f"), 1, 8 * KB, 4 * KB, true));
	ASSERT_EQ(0, setxattr(M("f"), "user.x", "1", 1, 0));
	ASSERT_EQ(0, fsync_path(M("f"), false));
	ASSERT_LT(0, read_small(path, buf, sizeof(buf)));
	diag_lines("fc_info: ", buf);
	ASSERT_EQ(0, fcinfo_read(fs.loop, &fi, why, sizeof(why))) TH_LOG("%s", why);
	EXPECT_EQ(2, fi.commits);
	EXPECT_EQ(1, fi.ineligible);
	EXPECT_EQ(2, fi.numblks);
	EXPECT_LT(0, fi.avg_us);
	EXPECT_EQ(2, fi.reason[0]);
	fs_close(&fs);
	/* gone with the mount */
	EXPECT_NE(0, stat(path, &st));
	unlink(DISK);
}

TEST(features_fast_commit)
{
	char buf[64];

	ASSERT_LT(0, read_small("/sys/fs/ext4/features/fast_commit", buf, sizeof(buf)));
	EXPECT_STREQ("supported\n", buf);
}

/* The kernel log since the last call (klogctl READ_ALL, compared by length). */
static char *klog_new(void)
{
	static char all[1 << 17], prev_end[256];
	static int prev_len;
	int n = klogctl(3, all, sizeof(all) - 1);
	char *p = all;

	if (n < 0)
		return "";
	all[n] = 0;
	if (prev_len && *prev_end) {
		char *q = strstr(all, prev_end);

		while (q && strstr(q + 1, prev_end))
			q = strstr(q + 1, prev_end);
		if (q)
			p = q + strlen(prev_end);
	}
	prev_len = n;
	snprintf(prev_end, sizeof(prev_end), "%s", n > 200 ? all + n - 200 : all);
	return p;
}

TEST(fc_debug_options)
{
	struct fcfs fs = { .loop = -1 };
	char *log;

	setlinebuf(stdout);
	ASSERT_EQ(0, fc_start(&fs, "fast_commit", 4096, DISK, "commit=600"));
	fs_close(&fs);
	fs.loop = loop_attach(DISK);
	ASSERT_LE(0, fs.loop);
	klog_new();
	EXPECT_EQ(-EINVAL, fs_mount(&fs, 0, "fc_debug_force"));
	EXPECT_EQ(-EINVAL, fs_mount(&fs, 0, "fc_debug_max_replay=1"));
	log = klog_new();
	EXPECT_NE(NULL, strstr(log, "Unknown parameter 'fc_debug_force'")) diag_lines("log: ", log);
	EXPECT_NE(NULL, strstr(log, "Unknown parameter 'fc_debug_max_replay'"));
	EXPECT_EQ(NULL, strstr(log, "WARNING"));
	fs_close(&fs);
	unlink(DISK);
}

TEST(data_journal_no_fast_commits)
{
	struct fcfs fs = { .loop = -1 };
	struct fcinfo f0, f1;
	struct dstat a = { 0 }, b = { 0 };
	struct jsb j;

	setlinebuf(stdout);
	ASSERT_EQ(0, fc_start(&fs, "fast_commit", 4096, DISK, "commit=600,data=journal"));
	ASSERT_EQ(0, pat_create(M("f"), 0644, 1, 32 * KB));
	ASSERT_EQ(0, syncfs_path(FC_MNT));
	fcinfo_read(fs.loop, &f0, NULL, 0);
	dstat_read(fs.loop, &a);
	ASSERT_EQ(0, append_fd(M("f"), 1, 32 * KB, 4 * KB, true));
	dstat_read(fs.loop, &b);
	fcinfo_read(fs.loop, &f1, NULL, 0);
	printf("# data=journal, fsync append: %llu writes, %llu sectors; fc_info: %ld commits, %ld ineligible, %ld \"Data journalling\"\n",
	       dstat_sub(b, a).w_ios, dstat_sub(b, a).w_sect, f1.commits - f0.commits,
	       f1.ineligible - f0.ineligible, f1.reason[8] - f0.reason[8]);
	EXPECT_TRUE(f1.present);
	EXPECT_EQ(f0.commits, f1.commits);
	EXPECT_EQ(f0.ineligible, f1.ineligible);
	for (int i = 0; i < FC_NREASONS; i++) {
		EXPECT_EQ(f0.reason[i], f1.reason[i]);
	}
	EXPECT_LT(16, dstat_sub(b, a).w_sect);
	ASSERT_EQ(0, fc_power_cut(&fs, CRASH));
	/* no fast commits: the jbd2 incompat bit is not set either */
	ASSERT_EQ(0, jsb_read(CRASH, 4096, &j));
	EXPECT_NE(0, j.start);
	EXPECT_EQ(0, j.incompat & JBD2_FEATURE_INCOMPAT_FAST_COMMIT);
	unlink(CRASH);
	unlink(DISK);
}

/*
 * The jbd2 FAST_COMMIT incompat bit is on disk while fast commits may be in the journal (the
 * crash image) and cleared by a clean unmount; noload mounts without replaying them, and
 * leaves them for the next mount.
 */
TEST(incompat_bit_and_noload)
{
	struct layout old = { 1, { { 1, 0, 32 * KB } } }, new = { 1, { { 1, 0, 36 * KB } } };
	struct fcfs fs = { .loop = -1 };
	char why[256], out[4096];
	struct jsb j;

	setlinebuf(stdout);
	ASSERT_EQ(0, fc_start(&fs, "fast_commit", 4096, DISK, "commit=600"));
	ASSERT_EQ(0, pat_create(M("f"), 0644, 1, 32 * KB));
	ASSERT_EQ(0, syncfs_path(FC_MNT));
	ASSERT_EQ(0, append_fd(M("f"), 1, 32 * KB, 4 * KB, true));
	ASSERT_EQ(0, fc_power_cut(&fs, CRASH));
	ASSERT_EQ(0, jsb_read(CRASH, 4096, &j));
	printf("# crash image: journal s_start %u, incompat %#x\n", j.start, j.incompat);
	EXPECT_NE(0, j.start);
	EXPECT_TRUE(j.incompat & JBD2_FEATURE_INCOMPAT_FAST_COMMIT);
	run_cmd(out, sizeof(out), "dumpe2fs", "-h", CRASH);
	EXPECT_NE(NULL, strstr(out, "FEATURE_I5")) diag_lines("dumpe2fs: ", out);

	/* noload: the fast commit is not applied, and is still there afterwards */
	ASSERT_EQ(0, fs_open(&fs, CRASH, MS_RDONLY, "noload"));
	EXPECT_EQ(0, check_layout(M("f"), &old, why, sizeof(why))) TH_LOG("noload: %s", why);
	fs_close(&fs);
	ASSERT_EQ(0, jsb_read(CRASH, 4096, &j));
	EXPECT_NE(0, j.start);

	/* the replay, then a clean unmount clears the bit */
	ASSERT_EQ(0, fs_open(&fs, CRASH, 0, "commit=600"));
	EXPECT_EQ(0, check_layout(M("f"), &new, why, sizeof(why))) TH_LOG("replay: %s", why);
	ASSERT_EQ(0, append_fd(M("f"), 1, 36 * KB, 4 * KB, true));
	fs_close(&fs);
	ASSERT_EQ(0, jsb_read(CRASH, 4096, &j));
	printf("# after a clean unmount: journal s_start %u, incompat %#x\n", j.start, j.incompat);
	EXPECT_EQ(0, j.start);
	EXPECT_EQ(0, j.incompat & JBD2_FEATURE_INCOMPAT_FAST_COMMIT);
	run_cmd(out, sizeof(out), "dumpe2fs", "-h", CRASH);
	EXPECT_EQ(NULL, strstr(out, "FEATURE_I5"));
	EXPECT_EQ(0, fsck_clean(CRASH, "after the clean unmount"));
	unlink(CRASH);
	unlink(DISK);
}

/*
 * tune2fs -O fast_commit on a file system made without it, and -O ^fast_commit: on 256 MiB
 * (a 4096-block journal) fast commits come and go with the feature.  On 64 MiB the journal
 * has 1024 blocks and tune2fs does not grow it: the kernel refuses the mount (EINVAL, "JBD2:
 * Cannot enable fast commits."), as the log would shrink below JBD2_MIN_JOURNAL_BLOCKS.
 */
TEST(tune2fs_toggle)
{
	struct fcfs fs = { .loop = -1 };
	struct fcinfo f0, f1;
	char out[4096], *log;
	int rc;

	setlinebuf(stdout);
	ASSERT_EQ(0, fc_start_sz(&fs, "^fast_commit", 4096, 256ULL << 20, DISK, "commit=600"));
	fs_close(&fs);
	rc = run_cmd(out, sizeof(out), "tune2fs", "-O", "fast_commit", DISK);
	ASSERT_EQ(0, rc) diag_lines("tune2fs: ", out);
	for (int on = 1; on >= 0; on--) {
		ASSERT_EQ(0, fs_open(&fs, DISK, 0, "commit=600"));
		ASSERT_EQ(0, pat_create(M("f"), 0644, 1, 4 * KB));
		ASSERT_EQ(0, syncfs_path(FC_MNT));
		fcinfo_read(fs.loop, &f0, NULL, 0);
		ASSERT_EQ(0, append_fd(M("f"), 1, 4 * KB, 4 * KB, true));
		fcinfo_read(fs.loop, &f1, NULL, 0);
		printf("# fast_commit %s by tune2fs: %ld fast commits\n", on ? "set" : "cleared",
		       f1.commits - f0.commits);
		EXPECT_EQ(on, f1.commits - f0.commits);
		fs_close(&fs);
		if (on) {
			rc = run_cmd(out, sizeof(out), "tune2fs", "-O", "^fast_commit", DISK);
			ASSERT_EQ(0, rc) diag_lines("tune2fs: ", out);
		}
	}
	EXPECT_EQ(0, fsck_clean(DISK, "tune2fs"));
	unlink(DISK);

	/* 64 MiB: the journal is too small for the fast-commit area */
	ASSERT_EQ(0, fc_start(&fs, "^fast_commit", 4096, DISK, "commit=600"));
	fs_close(&fs);
	rc = run_cmd(out, sizeof(out), "tune2fs", "-O", "fast_commit", DISK);
	ASSERT_EQ(0, rc) diag_lines("tune2fs: ", out);
	fs.loop = loop_attach(DISK);
	klog_new();
	rc = fs_mount(&fs, 0, "commit=600");
	log = klog_new();
	printf("# 1024-block journal with fast_commit set by tune2fs: mount %s\n",
	       rc ? strerror(-rc) : "succeeded");
	EXPECT_EQ(-EINVAL, rc);
	EXPECT_NE(NULL, strstr(log, "JBD2: Cannot enable fast commits.")) diag_lines("log: ", log);
	fs_close(&fs);
	unlink(DISK);
}

TEST_HARNESS_MAIN

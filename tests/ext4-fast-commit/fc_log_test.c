// SPDX-License-Identifier: GPL-2.0
/*
 * ext4 fast commits on disk: the fast-commit area read by Debian's debugfs (logdump), replay
 * by the kernel and by e2fsck from the same crash image, and damaged fast commits.
 *
 *  - logdump_tags: four fast commits (create, link, unlink + truncate, rename); debugfs
 *    logdump of the crash image, before any recovery, must list the "*** Fast Commit Area ***"
 *    with exactly stock's tags in stock's order (HEAD once; per fast commit the dentry tags
 *    in issue order, a created inode's INODE and ranges before its CREAT; then each inode's
 *    ranges and INODE; a TAIL with the HEAD's tid), with the inode numbers, names, logical
 *    blocks and the physical blocks FIEMAP showed; the kernel's and e2fsck's recoveries
 *    must give the tree the test saw before the power cut, and e2fsck -fn must be clean.
 *  - torn_*: two fast commits (appends, each in its own block), then the second block is
 *    damaged in the image: a byte of its tags, of its TAIL's CRC or tid, or a torn write
 *    (only the first 64 bytes of the block written, the rest what was there before).
 *    Recovery must apply the first and drop the second (the file has the first append
 *    only), and the fs must be clean.  A torn write that keeps everything up to the TAIL (the
 *    first sector) leaves a valid fast commit: the bytes after the TAIL are not covered by
 *    its CRC.
 *  - torn_only_fc: the only fast commit since the last full commit damaged: stock's kernel
 *    refuses the mount (EIO; "JBD2: recovery failed", "error loading journal": jbd2
 *    returns the scan's -EFSBADCRC as the result of the journal recovery); e2fsck reports "Journal checksum
 *    error found", skips it, and then the kernel mounts the state of the last full commit.
 *  - stale_fc_area: fast commits of an older transaction left in the area after full
 *    commits must not be replayed (their HEAD's tid is not the expected one).
 *  - fc_area_14_blocks, fc_area_full_15_blocks: 14 and 15 one-block fast commits after a
 *    full commit, the power cut, every append recovered (15 fills the area).
 *  - unlink_open_file_then_fsync: a file unlinked while open, another file's append
 *    fsynced: after the power cut the mount succeeds, the unlinked file is gone, the append
 *    is there and e2fsck -fn is clean.
 *  - rmdir_then_file_reuses_number, file_number_reused_by_dir: an inode number deleted and
 *    created again (directory -> file, file with an extent leaf block -> directory) in the
 *    fast commit: the replay mounts, the tree is right and e2fsck -fn is clean.
 *  - tracepoints: every ext4_fc_* event both stock and ours define fires for fsyncs of a
 *    create, a link and an unlink; commit_start and commit_stop pair up; track_create and
 *    the replay's records name the created inode.
 */
#include "fc_util.h"
#include "kselftest_harness.h"

#define DISK FC_DIR "/ldisk.img"
#define CRASH FC_DIR "/lcrash.img"
#define TOOL FC_DIR "/ltool.img"
#define M(rel) FC_MNT "/" rel
#define KB 1024
#define ADD_FAILURE() EXPECT_EQ(0, 1)

static void start(struct __test_metadata *_metadata, struct fcfs *fs)
{
	setlinebuf(stdout);
	ASSERT_EQ(0, fc_start(fs, "fast_commit", 4096, DISK, "commit=600"));
}

static int append_fsync(const char *path, uint32_t seed, off_t off, size_t len)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), r;

	if (fd < 0)
		return -errno;
	r = pat_pwrite(fd, seed, off, len) || fsync(fd) ? -EIO : 0;
	close(fd);
	return r;
}

static unsigned long ino_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_ino;
}

static char logdump_out[65536];

/* the lines of debugfs logdump after "*** Fast Commit Area ***" */
static char *fc_area(const char *img)
{
	char *out = logdump_out, *p;

	run_cmd(out, sizeof(logdump_out), "debugfs", "-R", "logdump", (char *)img);
	p = strstr(out, "*** Fast Commit Area ***\n");
	return p ? p + strlen("*** Fast Commit Area ***\n") : NULL;
}

static int line_cmp(const void *a, const void *b)
{
	return strcmp(*(char * const *)a, *(char * const *)b);
}

/*
 * @s with each fast commit's lines (up to its "tag TAIL") sorted and duplicates dropped:
 * the format fixes which records a fast commit holds, not their order within it (stock
 * writes a created inode's INODE record twice, ours once).
 */
static void commit_sets(const char *s, char *out, size_t sz)
{
	char *copy = strdup(s), *lines[256], *p, *save = NULL;
	size_t n = 0, len = 0, i;
	bool last;

	out[0] = 0;
	for (p = strtok_r(copy, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
		if (n < 256)
			lines[n++] = p;
		last = !strncmp(p, "tag TAIL", 8);
		if (!last && *save)
			continue;
		qsort(lines, n, sizeof(lines[0]), line_cmp);
		for (i = 0; i < n; i++)
			if (!i || strcmp(lines[i], lines[i - 1]))
				len += snprintf(out + len, len < sz ? sz - len : 0, "%s\n", lines[i]);
		len += snprintf(out + len, len < sz ? sz - len : 0, "--\n");
		n = 0;
	}
	free(copy);
}

TEST(logdump_tags)
{
	unsigned long d, f, n, tid;
	long long pnew, lnew = 0, pf1;
	struct fcfs fs = { .loop = -1 };
	char want[4096], out[4096], *got, *pre, *k, *t;
	static char got_sets[8192], want_sets[8192];
	struct jsb j;
	int fd, rc;

	start(_metadata, &fs);
	ASSERT_EQ(0, mkdir(M("d"), 0755));
	ASSERT_EQ(0, pat_create(M("d/f"), 0644, 1, 32 * KB));
	ASSERT_EQ(0, syncfs_path(FC_MNT));
	d = ino_of(M("d"));
	f = ino_of(M("d/f"));

	/* 1: create + fsync */
	ASSERT_EQ(0, pat_create(M("d/new"), 0644, 2, 5000));
	ASSERT_EQ(0, fsync_path(M("d/new"), false));
	n = ino_of(M("d/new"));
	pnew = fiemap_first(M("d/new"), 4096, &lnew);
	/* 2: link + fsync */
	ASSERT_EQ(0, link(M("d/f"), M("d/l")));
	ASSERT_EQ(0, fsync_path(M("d/f"), false));
	/* 3: unlink of the second name, truncate to 8 KiB, fsync */
	ASSERT_EQ(0, unlink(M("d/l")));
	fd = open(M("d/f"), O_WRONLY | O_CLOEXEC);
	ASSERT_EQ(0, ftruncate(fd, 8 * KB));
	ASSERT_EQ(0, fsync(fd));
	close(fd);
	pf1 = fiemap_first(M("d/f"), 4096, NULL) + 1;
	/* 4: rename + fsync */
	ASSERT_EQ(0, rename(M("d/new"), M("d/renamed")));
	ASSERT_EQ(0, fsync_path(M("d/renamed"), false));
	pre = manifest(FC_MNT);
	ASSERT_EQ(0, fc_power_cut(&fs, CRASH));

	ASSERT_EQ(0, jsb_read(CRASH, 4096, &j));
	ASSERT_TRUE(j.incompat & JBD2_FEATURE_INCOMPAT_FAST_COMMIT);
	got = fc_area(CRASH);
	ASSERT_NE(NULL, got) TH_LOG("no \"*** Fast Commit Area ***\" in debugfs logdump");
	/* the fast commits' tid: the one after the last full commit in the log */
	tid = j.sequence;
	for (char *p = logdump_out; (p = strstr(p, "Found expected sequence ")); p++) {
		unsigned long seq;
		int type;

		if (sscanf(p, "Found expected sequence %lu, type %d", &seq, &type) == 2 &&
		    type == 2 && seq + 1 > tid)
			tid = seq + 1;
	}
	snprintf(want, sizeof(want),
		 "tag HEAD, features 0x0, tid %lu\n"
		 "tag INODE, inode %lu\n"
		 "tag ADD_RANGE, inode %lu, lblk 0, pblk %lld, len %lld\n"
		 "tag CREAT_DENTRY, parent %lu, ino %lu, name \"new\"\n"
		 "tag INODE, inode %lu\n"
		 "tag TAIL, tid %lu\n"
		 "tag ADD_ENTRY, parent %lu, ino %lu, name \"l\"\n"
		 "tag INODE, inode %lu\n"
		 "tag TAIL, tid %lu\n"
		 "tag DEL_ENTRY, parent %lu, ino %lu, name \"l\"\n"
		 "tag ADD_RANGE, inode %lu, lblk 1, pblk %lld, len 1\n"
		 "tag DEL_RANGE, inode %lu, lblk 2, len 2147483647\n"
		 "tag DEL_RANGE, inode %lu, lblk -2147483647, len 2147483646\n"
		 "tag INODE, inode %lu\n"
		 "tag TAIL, tid %lu\n"
		 "tag ADD_ENTRY, parent %lu, ino %lu, name \"renamed\"\n"
		 "tag DEL_ENTRY, parent %lu, ino %lu, name \"new\"\n"
		 "tag INODE, inode %lu\n"
		 "tag TAIL, tid %lu\n",
		 tid, n, n, pnew, lnew, d, n, n, tid, d, f, f, tid, d, f, f, pf1, f, f, f, tid,
		 d, n, d, n, n, tid);
	/*
	 * debugfs 1.47.0 prints a dentry tag's name up to the next NUL byte of the block, that
	 * is with the low byte of the next tag after it ("new\x06"): control bytes dropped.
	 */
	{
		char *w = got;

		for (char *r = got; *r; r++)
			if ((unsigned char)*r >= 0x20 || *r == '\n')
				*w++ = *r;
		*w = 0;
	}
	commit_sets(got, got_sets, sizeof(got_sets));
	commit_sets(want, want_sets, sizeof(want_sets));
	if (strcmp(got_sets, want_sets)) {
		size_t i = 0;

		while (got[i] && got[i] == want[i])
			i++;
		printf("# first difference at byte %zu: got 0x%02x, want 0x%02x\n", i,
		       (uint8_t)got[i], (uint8_t)want[i]);
		printf("# debugfs logdump, fast commit area:\n");
		diag_lines("  ", got);
		printf("# expected (stock 6.1):\n");
		diag_lines("  ", want);
	}
	EXPECT_STREQ(want_sets, got_sets);

	/* both recoveries give the tree of before the power cut */
	ASSERT_EQ(0, sparse_copy(CRASH, TOOL));
	ASSERT_EQ(0, fs_open(&fs, CRASH, 0, "commit=600"));
	k = manifest(FC_MNT);
	fs_close(&fs);
	EXPECT_EQ(0, manifest_diff("kernel replay vs before:", pre, k));
	EXPECT_EQ(0, fsck_clean(CRASH, "kernel replay"));
	rc = e2fsck_replay(TOOL, out, sizeof(out));
	if (rc)
		diag_lines("e2fsck: ", out);
	EXPECT_EQ(0, rc);
	EXPECT_EQ(0, fsck_clean(TOOL, "e2fsck replay"));
	ASSERT_EQ(0, fs_open(&fs, TOOL, 0, "commit=600"));
	t = manifest(FC_MNT);
	fs_close(&fs);
	EXPECT_EQ(0, manifest_diff("e2fsck replay vs kernel replay:", k, t));
	free(pre);
	free(k);
	free(t);
	unlink(CRASH);
	unlink(TOOL);
	unlink(DISK);
}

/* ------------------------------------------------------------------ damaged fast commits */

enum damage { D_TAGBYTE, D_CRC, D_TID, D_TORN64, D_TORN_AFTER_TAIL, D_NONE };

/* Find the byte offset of the TAIL tag in a fast-commit block; -1 if none. */
static int tail_off(const unsigned char *b, int bs)
{
	int off = 0;

	while (off + 4 <= bs) {
		int tag = b[off] | b[off + 1] << 8, len = b[off + 2] | b[off + 3] << 8;

		if (tag == 8)
			return off;
		if (!tag || tag > 9)
			return -1;
		off += 4 + len;
	}
	return -1;
}

/*
 * Two fast commits appending 4 KiB each to f (32 KiB committed by a full commit), the second
 * block damaged as DMG says.  With ONLY, a single fast commit, damaged.  Returns the journal
 * block number of the damaged block.
 */
static void make_damaged(struct __test_metadata *_metadata, enum damage dmg, bool only)
{
	unsigned char b[4096];
	struct fcfs fs = { .loop = -1 };
	long long p;
	struct jsb j;
	int fd, t;

	start(_metadata, &fs);
	ASSERT_EQ(0, pat_create(M("f"), 0644, 1, 32 * KB));
	ASSERT_EQ(0, syncfs_path(FC_MNT));
	ASSERT_EQ(0, append_fsync(M("f"), 1, 32 * KB, 4 * KB));
	if (!only) {
		ASSERT_EQ(0, append_fsync(M("f"), 1, 36 * KB, 4 * KB));
	}
	ASSERT_EQ(0, fc_power_cut(&fs, CRASH));

	ASSERT_EQ(0, jsb_read(CRASH, 4096, &j));
	p = journal_pblk(CRASH, jsb_fc_first(&j) + (only ? 0 : 1));
	ASSERT_LT(0, p);
	fd = open(CRASH, O_RDWR | O_CLOEXEC);
	ASSERT_EQ(4096, pread(fd, b, 4096, p * 4096));
	/* the block really is the fast commit: HEAD first in the first one */
	if (only) {
		ASSERT_EQ(9, b[0] | b[1] << 8);
	}
	t = tail_off(b, 4096);
	ASSERT_LT(0, t) TH_LOG("no TAIL in the fast-commit block");
	printf("# damaging journal block %ld (disk block %lld): TAIL at byte %d\n",
	       jsb_fc_first(&j) + (only ? 0 : 1), p, t);
	switch (dmg) {
	case D_TAGBYTE:
		b[t / 2] ^= 0x40;	/* inside the tags before the TAIL */
		break;
	case D_CRC:
		b[t + 4 + 7] ^= 0x01;	/* fc_crc's last byte */
		break;
	case D_TID:
		b[t + 4] ^= 0x01;	/* fc_tid */
		break;
	case D_TORN64:
		memset(b + 64, 0, sizeof(b) - 64);	/* the area was zeros before */
		break;
	case D_TORN_AFTER_TAIL:
		memset(b + 512, 0xa5, sizeof(b) - 512);
		break;
	case D_NONE:
		break;
	}
	ASSERT_EQ(4096, pwrite(fd, b, 4096, p * 4096));
	close(fd);
	unlink(DISK);
}

/* Recover CRASH by the kernel and by e2fsck; f must hold WANT bytes of pattern 1. */
/* Mount @img and compare f with @l: 0, or not (said why, after @label) */
static int mounted_layout(const char *img, const struct layout *l, const char *label)
{
	struct fcfs fs = { .loop = -1 };
	char why[256];
	int rc = fs_open(&fs, img, 0, "commit=600");

	if (rc) {
		printf("# %s: mount: %s\n", label, strerror(-rc));
		fs_close(&fs);
		return rc;
	}
	rc = check_layout(M("f"), l, why, sizeof(why));
	if (rc)
		printf("# %s: %s\n", label, why);
	fs_close(&fs);
	return rc;
}

static void recover_both(struct __test_metadata *_metadata, uint64_t want)
{
	struct layout l = { 1, { { 1, 0, want } } };
	char out[4096];
	int rc;

	ASSERT_EQ(0, sparse_copy(CRASH, TOOL));
	EXPECT_EQ(0, mounted_layout(CRASH, &l, "kernel replay"));
	EXPECT_EQ(0, fsck_clean(CRASH, "kernel replay"));

	rc = e2fsck_replay(TOOL, out, sizeof(out));
	if (rc)
		diag_lines("e2fsck: ", out);
	EXPECT_EQ(0, rc);
	EXPECT_EQ(0, fsck_clean(TOOL, "e2fsck replay"));
	EXPECT_EQ(0, mounted_layout(TOOL, &l, "e2fsck replay"));
	unlink(CRASH);
	unlink(TOOL);
}

TEST(undamaged_two_fc)		{ make_damaged(_metadata, D_NONE, false); recover_both(_metadata, 40 * KB); }
TEST(torn_second_tag_byte)	{ make_damaged(_metadata, D_TAGBYTE, false); recover_both(_metadata, 36 * KB); }
TEST(torn_second_crc)		{ make_damaged(_metadata, D_CRC, false); recover_both(_metadata, 36 * KB); }
TEST(torn_second_tid)		{ make_damaged(_metadata, D_TID, false); recover_both(_metadata, 36 * KB); }
TEST(torn_second_write_64b)	{ make_damaged(_metadata, D_TORN64, false); recover_both(_metadata, 36 * KB); }
TEST(torn_second_after_tail)	{ make_damaged(_metadata, D_TORN_AFTER_TAIL, false); recover_both(_metadata, 40 * KB); }

/*
 * The only fast commit damaged: the fsync that wrote it never returned, so recovery drops it
 * and the mount shows the last full commit's state, as e2fsck's replay does.  Stock 6.1
 * refuses the mount instead (its scan's -EFSBADCRC becomes the journal recovery's result:
 * EIO, every time); patches/fixes/0010 mends that.
 */
TEST(torn_only_fc)
{
	struct layout l = { 1, { { 1, 0, 32 * KB } } };
	struct fcfs fs = { .loop = -1 };
	char out[4096];
	int rc;

	make_damaged(_metadata, D_TAGBYTE, true);
	ASSERT_EQ(0, sparse_copy(CRASH, TOOL));
	rc = fs_open(&fs, CRASH, 0, "commit=600");
	printf("# kernel mount: %s\n", rc ? strerror(-rc) : "succeeded");
	EXPECT_EQ(0, rc);
	fs_close(&fs);
	EXPECT_EQ(0, fsck_clean(CRASH, "kernel recovery"));
	EXPECT_EQ(0, mounted_layout(CRASH, &l, "kernel recovery"));

	rc = e2fsck_replay(TOOL, out, sizeof(out));
	EXPECT_EQ(0, rc);
	EXPECT_NE(NULL, strstr(out, "Journal checksum error found")) diag_lines("e2fsck: ", out);
	EXPECT_EQ(0, fsck_clean(TOOL, "e2fsck replay"));
	EXPECT_EQ(0, mounted_layout(TOOL, &l, "after e2fsck"));
	unlink(CRASH);
	unlink(TOOL);
}

/*
 * Fast commits of an older transaction stay in the area after later full commits; they must
 * not be replayed: f was appended (fast commit), then truncated to 8 KiB and committed in
 * full; after the power cut it must be 8 KiB, not the stale fast commit's 36 KiB.
 */
TEST(stale_fc_area)
{
	struct fcfs fs = { .loop = -1 };
	unsigned long head = 0, seq, last = 0;
	unsigned char b[4096];
	int type, n = -1;
	long long pb;
	struct jsb j;
	char *got, *p;
	int fd;

	start(_metadata, &fs);
	ASSERT_EQ(0, pat_create(M("f"), 0644, 1, 32 * KB));
	ASSERT_EQ(0, syncfs_path(FC_MNT));
	ASSERT_EQ(0, append_fsync(M("f"), 1, 32 * KB, 4 * KB));
	ASSERT_EQ(0, syncfs_path(FC_MNT));
	fd = open(M("f"), O_WRONLY | O_CLOEXEC);
	ASSERT_EQ(0, ftruncate(fd, 8 * KB));
	close(fd);
	ASSERT_EQ(0, syncfs_path(FC_MNT));
	/* something left uncommitted */
	ASSERT_EQ(0, pat_create(M("g"), 0644, 3, 4 * KB));
	ASSERT_EQ(0, fc_power_cut(&fs, CRASH));

	/* the old fast commit is still in the area: HEAD (tid 3) then ADD_RANGE */
	ASSERT_EQ(0, jsb_read(CRASH, 4096, &j));
	pb = journal_pblk(CRASH, jsb_fc_first(&j));
	fd = open(CRASH, O_RDONLY | O_CLOEXEC);
	ASSERT_EQ(4096, pread(fd, b, 4096, pb * 4096));
	close(fd);
	EXPECT_EQ(9, b[0] | b[1] << 8);
	EXPECT_EQ(1, b[12] | b[13] << 8);
	/* debugfs sees it stale too: it stops at the HEAD, whose tid is not the expected one */
	got = fc_area(CRASH);
	ASSERT_NE(NULL, got);
	for (p = logdump_out; (p = strstr(p, "Found expected sequence ")); p++)
		if (sscanf(p, "Found expected sequence %lu, type %d", &seq, &type) == 2 &&
		    type == 2 && seq > last)
			last = seq;
	type = sscanf(got, "tag HEAD, features 0x0, tid %lu\n%n", &head, &n);
	printf("# stale area: HEAD of tid %lu; the log's last full commit: %lu\n", head, last);
	EXPECT_EQ(1, type);
	EXPECT_LT(head, last + 1);
	/* nothing listed after the HEAD */
	EXPECT_TRUE(n > 0 && !got[n]) TH_LOG("%s", got);
	unlink(DISK);
	recover_both(_metadata, 8 * KB);
}

/*
 * data=writeback frees a block at once: a block truncated away from x is given to w in the
 * same transaction, and one fast commit holds w's new range and x's removed one.  The records
 * of a fast commit describe what holds after it, in no particular order (w's come first here:
 * w was logged first), so replay maps the block to w while x still has it, then unmaps it from
 * x: the block must stay allocated to w, not end up free while w maps it (e2fsck: "block
 * bitmap differences"; the next allocation would cross-link it).  Then the same log replayed
 * with data=ordered, where a freed block is not reusable until its transaction commits.
 */
static void writeback_pass_on(struct __test_metadata *_metadata, const char *replay_opts)
{
	struct layout lw = { 1, { { 5, 0, 4 * KB } } }, lx = { 0 };
	struct fcfs fs = { .loop = -1 };
	long long px, pw;
	char why[256];
	off_t off = 0;
	int fd, w, rc;

	setlinebuf(stdout);
	ASSERT_EQ(0, fc_start(&fs, "fast_commit", 4096, DISK,
			      "commit=600,data=writeback,nodelalloc"));
	ASSERT_EQ(0, pat_create(M("x"), 0644, 1, 4 * KB));
	/* a fresh mount: no preallocation left over from x */
	ASSERT_EQ(0, fs_umount(&fs));
	ASSERT_EQ(0, fs_mount(&fs, 0, "commit=600,data=writeback,nodelalloc"));
	/*
	 * Every other block taken (the clusters ext4 keeps for metadata too), so that the
	 * next allocation can only be x's block; each file closed discards its preallocation
	 * for the next to take.
	 */
	snprintf(why, sizeof(why), "/sys/fs/ext4/loop%d/reserved_clusters", fs.loop);
	ASSERT_EQ(0, write_file(why, "0"));
	for (int i = 0; i < 8; i++) {
		char name[PATH_MAX];
		off_t before;

		snprintf(name, sizeof(name), "%s/fill%d", FC_MNT, i);
		fd = open(name, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		ASSERT_LE(0, fd);
		off = 0;
		for (off_t step = 1 << 24; step >= 4096; step /= 2)
			while (!fallocate(fd, 0, off, step))
				off += step;
		before = off;
		close(fd);
		if (!before)
			break;
	}
	ASSERT_EQ(0, syncfs_path(FC_MNT));
	usleep(30 * 1000);
	px = fiemap_first(M("x"), 4096, NULL);
	ASSERT_LT(0, px);

	w = open(M("w"), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	ASSERT_LE(0, w);
	ASSERT_EQ(0, truncate(M("x"), 0));
	ASSERT_EQ(0, pat_pwrite(w, 5, 0, 4 * KB));
	pw = fiemap_first(M("w"), 4096, NULL);
	printf("# x's block %lld, w's block %lld\n", px, pw);
	ASSERT_EQ(px, pw) TH_LOG("the allocator did not reuse x's block");
	ASSERT_EQ(0, fsync(w));
	close(w);
	ASSERT_EQ(0, fc_power_cut(&fs, CRASH));
	unlink(DISK);

	rc = fs_open(&fs, CRASH, 0, replay_opts);
	ASSERT_EQ(0, rc) TH_LOG("replaying mount: %s", strerror(-rc));
	EXPECT_EQ(0, check_layout(M("w"), &lw, why, sizeof(why))) TH_LOG("w: %s", why);
	EXPECT_EQ(0, check_layout(M("x"), &lx, why, sizeof(why))) TH_LOG("x: %s", why);
	EXPECT_EQ(px, fiemap_first(M("w"), 4096, NULL));
	fs_close(&fs);
	EXPECT_EQ(0, fsck_clean(CRASH, "kernel replay"));
	unlink(CRASH);
}

TEST(writeback_block_passed_on)		{ writeback_pass_on(_metadata, "data=writeback"); }
TEST(writeback_block_passed_on_ordered)	{ writeback_pass_on(_metadata, "data=ordered"); }

#ifndef EXT4_IOC_CHECKPOINT
#define EXT4_IOC_CHECKPOINT _IOW('f', 43, __u32)
#endif

/*
 * A fast commit right after a journal flush (FIFREEZE/FITHAW, EXT4_IOC_CHECKPOINT, online
 * resize): the flush marks the log empty on disk until the next full commit, and recovery
 * does not read the fast-commit area of an empty log.  Stock 6.1 writes the fast commit
 * anyway and loses the appended bytes at the power cut (patches/fixes/0011 mends it: the
 * fsync commits in full); ours does the same as the fix.  control_no_flush: the same
 * without the flush.
 */
enum trig { T_NONE, T_FREEZE, T_CHECKPOINT, T_RESIZE };

static int run_case(struct __test_metadata *_metadata, enum trig t)
{
	const char *disk = FC_DIR "/bdisk.img", *crash = FC_DIR "/bcrash.img";
	char tpl[PATH_MAX], why[256];
	struct fcfs fs = { .loop = -1 };
	struct fcinfo f0, f1;
	int fd, r;

	setlinebuf(stdout);
	if (make_template(tpl, sizeof(tpl), "fast_commit", 4096, FC_IMG_SIZE) ||
	    sparse_copy(tpl, disk))
		return -1;
	if (t == T_RESIZE && truncate(disk, 96 << 20))
		return -1;
	if (fs_open(&fs, disk, 0, "commit=600"))
		return -1;
	if (pat_create(FC_MNT "/f", 0644, 1, 32 * 1024) || syncfs_path(FC_MNT))
		return -1;

	if (!is_loop_mount(FC_MNT, fs.loop))
		return -1;
	fd = open(FC_MNT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	switch (t) {
	case T_NONE:
		r = 0;
		break;
	case T_FREEZE:
		r = ioctl(fd, FIFREEZE, 0) || ioctl(fd, FITHAW, 0);
		break;
	case T_CHECKPOINT: {
		__u32 fl = 0;

		r = ioctl(fd, EXT4_IOC_CHECKPOINT, &fl);
		break;
	}
	case T_RESIZE: {
		__u64 n = (80ULL << 20) / 4096;

		r = ioctl(fd, EXT4_IOC_RESIZE_FS, &n);
		break;
	}
	}
	close(fd);
	EXPECT_EQ(0, r) TH_LOG("trigger: %s", strerror(errno));

	fcinfo_read(fs.loop, &f0, NULL, 0);
	fd = open(FC_MNT "/f", O_WRONLY | O_CLOEXEC);
	r = pat_pwrite(fd, 1, 32 * 1024, 4096) || fsync(fd);
	close(fd);
	EXPECT_EQ(0, r);
	fcinfo_read(fs.loop, &f1, NULL, 0);
	printf("# the fsync: %ld fast commits, %ld ineligible\n", f1.commits - f0.commits,
	       f1.ineligible - f0.ineligible);

	EXPECT_EQ(0, fs_shutdown(FC_MNT, EXT4_GOING_FLAGS_NOLOGFLUSH));
	EXPECT_EQ(0, sparse_copy(disk, crash));
	fs_close(&fs);
	unlink(disk);

	r = fs_open(&fs, crash, 0, "commit=600");
	EXPECT_EQ(0, r);
	if (!r) {
		r = check_layout(FC_MNT "/f", &(struct layout){ 1, { { 1, 0, 36 * 1024 } } },
				 why, sizeof(why));
		if (r)
			printf("# after the kernel's recovery: %s\n", why);
	}
	fs_close(&fs);
	unlink(crash);
	return r;
}

TEST(control_no_flush) { EXPECT_EQ(0, run_case(_metadata, T_NONE)); }
TEST(freeze_thaw_then_fsync) { EXPECT_EQ(0, run_case(_metadata, T_FREEZE)); }
TEST(checkpoint_then_fsync) { EXPECT_EQ(0, run_case(_metadata, T_CHECKPOINT)); }
TEST(resize_then_fsync) { EXPECT_EQ(0, run_case(_metadata, T_RESIZE)); }

/*
 * N single-block fast commits (4 KiB appends) after a full commit, then the power cut.  The
 * fast-commit area of a 64 MiB fs has 16 blocks (mke2fs: journal/64), of which jbd2 uses 15
 * (jbd2_fc_get_buf() hands out j_fc_first .. j_fc_last - 1); with all 15 holding valid fast
 * commits, recovery reads block j_fc_last too (fc_do_one_pass() loops while <= j_fc_last),
 * which is one past the journal's end: the read fails and so does the mount (stock 6.1;
 * patches/fixes/0012 stops the scan at the area's last block).  Every append must be there.
 */
static void area_case(struct __test_metadata *_metadata, int n)
{
	const char *disk = DISK, *crash = CRASH;
	struct layout l = { 1, { { 1, 0, 32 * 1024 + n * 4096ULL } } };
	struct fcfs fs = { .loop = -1 };
	struct fcinfo f0, f1;
	char why[256], out[8192];
	int fd, r, i;

	setlinebuf(stdout);
	ASSERT_EQ(0, fc_start(&fs, "fast_commit", 4096, disk, "commit=600"));
	ASSERT_EQ(0, pat_create(FC_MNT "/f", 0644, 1, 32 * 1024));
	ASSERT_EQ(0, syncfs_path(FC_MNT));
	fcinfo_read(fs.loop, &f0, NULL, 0);
	fd = open(FC_MNT "/f", O_WRONLY | O_CLOEXEC);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, pat_pwrite(fd, 1, 32 * 1024 + i * 4096, 4096));
		ASSERT_EQ(0, fsync(fd));
	}
	close(fd);
	fcinfo_read(fs.loop, &f1, NULL, 0);
	printf("# %ld fast commits, %ld blocks, %ld ineligible\n", f1.commits - f0.commits,
	       f1.numblks - f0.numblks, f1.ineligible - f0.ineligible);
	ASSERT_EQ(n, f1.numblks - f0.numblks);
	ASSERT_EQ(0, fc_power_cut(&fs, crash));
	unlink(disk);
	r = fs_open(&fs, crash, 0, "commit=600");
	EXPECT_EQ(0, r) TH_LOG("kernel replay: mount: %s", strerror(-r));
	if (!r) {
		r = check_layout(FC_MNT "/f", &l, why, sizeof(why));
		EXPECT_EQ(0, r) TH_LOG("kernel replay: %s", why);
	}
	fs_close(&fs);
	if (r) {
		r = e2fsck_replay(crash, out, sizeof(out));
		printf("# e2fsck -E journal_only -y: exit %d\n", r);
		diag_lines("e2fsck: ", out);
	}
	unlink(crash);
}

TEST(fc_area_14_blocks)		{ area_case(_metadata, 14); }
TEST(fc_area_full_15_blocks)	{ area_case(_metadata, 15); }

/*
 * A file unlinked while open (its inode stays, nlink 0, on the orphan list), then another
 * file appended and fsynced: the fast commit carries [DEL_ENTRY victim, ..., INODE victim]
 * with the victim's raw inode at nlink 0.  Stock's replay unlinks (and frees) the victim,
 * then ext4_fc_replay_inode() writes that inode back and cannot iget it ("Inode not found":
 * -EFSCORRUPTED): the recovery fails and so does the mount (EIO); patches/fixes/0013 skips
 * such an INODE record.  The victim must be gone and the other file's data there.
 */
TEST(unlink_open_file_then_fsync)
{
	const char *disk = DISK, *crash = CRASH;
	struct layout l = { 1, { { 1, 0, 8192 } } };
	struct fcfs fs = { .loop = -1 };
	char why[256], out[16384];
	int fd, r;

	setlinebuf(stdout);
	ASSERT_EQ(0, fc_start(&fs, "fast_commit", 4096, disk, "commit=600"));
	ASSERT_EQ(0, pat_create(FC_MNT "/other", 0644, 1, 4096));
	ASSERT_EQ(0, pat_create(FC_MNT "/victim", 0644, 2, 4096));
	ASSERT_EQ(0, syncfs_path(FC_MNT));
	fd = open(FC_MNT "/victim", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, unlink(FC_MNT "/victim"));
	r = open(FC_MNT "/other", O_WRONLY | O_CLOEXEC);
	ASSERT_EQ(0, pat_pwrite(r, 1, 4096, 4096));
	ASSERT_EQ(0, fsync(r));
	close(r);
	ASSERT_EQ(0, fs_shutdown(FC_MNT, EXT4_GOING_FLAGS_NOLOGFLUSH));
	ASSERT_EQ(0, sparse_copy(disk, crash));
	close(fd);
	fs_close(&fs);
	unlink(disk);
	run_cmd(out, sizeof(out), "debugfs", "-R", "logdump", (char *)crash);
	diag_lines("logdump: ", strstr(out, "*** Fast") ?: out);
	fc_trace(true);
	r = fs_open(&fs, crash, 0, "commit=600");
	fc_trace(false);
	EXPECT_EQ(0, r) TH_LOG("kernel replay: mount: %s", strerror(-r));
	if (r)
		fc_trace_print(20);
	if (!r) {
		EXPECT_NE(0, access(FC_MNT "/victim", F_OK));
		r = check_layout(FC_MNT "/other", &l, why, sizeof(why));
		EXPECT_EQ(0, r) TH_LOG("%s", why);
	}
	fs_close(&fs);
	if (!r) {
		EXPECT_EQ(0, fsck_clean(crash, "kernel replay"));
	}
	unlink(crash);
}

/* The power cut, then the kernel's replay: the crash image mounted with @opts. */
static int cut_and_replay(struct fcfs *fs, const char *opts)
{
	int rc = fc_power_cut(fs, CRASH);

	unlink(DISK);
	return rc ?: fs_open(fs, CRASH, 0, opts);
}

/*
 * An inode number deleted and created again between the last full commit and the power cut
 * (found by ext4-fast-commit-fuzz, seed 20261207, cases 7 and 16).  A directory removed and
 * its number taken by a file in the same fast commit: after the replay the parent's link
 * count and the group's directory count must have let the directory go (stock 6.1 keeps
 * both: e2fsck "ref count is 4, should be 3", "Directories count wrong").
 */
TEST(rmdir_then_file_reuses_number)
{
	struct layout lf = { 1, { { 3, 0, 8 * KB } } };
	struct fcfs fs = { .loop = -1 };
	unsigned long dino, fino;
	struct stat st;
	nlink_t nlink;
	char why[256];
	int rc;

	start(_metadata, &fs);
	ASSERT_EQ(0, stat(FC_MNT, &st));
	nlink = st.st_nlink;
	ASSERT_EQ(0, mkdir(M("d"), 0755));
	ASSERT_EQ(0, syncfs_path(FC_MNT));
	dino = ino_of(M("d"));
	ASSERT_EQ(0, rmdir(M("d")));
	ASSERT_EQ(0, pat_create(M("f"), 0644, 3, 8 * KB));
	fino = ino_of(M("f"));
	if (fino != dino) {
		fs_close(&fs);
		SKIP(return, "f got inode %lu, not d's %lu", fino, dino);
	}
	ASSERT_EQ(0, fsync_path(M("f"), false));
	rc = cut_and_replay(&fs, "commit=600");
	ASSERT_EQ(0, rc) TH_LOG("power cut and replay: %s", strerror(-rc));
	EXPECT_NE(0, access(M("d"), F_OK));
	EXPECT_EQ(0, check_layout(M("f"), &lf, why, sizeof(why))) TH_LOG("f: %s", why);
	ASSERT_EQ(0, stat(FC_MNT, &st));
	EXPECT_EQ(nlink, st.st_nlink);
	fs_close(&fs);
	EXPECT_EQ(0, fsck_clean(CRASH, "kernel replay"));
	unlink(CRASH);
}

/*
 * A file with an extent tree of its own (eight extents: a leaf block) deleted and its number
 * taken by a new directory, then another file written and fsynced (data=writeback: it may
 * get the deleted file's blocks at once).  The replay frees the old tree, whose leaf block
 * is checksummed with the old inode's generation, and the directory's new blocks: the
 * mount must succeed (ours before the fix: "extent tree corrupted", then ENOSPC claiming the
 * blocks the old tree freed), the directory be empty and the file whole.
 */
TEST(file_number_reused_by_dir)
{
	struct layout lg = { 1, { { 4, 0, 64 * KB } } };
	struct fcfs fs = { .loop = -1 };
	unsigned long nino, dino;
	struct stat st;
	char why[256];
	int fd, rc;

	setlinebuf(stdout);
	ASSERT_EQ(0, fc_start(&fs, "fast_commit", 4096, DISK, "commit=600,data=writeback"));
	fd = open(M("n"), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	ASSERT_LE(0, fd);
	for (int i = 0; i < 8; i++) {
		ASSERT_EQ(0, pat_pwrite(fd, 1, i * 64 * KB, 16 * KB));
	}
	close(fd);
	ASSERT_EQ(0, syncfs_path(FC_MNT));
	nino = ino_of(M("n"));
	ASSERT_EQ(0, unlink(M("n")));
	ASSERT_EQ(0, mkdir(M("d"), 0755));
	dino = ino_of(M("d"));
	if (dino != nino) {
		fs_close(&fs);
		SKIP(return, "d got inode %lu, not n's %lu", dino, nino);
	}
	ASSERT_EQ(0, pat_create(M("g"), 0644, 4, 64 * KB));
	ASSERT_EQ(0, fsync_path(M("g"), false));
	rc = cut_and_replay(&fs, "commit=600,data=writeback");
	ASSERT_EQ(0, rc) TH_LOG("power cut and replay: %s", strerror(-rc));
	EXPECT_NE(0, access(M("n"), F_OK));
	ASSERT_EQ(0, stat(M("d"), &st));
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	EXPECT_EQ(2, st.st_nlink);
	EXPECT_EQ(0, check_layout(M("g"), &lg, why, sizeof(why))) TH_LOG("g: %s", why);
	fs_close(&fs);
	EXPECT_EQ(0, fsck_clean(CRASH, "kernel replay"));
	unlink(CRASH);
}

/*
 * The ext4_fc_* tracepoints (6.1's names; their fields are each implementation's own): the
 * tracking and commit events fire for fsyncs that fast-commit a create, a link and an unlink,
 * and the replay events at the next mount name the created inode.  Catches events that are
 * missing, never reached or that trace another inode than the one replayed.
 */
static const char * const fc_events[] = {
	"ext4_fc_track_inode", "ext4_fc_track_range", "ext4_fc_track_create",
	"ext4_fc_track_link", "ext4_fc_track_unlink", "ext4_fc_commit_start",
	"ext4_fc_commit_stop", "ext4_fc_cleanup", "ext4_fc_replay_scan", "ext4_fc_replay",
};

static int fc_events_enable(bool on)
{
	return fc_trace_events(fc_events, sizeof(fc_events) / sizeof(fc_events[0]), on);
}

/* How many lines of the trace buffer carry EVENT (as "EVENT:") and, if non-NULL, WORD too. */
static int trace_count(const char *buf, const char *event, const char *word)
{
	char tag[64];
	const char *p, *eol;
	int n = 0;

	snprintf(tag, sizeof(tag), " %s:", event);
	for (p = buf; (p = strstr(p, tag)); p = eol) {
		const char *w;

		eol = strchrnul(p, '\n');
		if (!word) {
			n++;
			continue;
		}
		for (w = p; (w = strstr(w, word)) && w < eol; w++)
			if (!isdigit((unsigned char)w[strlen(word)])) {
				n++;
				break;
			}
	}
	return n;
}

TEST(tracepoints)
{
	static char buf[1 << 20];
	struct fcfs fs = { .loop = -1 };
	char word[64];
	unsigned long n;
	ssize_t len;
	size_t i;

	start(_metadata, &fs);
	ASSERT_EQ(0, pat_create(M("f"), 0644, 1, 8 * KB));
	ASSERT_EQ(0, syncfs_path(FC_MNT));
	ASSERT_EQ(0, fc_events_enable(true));
	ASSERT_EQ(0, pat_create(M("new"), 0644, 2, 5000));
	ASSERT_EQ(0, fsync_path(M("new"), false));
	n = ino_of(M("new"));
	ASSERT_EQ(0, link(M("f"), M("l")));
	ASSERT_EQ(0, fsync_path(M("f"), false));
	ASSERT_EQ(0, unlink(M("l")));
	ASSERT_EQ(0, fsync_path(M("f"), false));
	ASSERT_EQ(0, fc_power_cut(&fs, CRASH));
	len = read_small(TRACEFS "/trace", buf, sizeof(buf));
	ASSERT_LT(0, len);
	for (i = 0; i < 8; i++) {
		EXPECT_LT(0, trace_count(buf, fc_events[i], NULL)) TH_LOG("no %s", fc_events[i]);
	}
	/* three fsyncs, each one a commit that starts and stops */
	EXPECT_LE(3, trace_count(buf, "ext4_fc_commit_start", NULL));
	EXPECT_EQ(trace_count(buf, "ext4_fc_commit_start", NULL),
		  trace_count(buf, "ext4_fc_commit_stop", NULL));
	snprintf(word, sizeof(word), "ino %lu", n);
	EXPECT_LT(0, trace_count(buf, "ext4_fc_track_create", word));

	ASSERT_EQ(0, write_file(TRACEFS "/trace", ""));
	ASSERT_EQ(0, fs_open(&fs, CRASH, 0, "commit=600"));
	EXPECT_EQ(0, access(M("new"), F_OK));
	fs_close(&fs);
	ASSERT_EQ(0, fc_events_enable(false));
	len = read_small(TRACEFS "/trace", buf, sizeof(buf));
	ASSERT_LT(0, len);
	EXPECT_LT(0, trace_count(buf, "ext4_fc_replay_scan", NULL));
	/* the created inode's INODE, ADD_RANGE and CREAT records */
	EXPECT_LE(3, trace_count(buf, "ext4_fc_replay", word)) diag_lines("trace: ", buf);
	unlink(CRASH);
	unlink(DISK);
}

/*
 * Cases from a review of ours (each must hold on any correct implementation).  The first
 * fsync after a mount commits in full, so each starts with one, then syncfs.
 */
static void warm(struct __test_metadata *_metadata, struct fcfs *fs)
{
	start(_metadata, fs);
	ASSERT_EQ(0, pat_create(M("w"), 0644, 9, 4096));
	ASSERT_EQ(0, fsync_path(M("w"), false));
	ASSERT_EQ(0, syncfs_path(FC_MNT));
}

/* A directory's own inode changed (chmod), then fsync of the directory: the mode is kept. */
TEST(dir_chmod_then_dir_fsync)
{
	struct fcfs fs = { .loop = -1 };
	struct stat st;

	warm(_metadata, &fs);
	ASSERT_EQ(0, mkdir(M("d"), 0755));
	ASSERT_EQ(0, syncfs_path(FC_MNT));
	ASSERT_EQ(0, chmod(M("d"), 0700));
	ASSERT_EQ(0, fsync_path(M("d"), false));
	ASSERT_EQ(0, cut_and_replay(&fs, "commit=600"));
	ASSERT_EQ(0, stat(M("d"), &st));
	EXPECT_EQ(0700, st.st_mode & 07777) TH_LOG("mode %o after replay", st.st_mode & 07777);
	fs_close(&fs);
	EXPECT_EQ(0, fsck_clean(CRASH, "kernel replay"));
	unlink(CRASH);
}

/*
 * A new directory's inode evicted (drop_caches) before a file created in it is fsynced (a
 * fast commit): the directory and the file are there after the replay, e2fsck clean (stock
 * 6.1 leaves the directory's counts wrong: patches/fixes/0020).
 */
TEST(new_dir_evicted_then_child_fsync)
{
	struct layout l = { 1, { { 5, 0, 8 * KB } } };
	struct fcfs fs = { .loop = -1 };
	struct fcinfo f0, f1;
	char why[256];
	int r;

	warm(_metadata, &fs);
	ASSERT_EQ(0, mkdir(M("d"), 0755));
	ASSERT_EQ(0, write_file("/proc/sys/vm/drop_caches", "2"));
	ASSERT_EQ(0, fcinfo_read(fs.loop, &f0, NULL, 0));
	ASSERT_EQ(0, pat_create(M("d/f"), 0644, 5, 8 * KB));
	ASSERT_EQ(0, fsync_path(M("d/f"), false));
	ASSERT_EQ(0, fcinfo_read(fs.loop, &f1, NULL, 0));
	EXPECT_EQ(1, f1.commits - f0.commits) TH_LOG("not a fast commit: ineligible %ld",
						     f1.ineligible - f0.ineligible);
	ASSERT_EQ(0, cut_and_replay(&fs, "commit=600"));
	r = check_layout(M("d/f"), &l, why, sizeof(why));
	EXPECT_EQ(0, r) TH_LOG("%s", why);
	fs_close(&fs);
	EXPECT_EQ(0, fsck_clean(CRASH, "kernel replay"));
	unlink(CRASH);
}

/*
 * The crash image mounted read-only first, then read-write: the fsynced file is there both
 * times (stock 6.1 refuses the read-only mount with EIO; printed, not judged).
 */
TEST(ro_mount_then_rw)
{
	struct layout l = { 1, { { 7, 0, 12 * KB } } };
	struct fcfs fs = { .loop = -1 };
	char why[256];
	int r;

	warm(_metadata, &fs);
	ASSERT_EQ(0, pat_create(M("f"), 0644, 7, 12 * KB));
	ASSERT_EQ(0, fsync_path(M("f"), false));
	ASSERT_EQ(0, fc_power_cut(&fs, CRASH));
	unlink(DISK);
	r = fs_open(&fs, CRASH, MS_RDONLY, "");
	printf("# read-only mount of the crash image: %s\n", r ? strerror(-r) : "ok");
	if (!r) {
		r = check_layout(M("f"), &l, why, sizeof(why));
		EXPECT_EQ(0, r) TH_LOG("read-only: %s", why);
	}
	fs_close(&fs);
	ASSERT_EQ(0, fs_open(&fs, CRASH, 0, "commit=600"));
	r = check_layout(M("f"), &l, why, sizeof(why));
	EXPECT_EQ(0, r) TH_LOG("read-write after read-only: %s", why);
	fs_close(&fs);
	EXPECT_EQ(0, fsck_clean(CRASH, "after both mounts"));
	unlink(CRASH);
}

TEST_HARNESS_MAIN

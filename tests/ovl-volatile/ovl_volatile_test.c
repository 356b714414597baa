// SPDX-License-Identifier: GPL-2.0
/*
 * overlayfs "volatile" mount option.
 *
 * The reference is Debian's 6.1 (upstream's implementation, including the 5.11 follow-up that
 * reports upper writeback errors):
 *  - "volatile" needs an upper layer; without one it is ignored with a message;
 *  - it is shown in /proc/mounts;
 *  - the overlay then skips every sync it would issue to the upper layer (fsync, fdatasync,
 *    syncfs, RWF_[D]SYNC writes, asynchronous writes to O_[D]SYNC files, the fsync of copy-up,
 *    directory fsync, the sync at unmount and at a read-only remount) -- but a synchronous
 *    write to a file opened O_SYNC or O_DSYNC is still synced by the upper file system, as its
 *    upper file is opened with those flags; msync() of a shared mapping reaches the upper
 *    file directly; and sync(2) syncs the upper file system like every other;
 *  - the mount creates <workdir>/work/incompat/volatile/dirty, and any later mount of that
 *    work directory is refused (EINVAL, "overlay with incompat feature 'volatile' cannot be
 *    mounted") until work/incompat/volatile is removed;
 *  - fsync and syncfs of a volatile overlay report every writeback error the upper file system
 *    records after the mount, and a volatile mount is refused (EIO) while the upper file system
 *    has an error nobody has seen yet.
 *
 * Layers: the lower layer is always on a tmpfs.  The option and marker tests put upper and work
 * on that tmpfs too.  The sync tests put them on an ext4 disk (virtio-blk, serial "ovl-ext4",
 * host cache=none, made by the group's host-setup) and count the flushes and writes the disk
 * completed (/sys/block/vdX/stat fields 16 and 5).  The error tests put them on an XFS disk
 * (serial "ovl-xfs") and shut it down with XFS_IOC_GOINGDOWN, so that writeback of the data
 * left in the page cache fails.
 *
 * To count only what the overlay asks for, the ext4 upper is mounted with commit=600 and the
 * flusher thread is kept asleep (vm.dirty_writeback_centisecs and dirty_expire_centisecs of an
 * hour): neither the journal thread nor the flusher writes anything during a measurement, and
 * the data the error tests leave in the page cache stays there until a test writes it back.
 * Each test mounts the ext4 afresh (its journal empty, so that ext4 has no checkpoint to do),
 * and each measurement starts after a syncfs of it, so earlier work has nothing left to write.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/aio_abi.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ovl_disk.h"
#include "ovl_util.h"

/* fs/xfs/libxfs/xfs_fs.h: not part of the UAPI headers. */
#define XFS_IOC_GOINGDOWN		_IOR('X', 125, uint32_t)
#define XFS_FSOP_GOING_FLAGS_NOLOGFLUSH	0x2

#ifndef RWF_DSYNC
#define RWF_DSYNC	0x00000002
#endif
#ifndef RWF_SYNC
#define RWF_SYNC	0x00000004
#endif

#define TMP_MNT		"/tmp/ovlv"		/* a tmpfs per test: lower (and upper) layers */
#define EXT4_SERIAL	"ovl-ext4"
#define EXT4_MNT	"/mnt/ovlv-ext4"
#define EXT4_OPTS	"commit=600"
#define XFS_SERIAL	"ovl-xfs"
#define XFS_MNT		"/mnt/ovlv-xfs"
#define MARKER		"work/incompat/volatile/dirty"	/* under the workdir */

/*
 * Kernel log messages the tests wait for, as words that must all appear in one record: the
 * wording of a message is not ABI, but overlayfs must say what it refused and why.
 */
#define MSG_INCOMPAT	"overlayfs:|incompat|volatile"
#define MSG_NO_UPPER	"overlayfs:|\"volatile\"|upper"
#define MSG_UNSEEN	"overlayfs:|volatile|error"
#define MSG_UNKNOWN	"overlayfs: unrecognized mount option \"volatile=on\""

#define PATH_LEN	256
#define NFILES		200		/* files of the fsync workload */
#define FILE_SZ		4096

/* ---- kernel messages: /dev/kmsg from "now" on ---- */

static int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/* Whether a record logged since kmsg_open() contains needle. */
/* Whether every '|'-separated word of words appears in this record. */
static bool record_has_all(const char *rec, const char *words)
{
	char word[256];
	const char *end;
	size_t len;

	for (;;) {
		end = strchr(words, '|');
		len = end ? (size_t)(end - words) : strlen(words);
		if (len >= sizeof(word))
			return false;
		memcpy(word, words, len);
		word[len] = '\0';
		if (!strstr(rec, word))
			return false;
		if (!end)
			return true;
		words = end + 1;
	}
}

/* Whether a kernel log record read from fd (opened by kmsg_open()) has all the words. */
static bool kmsg_seen(int fd, const char *words)
{
	char rec[2048];
	bool found = false;
	ssize_t n;

	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* records overwritten: go on with the next */
		if (n <= 0)
			break;
		rec[n] = '\0';
		if (record_has_all(rec, words))
			found = true;
	}
	return found;
}

/* ---- block devices ---- */


/* ---- file contents ---- */

/* A pattern that differs for every file (seed) and every 8 bytes. */
static void fill(char *buf, size_t len, uint64_t seed, uint64_t off)
{
	size_t i;

	for (i = 0; i < len; i++) {
		uint64_t x = (seed * 0x9e3779b97f4a7c15ULL) ^ ((off + i) / 8 * 0xbf58476d1ce4e5b9ULL);

		x ^= x >> 29;
		buf[i] = (char)(x >> (8 * ((off + i) % 8)));
	}
}

/* Creates (or truncates) path and writes len bytes of pattern seed; keeps the fd if fdp. */
static int write_file(const char *path, size_t len, uint64_t seed, int *fdp)
{
	char buf[FILE_SZ];
	size_t done = 0;
	int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);

	if (fd < 0)
		return -errno;
	while (done < len) {
		size_t n = len - done < sizeof(buf) ? len - done : sizeof(buf);

		fill(buf, n, seed, done);
		if (write(fd, buf, n) != (ssize_t)n) {
			int err = errno ? -errno : -EIO;

			close(fd);
			return err;
		}
		done += n;
	}
	if (fdp)
		*fdp = fd;
	else
		close(fd);
	return 0;
}

/* 0 if path holds exactly len bytes of pattern seed. */
static int check_file(const char *path, size_t len, uint64_t seed)
{
	char buf[FILE_SZ], want[FILE_SZ];
	size_t done = 0;
	struct stat st;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || (size_t)st.st_size != len) {
		close(fd);
		return -EFBIG;
	}
	while (done < len) {
		size_t n = len - done < sizeof(buf) ? len - done : sizeof(buf);

		fill(want, n, seed, done);
		if (read(fd, buf, n) != (ssize_t)n || memcmp(buf, want, n)) {
			close(fd);
			return -EILSEQ;
		}
		done += n;
	}
	close(fd);
	return 0;
}

/* ---- overlay mounts ---- */

struct layers {
	char base[96];
	char lower[128];
	char upper[128];
	char work[128];
	char merged[128];
	char marker[PATH_LEN];	/* work/work/incompat/volatile/dirty */
};

/* Lower on the per-test tmpfs; upper, work and the mount point under upper_base. */
static int layers_init(struct layers *l, const char *upper_base, const char *name)
{
	int ret;

	snprintf(l->base, sizeof(l->base), "%s/%s", upper_base, name);
	snprintf(l->lower, sizeof(l->lower), "%s/%s.lower", TMP_MNT, name);
	snprintf(l->upper, sizeof(l->upper), "%s/upper", l->base);
	snprintf(l->work, sizeof(l->work), "%s/work", l->base);
	snprintf(l->merged, sizeof(l->merged), "%s/%s.merged", TMP_MNT, name);
	snprintf(l->marker, sizeof(l->marker), "%s/%s", l->work, MARKER);
	ret = rm_rf(l->base);
	if (!ret)
		ret = mkdir_p(l->upper);
	if (!ret)
		ret = mkdir_p(l->work);
	if (!ret)
		ret = mkdir_p(l->lower);
	if (!ret)
		ret = mkdir_p(l->merged);
	return ret;
}

/* mount(2) of the overlay with the extra options; 0 or -errno. */
static int ovl_mount(const struct layers *l, const char *extra)
{
	char opts[1024];

	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s%s%s",
		 l->lower, l->upper, l->work, extra && *extra ? "," : "", extra ? extra : "");
	return mount("overlay", l->merged, "overlay", 0, opts) ? -errno : 0;
}

static int ovl_umount(const struct layers *l)
{
	return umount(l->merged) ? -errno : 0;
}

static bool exists(const char *path, mode_t type)
{
	struct stat st;

	return !lstat(path, &st) && (st.st_mode & S_IFMT) == type;
}

static int fsync_path(const char *path, int flags, bool data)
{
	int fd = open(path, flags);
	int ret;

	if (fd < 0)
		return -errno;
	ret = data ? fdatasync(fd) : fsync(fd);
	ret = ret ? -errno : 0;
	close(fd);
	return ret;
}

static int syncfs_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY);
	int ret;

	if (fd < 0)
		return -errno;
	ret = syncfs(fd) ? -errno : 0;
	close(fd);
	return ret;
}

/*
 * Settings every test wants: a fresh tmpfs at TMP_MNT, and no writeback but the one asked for.
 * The flusher wakes dirty_writeback_centisecs after an inode is first dirtied, and then also
 * writes back a disk whose share of the dirty threshold is small (a freshly mounted one): an
 * hour keeps it asleep.  (0 would not do: it turns the periodic flush off, but makes that first
 * wakeup immediate.)
 */
static int common_setup(void)
{
	int ret;

	ret = write_str("/proc/sys/vm/dirty_writeback_centisecs", "360000");
	if (!ret)
		ret = write_str("/proc/sys/vm/dirty_expire_centisecs", "360000");
	if (ret)
		return ret;
	umount_all(TMP_MNT);
	ret = mkdir_p(TMP_MNT);
	if (!ret && mount("tmpfs", TMP_MNT, "tmpfs", 0, "size=64m"))
		ret = -errno;
	return ret;
}

/* Unmounts every overlay left on the per-test tmpfs, then the tmpfs. */
static void common_teardown(void)
{
	char line[1024], dev[PATH_LEN], dir[PATH_LEN], type[64];
	char mnts[16][PATH_LEN];
	int n = 0, i;
	FILE *f = fopen("/proc/self/mounts", "r");

	if (f) {
		while (fgets(line, sizeof(line), f) && n < 16)
			if (sscanf(line, "%255s %255s %63s", dev, dir, type) == 3 &&
			    !strcmp(type, "overlay") && !strncmp(dir, TMP_MNT "/", strlen(TMP_MNT) + 1))
				snprintf(mnts[n++], PATH_LEN, "%s", dir);
		fclose(f);
	}
	for (i = n - 1; i >= 0; i--)
		umount2(mnts[i], MNT_DETACH);
	umount_all(TMP_MNT);
}

/* Mounts the disk with this serial at mnt (fresh: any old mount there goes first). */
static int disk_mount(const char *serial, const char *mnt, const char *type, const char *opts,
		      char *dev, size_t devlen)
{
	char path[PATH_LEN];
	int ret;

	ret = find_disk(serial, dev, devlen);
	if (ret)
		return ret;
	umount_all(mnt);
	ret = mkdir_p(mnt);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/dev/%s", dev);
	return mount(path, mnt, type, 0, opts) ? -errno : 0;
}

/* ================= option handling: everything on a tmpfs ================= */

FIXTURE(opts) {
	struct layers l;
};

FIXTURE_SETUP(opts)
{
	ASSERT_EQ(0, common_setup());
	ASSERT_EQ(0, layers_init(&self->l, TMP_MNT, "t"));
	ASSERT_EQ(0, write_file("/tmp/ovlv/t.lower/lowerfile", 8192, 1, NULL));
}

FIXTURE_TEARDOWN(opts)
{
	common_teardown();
}

/* "volatile" with upperdir and workdir: accepted, and the overlay is writable. */
TEST_F(opts, accepted_with_upper)
{
	char path[PATH_LEN];

	ASSERT_EQ(0, ovl_mount(&self->l, "volatile"));
	snprintf(path, sizeof(path), "%s/newfile", self->l.merged);
	ASSERT_EQ(0, write_file(path, 100, 2, NULL));
	snprintf(path, sizeof(path), "%s/newfile", self->l.upper);
	EXPECT_EQ(0, check_file(path, 100, 2));
	EXPECT_EQ(0, ovl_umount(&self->l));
}

/* /proc/mounts shows "volatile" on a volatile overlay and only there. */
TEST_F(opts, shown_in_proc_mounts)
{
	char opts[1536];

	ASSERT_EQ(0, ovl_mount(&self->l, NULL));
	ASSERT_EQ(0, mount_options(self->l.merged, opts, sizeof(opts)));
	TH_LOG("normal:   %s", opts);
	EXPECT_FALSE(has_option(opts, "volatile"));
	ASSERT_EQ(0, ovl_umount(&self->l));

	ASSERT_EQ(0, rm_rf(self->l.work));
	ASSERT_EQ(0, mkdir_p(self->l.work));
	ASSERT_EQ(0, ovl_mount(&self->l, "volatile"));
	ASSERT_EQ(0, mount_options(self->l.merged, opts, sizeof(opts)));
	TH_LOG("volatile: %s", opts);
	EXPECT_TRUE(has_option(opts, "volatile"));
	EXPECT_TRUE(has_option(opts, "rw"));
	EXPECT_EQ(0, ovl_umount(&self->l));
}

/*
 * Without an upper layer the option is meaningless: 6.1 mounts the (read-only) overlay anyway,
 * drops the option (not shown) and says so in the kernel log.  Nothing is created anywhere.
 */
TEST_F(opts, ignored_without_upper)
{
	char opts[1536], data[1024], path[PATH_LEN];
	int kmsg = kmsg_open();

	ASSERT_LE(0, kmsg);
	snprintf(path, sizeof(path), "%s/second", TMP_MNT);
	ASSERT_EQ(0, mkdir_p(path));
	snprintf(data, sizeof(data), "lowerdir=%s:%s,volatile", self->l.lower, path);
	ASSERT_EQ(0, mount("overlay", self->l.merged, "overlay", 0, data) ? -errno : 0);
	EXPECT_TRUE(kmsg_seen(kmsg, MSG_NO_UPPER));
	ASSERT_EQ(0, mount_options(self->l.merged, opts, sizeof(opts)));
	TH_LOG("lower only: %s", opts);
	EXPECT_FALSE(has_option(opts, "volatile"));
	EXPECT_TRUE(has_option(opts, "ro"));
	snprintf(path, sizeof(path), "%s/lowerfile", self->l.merged);
	EXPECT_EQ(0, check_file(path, 8192, 1));
	EXPECT_EQ(0, ovl_umount(&self->l));

	/* lowerdirs and workdir, no upperdir: workdir is ignored too, no marker anywhere */
	snprintf(data, sizeof(data), "lowerdir=%s:%s/second,workdir=%s,volatile",
		 self->l.lower, TMP_MNT, self->l.work);
	ASSERT_EQ(0, mount("overlay", self->l.merged, "overlay", 0, data) ? -errno : 0);
	EXPECT_TRUE(kmsg_seen(kmsg, MSG_NO_UPPER));
	ASSERT_EQ(0, mount_options(self->l.merged, opts, sizeof(opts)));
	EXPECT_FALSE(has_option(opts, "volatile"));
	EXPECT_EQ(0, ovl_umount(&self->l));
	EXPECT_FALSE(exists(self->l.marker, S_IFREG));
	close(kmsg);
}

/*
 * With index=on, redirect_dir=on, metacopy=on (one at a time and together): all accepted and
 * shown, and the overlay works (a metadata-only copy-up, a renamed directory).
 */
TEST_F(opts, with_index_redirect_metacopy)
{
	static const char *const combos[] = {
		"volatile,index=on",
		"redirect_dir=on,volatile",
		"volatile,metacopy=on",
		"index=on,redirect_dir=on,metacopy=on,volatile",
	};
	char opts[1536], from[PATH_LEN], to[PATH_LEN], path[PATH_LEN], miss[64];
	unsigned int i;

	snprintf(path, sizeof(path), "%s/dir", self->l.lower);
	ASSERT_EQ(0, mkdir_p(path));
	for (i = 0; i < ARRAY_SIZE(combos); i++) {
		ASSERT_EQ(0, rm_rf(self->l.work));
		ASSERT_EQ(0, rm_rf(self->l.upper));
		ASSERT_EQ(0, mkdir_p(self->l.work));
		ASSERT_EQ(0, mkdir_p(self->l.upper));
		ASSERT_EQ(0, ovl_mount(&self->l, combos[i])) {
			TH_LOG("mount with %s: %s", combos[i], strerror(errno));
		}
		ASSERT_EQ(0, mount_options(self->l.merged, opts, sizeof(opts)));
		TH_LOG("%s -> %s", combos[i], opts);
		EXPECT_EQ(NULL, missing_option(opts, combos[i], miss, sizeof(miss))) {
			TH_LOG("%s not shown", miss);
		}
		/* metadata-only copy-up with metacopy=on, a full one otherwise */
		snprintf(path, sizeof(path), "%s/lowerfile", self->l.merged);
		EXPECT_EQ(0, chmod(path, 0600));
		EXPECT_EQ(0, check_file(path, 8192, 1));
		snprintf(from, sizeof(from), "%s/dir", self->l.merged);
		snprintf(to, sizeof(to), "%s/dir2", self->l.merged);
		/* metacopy=on turns redirect_dir on by itself */
		if (strstr(combos[i], "redirect_dir=on") || strstr(combos[i], "metacopy=on")) {
			EXPECT_EQ(0, rename(from, to));
		} else {
			EXPECT_EQ(-1, rename(from, to));
			EXPECT_EQ(EXDEV, errno);
		}
		EXPECT_TRUE(exists(self->l.marker, S_IFREG));
		ASSERT_EQ(0, ovl_umount(&self->l));
	}
}

/* With NFS export (which needs the index) and with xino: mounted, shown, marked. */
TEST_F(opts, with_nfs_export_and_xino)
{
	static const char *const combos[] = {
		"volatile,index=on,nfs_export=on",
		"xino=on,volatile",
		"index=on,nfs_export=on,xino=on,volatile",
	};
	char opts[1536], path[PATH_LEN], miss[64];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(combos); i++) {
		ASSERT_EQ(0, rm_rf(self->l.work));
		ASSERT_EQ(0, rm_rf(self->l.upper));
		ASSERT_EQ(0, mkdir_p(self->l.work));
		ASSERT_EQ(0, mkdir_p(self->l.upper));
		ASSERT_EQ(0, ovl_mount(&self->l, combos[i])) {
			TH_LOG("mount with %s: %s", combos[i], strerror(errno));
		}
		ASSERT_EQ(0, mount_options(self->l.merged, opts, sizeof(opts)));
		TH_LOG("%s -> %s", combos[i], opts);
		/* xino=on falls back to off with every layer on one file system: not shown */
		EXPECT_EQ(NULL, missing_option(opts, combos[i][0] == 'x' ? "volatile" :
					       "volatile,index=on,nfs_export=on", miss,
					       sizeof(miss))) {
			TH_LOG("%s not shown", miss);
		}
		snprintf(path, sizeof(path), "%s/lowerfile", self->l.merged);
		EXPECT_EQ(0, chmod(path, 0600));
		EXPECT_TRUE(exists(self->l.marker, S_IFREG));
		ASSERT_EQ(0, ovl_umount(&self->l));
	}
}

/*
 * A read-only upper, whether the file system is mounted read-only or the upper directory is
 * on a read-only bind mount of a writable one, is refused (EINVAL) and leaves no marker.
 */
TEST_F(opts, readonly_upper)
{
	char base[PATH_LEN];

	snprintf(base, sizeof(base), "%s/ro", TMP_MNT);
	ASSERT_EQ(0, mkdir_p(base));
	ASSERT_EQ(0, mount("tmpfs", base, "tmpfs", 0, "size=4m"));
	ASSERT_EQ(0, layers_init(&self->l, base, "t"));
	ASSERT_EQ(0, mount(NULL, base, NULL, MS_REMOUNT | MS_RDONLY, NULL));
	EXPECT_EQ(-EINVAL, ovl_mount(&self->l, "volatile"));
	EXPECT_FALSE(exists(self->l.marker, S_IFREG));

	ASSERT_EQ(0, mount(NULL, base, NULL, MS_REMOUNT, NULL));
	ASSERT_EQ(0, mount(base, base, NULL, MS_BIND, NULL));
	ASSERT_EQ(0, mount(NULL, base, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL));
	EXPECT_EQ(-EINVAL, ovl_mount(&self->l, "volatile"));
	EXPECT_FALSE(exists(self->l.marker, S_IFREG));
	umount_all(base);
}

/* "volatile" takes no value: "volatile=on" is an unknown option. */
TEST_F(opts, takes_no_value)
{
	int kmsg = kmsg_open();

	ASSERT_LE(0, kmsg);
	EXPECT_EQ(-EINVAL, ovl_mount(&self->l, "volatile=on"));
	EXPECT_TRUE(kmsg_seen(kmsg, MSG_UNKNOWN));
	EXPECT_EQ(0, ovl_mount(&self->l, "volatile"));
	EXPECT_EQ(0, ovl_umount(&self->l));
	close(kmsg);
}

/* ================= the incompat marker ================= */

FIXTURE(marker) {
	struct layers l;
	char incompat[160];		/* work/work/incompat */
	char voldir[PATH_LEN];		/* work/work/incompat/volatile */
};

FIXTURE_SETUP(marker)
{
	ASSERT_EQ(0, common_setup());
	ASSERT_EQ(0, layers_init(&self->l, TMP_MNT, "m"));
	snprintf(self->incompat, sizeof(self->incompat), "%s/work/incompat", self->l.work);
	snprintf(self->voldir, sizeof(self->voldir), "%s/volatile", self->incompat);
	ASSERT_EQ(0, write_file("/tmp/ovlv/m.lower/lowerfile", 8192, 1, NULL));
}

FIXTURE_TEARDOWN(marker)
{
	common_teardown();
}

/* A volatile mount leaves work/incompat/volatile/dirty (an empty file); a normal one does not. */
TEST_F(marker, created_at_mount)
{
	char path[PATH_LEN];
	struct stat st;

	ASSERT_EQ(0, ovl_mount(&self->l, NULL));
	EXPECT_FALSE(exists(self->incompat, S_IFDIR));
	ASSERT_EQ(0, ovl_umount(&self->l));
	EXPECT_FALSE(exists(self->incompat, S_IFDIR));

	ASSERT_EQ(0, ovl_mount(&self->l, "volatile"));
	EXPECT_TRUE(exists(self->incompat, S_IFDIR));
	EXPECT_TRUE(exists(self->voldir, S_IFDIR));
	ASSERT_EQ(0, lstat(self->l.marker, &st)) {
		TH_LOG("%s: %s", self->l.marker, strerror(errno));
	}
	EXPECT_TRUE(S_ISREG(st.st_mode));
	EXPECT_EQ(0, st.st_size);
	/* and it stays after a clean unmount, after writes through the overlay */
	snprintf(path, sizeof(path), "%s/newfile", self->l.merged);
	EXPECT_EQ(0, write_file(path, 4096, 3, NULL));
	ASSERT_EQ(0, ovl_umount(&self->l));
	EXPECT_TRUE(exists(self->l.marker, S_IFREG));
}

/* Once dirty, the work dir is refused to volatile and normal mounts alike, with a message. */
TEST_F(marker, second_mount_refused)
{
	int kmsg;

	ASSERT_EQ(0, ovl_mount(&self->l, "volatile"));
	ASSERT_EQ(0, ovl_umount(&self->l));
	ASSERT_TRUE(exists(self->l.marker, S_IFREG));

	kmsg = kmsg_open();
	ASSERT_LE(0, kmsg);
	EXPECT_EQ(-EINVAL, ovl_mount(&self->l, "volatile"));
	EXPECT_TRUE(kmsg_seen(kmsg, MSG_INCOMPAT));
	EXPECT_EQ(-EINVAL, ovl_mount(&self->l, NULL));
	EXPECT_TRUE(kmsg_seen(kmsg, MSG_INCOMPAT));
	EXPECT_EQ(-EINVAL, ovl_mount(&self->l, "index=on,redirect_dir=on"));
	EXPECT_TRUE(kmsg_seen(kmsg, MSG_INCOMPAT));
	/* the refused mounts left the marker alone */
	EXPECT_TRUE(exists(self->l.marker, S_IFREG));
	close(kmsg);
}

/* The refusal keys on the entries of work/incompat: deleting only the file is not enough. */
TEST_F(marker, removing_dirty_file_not_enough)
{
	int kmsg;

	ASSERT_EQ(0, ovl_mount(&self->l, "volatile"));
	ASSERT_EQ(0, ovl_umount(&self->l));
	ASSERT_EQ(0, unlink(self->l.marker));
	kmsg = kmsg_open();
	ASSERT_LE(0, kmsg);
	EXPECT_EQ(-EINVAL, ovl_mount(&self->l, NULL));
	EXPECT_TRUE(kmsg_seen(kmsg, MSG_INCOMPAT));
	close(kmsg);
}

/*
 * Removing work/incompat/volatile (or all of work/incompat) makes the work dir usable again;
 * a normal mount then cleans work/incompat away, a volatile one makes the marker anew.
 */
TEST_F(marker, mount_after_incompat_removed)
{
	char path[PATH_LEN];

	ASSERT_EQ(0, ovl_mount(&self->l, "volatile"));
	snprintf(path, sizeof(path), "%s/kept", self->l.merged);
	ASSERT_EQ(0, write_file(path, 5000, 4, NULL));
	ASSERT_EQ(0, ovl_umount(&self->l));

	ASSERT_EQ(0, rm_rf(self->voldir));
	ASSERT_EQ(0, ovl_mount(&self->l, NULL));
	EXPECT_FALSE(exists(self->incompat, S_IFDIR));
	EXPECT_EQ(0, check_file(path, 5000, 4));
	ASSERT_EQ(0, ovl_umount(&self->l));

	ASSERT_EQ(0, ovl_mount(&self->l, "volatile"));
	EXPECT_TRUE(exists(self->l.marker, S_IFREG));
	ASSERT_EQ(0, ovl_umount(&self->l));
	ASSERT_EQ(-EINVAL, ovl_mount(&self->l, "volatile"));

	ASSERT_EQ(0, rm_rf(self->incompat));
	ASSERT_EQ(0, ovl_mount(&self->l, "volatile"));
	EXPECT_TRUE(exists(self->l.marker, S_IFREG));
	EXPECT_EQ(0, check_file(path, 5000, 4));
	ASSERT_EQ(0, ovl_umount(&self->l));
}

/* ================= syncs: upper on an ext4 disk, flushes counted ================= */

static void ext4_disk_setup(struct __test_metadata *_metadata, char *dev, size_t len)
{
	ASSERT_EQ(0, common_setup());
	ASSERT_EQ(0, disk_mount(EXT4_SERIAL, EXT4_MNT, "ext4", EXT4_OPTS, dev, len)) {
		TH_LOG("no ext4 disk with serial %s (the group's host-setup attaches it)",
		       EXT4_SERIAL);
	}
}

static void ext4_disk_teardown(void)
{
	common_teardown();
	umount_all(EXT4_MNT);
}

/* Flushes and writes the disk completed between two snapshots. */
struct io_delta {
	unsigned long long writes, flushes;
};

static int io_begin(const char *dev, struct disk_stat *st)
{
	/* nothing of earlier work left to write */
	int ret = syncfs_path(EXT4_MNT);

	return ret ? ret : disk_stat(dev, st);
}

static int io_end(const char *dev, const struct disk_stat *st0, struct io_delta *d)
{
	struct disk_stat st = { 0 };
	int ret = disk_stat(dev, &st);

	d->writes = st.writes - st0->writes;
	d->flushes = st.flushes - st0->flushes;
	return ret;
}

/*
 * The fsync-heavy workload: NFILES files of 4 KiB each written and fsynced, an fdatasync, a
 * sync_file_range, RWF_DSYNC and RWF_SYNC writes, the fsync of a new directory and of the
 * merged root, a copy-up of a lower file followed by fsync, and a syncfs.  Every call must
 * succeed.
 */
static int workload(struct __test_metadata *_metadata, const char *merged)
{
	char path[PATH_LEN], buf[FILE_SZ];
	struct iovec iov = { buf, sizeof(buf) };
	int i, fd;

	snprintf(path, sizeof(path), "%s/w", merged);
	if (mkdir(path, 0755))
		return -errno;
	for (i = 0; i < NFILES; i++) {
		snprintf(path, sizeof(path), "%s/w/f%03d", merged, i);
		if (write_file(path, FILE_SZ, 100 + i, &fd))
			return -EIO;
		if (fsync(fd)) {
			TH_LOG("fsync %s: %s", path, strerror(errno));
			close(fd);
			return -EIO;
		}
		if (i == 0 && (fdatasync(fd) ||
			       sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE |
					       SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER) ||
			       pwritev2(fd, &iov, 1, FILE_SZ, RWF_DSYNC) != FILE_SZ ||
			       pwritev2(fd, &iov, 1, 2 * FILE_SZ, RWF_SYNC) != FILE_SZ)) {
			TH_LOG("fdatasync/sync_file_range/pwritev2 %s: %s", path, strerror(errno));
			close(fd);
			return -EIO;
		}
		close(fd);
	}
	snprintf(path, sizeof(path), "%s/w", merged);
	if (fsync_path(path, O_RDONLY | O_DIRECTORY, false) ||
	    fsync_path(merged, O_RDONLY | O_DIRECTORY, false))
		return -EIO;
	/* copy-up of a lower file, appended to, then fsynced */
	snprintf(path, sizeof(path), "%s/lowerfile", merged);
	fd = open(path, O_WRONLY | O_APPEND);
	if (fd < 0)
		return -errno;
	memset(buf, 'a', sizeof(buf));
	if (write(fd, buf, sizeof(buf)) != sizeof(buf) || fsync(fd) || syncfs(fd)) {
		close(fd);
		return -EIO;
	}
	close(fd);
	return 0;
}

FIXTURE(ext4) {
	char dev[32];
};

FIXTURE_SETUP(ext4)
{
	ext4_disk_setup(_metadata, self->dev, sizeof(self->dev));
}

FIXTURE_TEARDOWN(ext4)
{
	ext4_disk_teardown();
}

/*
 * The workload issues no flush and no write at all through a volatile overlay; through a normal
 * overlay on the same disk it issues at least one flush per fsynced file.
 */
TEST_F_TIMEOUT(ext4, fsync_workload, 150)
{
	struct layers n, v;
	struct disk_stat st = { 0 };
	struct io_delta dn, dv;

	ASSERT_EQ(0, layers_init(&n, EXT4_MNT, "wl-normal"));
	ASSERT_EQ(0, layers_init(&v, EXT4_MNT, "wl-volatile"));
	ASSERT_EQ(0, write_file("/tmp/ovlv/wl-normal.lower/lowerfile", 65536, 5, NULL));
	ASSERT_EQ(0, write_file("/tmp/ovlv/wl-volatile.lower/lowerfile", 65536, 5, NULL));

	ASSERT_EQ(0, ovl_mount(&v, "volatile"));
	ASSERT_EQ(0, io_begin(self->dev, &st));
	ASSERT_EQ(0, workload(_metadata, v.merged));
	ASSERT_EQ(0, io_end(self->dev, &st, &dv));

	ASSERT_EQ(0, ovl_mount(&n, NULL));
	ASSERT_EQ(0, io_begin(self->dev, &st));
	ASSERT_EQ(0, workload(_metadata, n.merged));
	ASSERT_EQ(0, io_end(self->dev, &st, &dn));

	TH_LOG("%d x (write 4 KiB + fsync) and the rest:", NFILES);
	TH_LOG("volatile %llu flushes %llu writes, normal %llu flushes %llu writes",
	       dv.flushes, dv.writes, dn.flushes, dn.writes);
	EXPECT_EQ(0, dv.flushes);
	EXPECT_EQ(0, dv.writes);
	EXPECT_LE(NFILES, dn.flushes);
	EXPECT_LE(NFILES, dn.writes);
	EXPECT_EQ(0, ovl_umount(&v));
	EXPECT_EQ(0, ovl_umount(&n));
}

/*
 * Data written through a volatile overlay is all there after the overlay is unmounted and the
 * upper synced: read back from the disk after the upper file system is mounted again, directly
 * and through a new overlay (once the user removed work/incompat).
 */
TEST_F_TIMEOUT(ext4, data_intact, 90)
{
	char path[PATH_LEN], inc[PATH_LEN];
	struct disk_stat st = { 0 };
	struct io_delta d;
	struct layers l;
	struct stat sb;
	int i;

	ASSERT_EQ(0, layers_init(&l, EXT4_MNT, "data"));
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/low%d", l.lower, i);
		ASSERT_EQ(0, write_file(path, 20000, 10 + i, NULL));
	}
	ASSERT_EQ(0, ovl_mount(&l, "volatile"));
	ASSERT_EQ(0, io_begin(self->dev, &st));
	snprintf(path, sizeof(path), "%s/a/b", l.merged);
	ASSERT_EQ(0, mkdir_p(path));
	for (i = 0; i < 40; i++) {
		snprintf(path, sizeof(path), "%s/a/b/f%02d", l.merged, i);
		ASSERT_EQ(0, write_file(path, 1000 + i * 3001, 200 + i, NULL));
	}
	snprintf(path, sizeof(path), "%s/big", l.merged);
	ASSERT_EQ(0, write_file(path, 3 << 20, 300, NULL));
	/* copy-up + rewrite of low0, removal of low1 (a whiteout), rename of a new file */
	snprintf(path, sizeof(path), "%s/low0", l.merged);
	ASSERT_EQ(0, write_file(path, 30000, 400, NULL));
	snprintf(path, sizeof(path), "%s/low1", l.merged);
	ASSERT_EQ(0, unlink(path));
	snprintf(path, sizeof(path), "%s/a/b/f00", l.merged);
	snprintf(inc, sizeof(inc), "%s/a/renamed", l.merged);
	ASSERT_EQ(0, rename(path, inc));
	snprintf(path, sizeof(path), "%s/a/b/f01", l.merged);
	ASSERT_EQ(0, fsync_path(path, O_RDONLY, false));
	ASSERT_EQ(0, ovl_umount(&l));
	ASSERT_EQ(0, io_end(self->dev, &st, &d));
	TH_LOG("volatile writes and unmount: %llu flushes, %llu writes", d.flushes, d.writes);
	EXPECT_EQ(0, d.flushes);

	/* the user's sync of the upper: the data goes to the disk */
	ASSERT_EQ(0, disk_stat(self->dev, &st));
	ASSERT_EQ(0, syncfs_path(EXT4_MNT));
	ASSERT_EQ(0, io_end(self->dev, &st, &d));
	TH_LOG("syncfs of the upper: %llu flushes, %llu writes", d.flushes, d.writes);
	EXPECT_LT(0, d.writes);
	EXPECT_LT(0, d.flushes);

	/* a new mount of the upper file system reads it back from the disk */
	ASSERT_EQ(0, umount(EXT4_MNT));
	ASSERT_EQ(0, disk_mount(EXT4_SERIAL, EXT4_MNT, "ext4", EXT4_OPTS, self->dev, sizeof(self->dev)));
	for (i = 1; i < 40; i++) {
		snprintf(path, sizeof(path), "%s/a/b/f%02d", l.upper, i);
		EXPECT_EQ(0, check_file(path, 1000 + i * 3001, 200 + i)) {
			TH_LOG("%s", path);
		}
	}
	snprintf(path, sizeof(path), "%s/a/renamed", l.upper);
	EXPECT_EQ(0, check_file(path, 1000, 200));
	snprintf(path, sizeof(path), "%s/big", l.upper);
	EXPECT_EQ(0, check_file(path, 3 << 20, 300));
	snprintf(path, sizeof(path), "%s/low0", l.upper);
	EXPECT_EQ(0, check_file(path, 30000, 400));
	snprintf(path, sizeof(path), "%s/low1", l.upper);
	ASSERT_EQ(0, lstat(path, &sb));
	EXPECT_TRUE(S_ISCHR(sb.st_mode) && sb.st_rdev == makedev(0, 0));	/* whiteout */
	EXPECT_TRUE(exists(l.marker, S_IFREG));

	/* the merged view through a new overlay, once the user cleared the marker */
	snprintf(inc, sizeof(inc), "%s/work/incompat", l.work);
	ASSERT_EQ(0, rm_rf(inc));
	ASSERT_EQ(0, ovl_mount(&l, NULL));
	snprintf(path, sizeof(path), "%s/low0", l.merged);
	EXPECT_EQ(0, check_file(path, 30000, 400));
	snprintf(path, sizeof(path), "%s/low1", l.merged);
	EXPECT_EQ(-1, access(path, F_OK));
	snprintf(path, sizeof(path), "%s/low2", l.merged);
	EXPECT_EQ(0, check_file(path, 20000, 12));
	snprintf(path, sizeof(path), "%s/a/b/f39", l.merged);
	EXPECT_EQ(0, check_file(path, 1000 + 39 * 3001, 239));
	EXPECT_EQ(0, ovl_umount(&l));
}

/*
 * One sync call at a time, through a volatile and through a normal overlay on the same disk,
 * each after a syncfs of the upper and with fresh dirty data to sync: the flushes and writes the
 * disk completed for the call.  The volatile overlay must cause none, the normal one flushes
 * (but for sync_file_range: 6.1's overlay files have no page cache of their own, so it does
 * nothing on either).
 *
 * O_DSYNC and O_SYNC files are the exception 6.1 makes: the overlay drops the RWF_[D]SYNC of a
 * write, but it opens the upper file with the overlay file's flags, O_[D]SYNC included, and the
 * upper file system then syncs every write itself, through a volatile overlay too.
 */
enum sync_call {
	SC_FSYNC, SC_FDATASYNC, SC_SYNCFS, SC_AIO_O_DSYNC, SC_RWF_DSYNC, SC_RWF_SYNC,
	SC_DIR_FSYNC, SC_MERGE_DIR_FSYNC, SC_COPY_UP, SC_COPY_UP_FSYNC, SC_UMOUNT, SC_REMOUNT_RO,
	SC_O_DSYNC, SC_O_SYNC, SC_MSYNC, SC_SYNC,
};

FIXTURE(sync_call) {
	char dev[32];
};

FIXTURE_VARIANT(sync_call) {
	enum sync_call call;
	bool normal_flushes;	/* 6.1 flushes for the call through a normal overlay */
	bool volatile_flushes;	/* ... and through a volatile one */
};

FIXTURE_VARIANT_ADD(sync_call, fsync) {
	.call = SC_FSYNC, .normal_flushes = true,
};

FIXTURE_VARIANT_ADD(sync_call, fdatasync) {
	.call = SC_FDATASYNC, .normal_flushes = true,
};

FIXTURE_VARIANT_ADD(sync_call, syncfs) {
	.call = SC_SYNCFS, .normal_flushes = true,
};

/*
 * An asynchronous write (io_submit) to a file opened O_DSYNC: the overlay hands the upper file
 * a kiocb of its own, whose DSYNC flag a volatile overlay drops.
 */
FIXTURE_VARIANT_ADD(sync_call, aio_o_dsync) {
	.call = SC_AIO_O_DSYNC, .normal_flushes = true,
};

FIXTURE_VARIANT_ADD(sync_call, rwf_dsync) {
	.call = SC_RWF_DSYNC, .normal_flushes = true,
};

FIXTURE_VARIANT_ADD(sync_call, rwf_sync) {
	.call = SC_RWF_SYNC, .normal_flushes = true,
};

/* fsync of a directory made through the overlay */
FIXTURE_VARIANT_ADD(sync_call, dir_fsync) {
	.call = SC_DIR_FSYNC, .normal_flushes = true,
};

/* fsync of the merged root (an upper and a lower directory) */
FIXTURE_VARIANT_ADD(sync_call, merge_dir_fsync) {
	.call = SC_MERGE_DIR_FSYNC, .normal_flushes = true,
};

/* a lower file opened for writing: copied up, and nothing else */
FIXTURE_VARIANT_ADD(sync_call, copy_up) {
	.call = SC_COPY_UP, .normal_flushes = true,
};

FIXTURE_VARIANT_ADD(sync_call, copy_up_fsync) {
	.call = SC_COPY_UP_FSYNC, .normal_flushes = true,
};

FIXTURE_VARIANT_ADD(sync_call, umount) {
	.call = SC_UMOUNT, .normal_flushes = true,
};

FIXTURE_VARIANT_ADD(sync_call, remount_ro) {
	.call = SC_REMOUNT_RO, .normal_flushes = true,
};

FIXTURE_VARIANT_ADD(sync_call, o_dsync) {
	.call = SC_O_DSYNC, .normal_flushes = true, .volatile_flushes = true,
};

FIXTURE_VARIANT_ADD(sync_call, o_sync) {
	.call = SC_O_SYNC, .normal_flushes = true, .volatile_flushes = true,
};

/* a shared mapping of an overlay file maps the upper file: msync() reaches it directly */
FIXTURE_VARIANT_ADD(sync_call, msync) {
	.call = SC_MSYNC, .normal_flushes = true, .volatile_flushes = true,
};

/* sync(2) syncs every file system, the upper one included, without asking the overlay */
FIXTURE_VARIANT_ADD(sync_call, sync) {
	.call = SC_SYNC, .normal_flushes = true, .volatile_flushes = true,
};

FIXTURE_SETUP(sync_call)
{
	ext4_disk_setup(_metadata, self->dev, sizeof(self->dev));
}

FIXTURE_TEARDOWN(sync_call)
{
	ext4_disk_teardown();
}

/* Dirty state for the call to sync: a new file with data, an entry in a new directory. */
static int sync_call_prepare(const char *merged, int *fd)
{
	char path[PATH_LEN];
	int ret;

	snprintf(path, sizeof(path), "%s/d", merged);
	if (mkdir(path, 0755))
		return -errno;
	snprintf(path, sizeof(path), "%s/d/f", merged);
	ret = write_file(path, 4 * FILE_SZ, 7, fd);
	if (ret)
		return ret;
	/* a new entry in the merged root, so that its upper directory is dirty too */
	snprintf(path, sizeof(path), "%s/rootfile", merged);
	return write_file(path, FILE_SZ, 8, NULL);
}

/* One asynchronous write of buf to path, opened O_DSYNC, through the AIO syscalls. */
static int aio_write_dsync(const char *path, const char *buf, size_t len)
{
	struct iocb cb = { .aio_lio_opcode = IOCB_CMD_PWRITE };
	struct iocb *cbs[1] = { &cb };
	struct io_event ev;
	aio_context_t ctx = 0;
	int fd, ret;

	fd = open(path, O_CREAT | O_WRONLY | O_DSYNC, 0644);
	if (fd < 0)
		return -errno;
	ret = syscall(__NR_io_setup, 1, &ctx) ? -errno : 0;
	if (!ret) {
		cb.aio_fildes = fd;
		cb.aio_buf = (uintptr_t)buf;
		cb.aio_nbytes = len;
		if (syscall(__NR_io_submit, ctx, 1, cbs) != 1)
			ret = -errno;
		else if (syscall(__NR_io_getevents, ctx, 1, 1, &ev, NULL) != 1)
			ret = -errno;
		else if (ev.res != (int64_t)len)
			ret = ev.res < 0 ? (int)ev.res : -EIO;
		syscall(__NR_io_destroy, ctx);
	}
	close(fd);
	return ret;
}

/* Dirty the first len bytes of fd through a shared mapping, then msync(MS_SYNC) them. */
static int msync_write(int fd, size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int ret;

	if (p == MAP_FAILED)
		return -errno;
	memset(p, 'm', len);
	ret = msync(p, len, MS_SYNC) ? -errno : 0;
	munmap(p, len);
	return ret;
}

static int sync_call_run(enum sync_call call, const char *merged, int fd)
{
	char path[PATH_LEN], buf[FILE_SZ];
	struct iovec iov = { buf, sizeof(buf) };
	int ret, cfd;

	memset(buf, 'x', sizeof(buf));
	switch (call) {
	case SC_FSYNC:
		return fsync(fd) ? -errno : 0;
	case SC_FDATASYNC:
		return fdatasync(fd) ? -errno : 0;
	case SC_SYNCFS:
		return syncfs(fd) ? -errno : 0;
	case SC_AIO_O_DSYNC:
		snprintf(path, sizeof(path), "%s/d/aio", merged);
		return aio_write_dsync(path, buf, sizeof(buf));
	case SC_MSYNC:
		return msync_write(fd, FILE_SZ);
	case SC_SYNC:
		sync();
		return 0;
	case SC_RWF_DSYNC:
		return pwritev2(fd, &iov, 1, 0, RWF_DSYNC) == FILE_SZ ? 0 : -EIO;
	case SC_RWF_SYNC:
		return pwritev2(fd, &iov, 1, 0, RWF_SYNC) == FILE_SZ ? 0 : -EIO;
	case SC_DIR_FSYNC:
		snprintf(path, sizeof(path), "%s/d", merged);
		return fsync_path(path, O_RDONLY | O_DIRECTORY, false);
	case SC_MERGE_DIR_FSYNC:
		return fsync_path(merged, O_RDONLY | O_DIRECTORY, false);
	case SC_COPY_UP:
	case SC_COPY_UP_FSYNC:
		snprintf(path, sizeof(path), "%s/lowerfile", merged);
		cfd = open(path, O_WRONLY);
		if (cfd < 0)
			return -errno;
		ret = 0;
		if (call == SC_COPY_UP_FSYNC && (pwrite(cfd, buf, sizeof(buf), 0) != sizeof(buf) ||
						 fsync(cfd)))
			ret = -EIO;
		close(cfd);
		return ret;
	case SC_UMOUNT:
		close(fd);
		return umount(merged) ? -errno : 0;
	case SC_O_DSYNC:
	case SC_O_SYNC:
		snprintf(path, sizeof(path), "%s/d/osync", merged);
		cfd = open(path, O_CREAT | O_WRONLY | (call == SC_O_SYNC ? O_SYNC : O_DSYNC), 0644);
		if (cfd < 0)
			return -errno;
		ret = write(cfd, buf, sizeof(buf)) == sizeof(buf) ? 0 : -EIO;
		close(cfd);
		return ret;
	case SC_REMOUNT_RO:
		close(fd);	/* a file open for writing would make it EBUSY */
		return mount(NULL, merged, NULL, MS_REMOUNT | MS_RDONLY, NULL) ? -errno : 0;
	}
	return -EINVAL;
}

TEST_F(sync_call, volatile_vs_normal)
{
	static const char *const which[] = { "volatile", "normal" };
	struct io_delta d[2];
	struct layers l[2];
	struct disk_stat st = { 0 };
	char opts[1536];
	int i, fd, ret;

	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, layers_init(&l[i], EXT4_MNT, which[i]));
		ASSERT_EQ(0, write_file(i ? "/tmp/ovlv/normal.lower/lowerfile" :
					"/tmp/ovlv/volatile.lower/lowerfile", 65536, 9, NULL));
		ASSERT_EQ(0, ovl_mount(&l[i], i ? NULL : "volatile"));
		ASSERT_EQ(0, io_begin(self->dev, &st));
		ASSERT_EQ(0, sync_call_prepare(l[i].merged, &fd));
		ret = sync_call_run(variant->call, l[i].merged, fd);
		ASSERT_EQ(0, ret) {
			TH_LOG("%s overlay: %s", which[i], strerror(-ret));
		}
		ASSERT_EQ(0, io_end(self->dev, &st, &d[i]));
		if (variant->call != SC_UMOUNT && variant->call != SC_REMOUNT_RO)
			close(fd);
		if (variant->call == SC_REMOUNT_RO) {
			ASSERT_EQ(0, mount_options(l[i].merged, opts, sizeof(opts)));
			EXPECT_TRUE(has_option(opts, "ro"));
			EXPECT_EQ(!i, has_option(opts, "volatile"));
		}
	}
	TH_LOG("volatile: %llu flushes %llu writes; normal: %llu flushes %llu writes",
	       d[0].flushes, d[0].writes, d[1].flushes, d[1].writes);
	EXPECT_EQ(variant->volatile_flushes, d[0].flushes > 0);
	EXPECT_EQ(variant->normal_flushes, d[1].flushes > 0);
	/* syncing nothing, the volatile overlay writes nothing either */
	EXPECT_EQ(0, variant->volatile_flushes ? 0 : d[0].writes);
}

/* ================= writeback errors: upper on an XFS disk that is shut down ================= */

FIXTURE(xfs) {
	char dev[32];
	int rootfd;		/* the XFS root, opened before the shutdown */
};

FIXTURE_SETUP(xfs)
{
	self->rootfd = -1;
	ASSERT_EQ(0, common_setup());
	ASSERT_EQ(0, disk_mount(XFS_SERIAL, XFS_MNT, "xfs", "", self->dev, sizeof(self->dev))) {
		TH_LOG("no XFS disk with serial %s (the group's host-setup attaches it)",
		       XFS_SERIAL);
	}
	self->rootfd = open(XFS_MNT, O_RDONLY | O_DIRECTORY);
	ASSERT_LE(0, self->rootfd);
}

FIXTURE_TEARDOWN(xfs)
{
	if (self->rootfd >= 0)
		close(self->rootfd);
	common_teardown();
	umount_all(XFS_MNT);
}

static int xfs_shutdown(int fd)
{
	uint32_t flags = XFS_FSOP_GOING_FLAGS_NOLOGFLUSH;

	return ioctl(fd, XFS_IOC_GOINGDOWN, &flags) ? -errno : 0;
}

/*
 * After the shutdown XFS refuses to open files and to look names up (EIO), so everything the
 * tests use afterwards is opened, or looked up, before it.
 */
struct ovl_fds {
	int data;	/* a new file with 64 KiB in the page cache only */
	int lower;	/* a lower file, never copied up */
	int root;	/* the merged root directory */
};

static int ovl_fds_open(const struct layers *l, uint64_t seed, struct ovl_fds *f)
{
	char path[PATH_LEN];
	int ret;

	snprintf(path, sizeof(path), "%s/data", l->merged);
	ret = write_file(path, 65536, seed, &f->data);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "%s/lowerfile", l->merged);
	f->lower = open(path, O_RDONLY);
	f->root = open(l->merged, O_RDONLY | O_DIRECTORY);
	return f->lower < 0 || f->root < 0 ? -errno : 0;
}

static void ovl_fds_close(struct ovl_fds *f)
{
	close(f->data);
	close(f->lower);
	close(f->root);
}

static int sys_ret(int ret)
{
	return ret < 0 ? -errno : ret;
}

/*
 * A volatile overlay (V) and a normal one (N) on the same XFS, both with data only in the page
 * cache; XFS is shut down, so that writeback of that data fails.
 *  - Before anything is written back, fsync through V still returns 0: V writes nothing back
 *    (through N, fsync writes back, and fails), and no error has been recorded yet.
 *  - The fsync through N writes its file back: EIO, recorded in the XFS super block.
 *  - From then on every fsync, fdatasync, directory fsync and syncfs through V returns EIO,
 *    for any file (one never written back, a lower file never copied up), every time.
 *  - Through N, the fsync of the lower file returns 0 (lower files are not synced), and
 *    syncfs returns the error of XFS itself (its log force fails).
 */
TEST_F(xfs, writeback_error_reported)
{
	struct ovl_fds vf, nf;
	struct layers v, n;
	int i;

	ASSERT_EQ(0, layers_init(&v, XFS_MNT, "err-volatile"));
	ASSERT_EQ(0, layers_init(&n, XFS_MNT, "err-normal"));
	ASSERT_EQ(0, write_file("/tmp/ovlv/err-volatile.lower/lowerfile", 8192, 1, NULL));
	ASSERT_EQ(0, write_file("/tmp/ovlv/err-normal.lower/lowerfile", 8192, 1, NULL));
	ASSERT_EQ(0, sys_ret(syncfs(self->rootfd)));
	ASSERT_EQ(0, ovl_mount(&v, "volatile"));
	ASSERT_EQ(0, ovl_mount(&n, NULL));
	ASSERT_EQ(0, ovl_fds_open(&v, 20, &vf));
	ASSERT_EQ(0, ovl_fds_open(&n, 21, &nf));
	EXPECT_EQ(0, sys_ret(fsync(vf.data)));
	EXPECT_EQ(0, sys_ret(syncfs(vf.data)));

	ASSERT_EQ(0, xfs_shutdown(self->rootfd));
	EXPECT_EQ(0, sys_ret(fsync(vf.data))) {
		TH_LOG("volatile fsync right after the shutdown");
	}
	EXPECT_EQ(0, sys_ret(fsync(vf.lower)));
	EXPECT_EQ(0, sys_ret(syncfs(vf.lower)));

	/* writeback of N's file fails, and XFS records the error */
	EXPECT_EQ(-EIO, sys_ret(fsync(nf.data)));

	for (i = 0; i < 2; i++) {
		EXPECT_EQ(-EIO, sys_ret(fsync(vf.data)));
		EXPECT_EQ(-EIO, sys_ret(fdatasync(vf.data)));
		EXPECT_EQ(-EIO, sys_ret(fsync(vf.lower)));
		EXPECT_EQ(-EIO, sys_ret(fsync(vf.root)));
		EXPECT_EQ(-EIO, sys_ret(syncfs(vf.lower)));
		EXPECT_EQ(-EIO, sys_ret(syncfs(vf.root)));
	}
	EXPECT_EQ(0, sys_ret(fsync(nf.lower)));
	EXPECT_EQ(-EIO, sys_ret(syncfs(nf.lower)));

	ovl_fds_close(&vf);
	ovl_fds_close(&nf);
	EXPECT_EQ(0, ovl_umount(&v));
	EXPECT_EQ(0, ovl_umount(&n));
}

/*
 * A writeback error nobody has seen yet refuses a volatile mount (EIO, with a message), not a
 * normal one.  Once seen (a syncfs of the upper), a volatile mount is possible again, and its
 * fsync and syncfs do not report that older error.  (On the shut-down XFS both mounts come up
 * read-only: the work directory cannot be made.  That errors after the mount are reported is
 * the test above: after the shutdown nothing can be made dirty any more, and the syncfs that
 * marks the error seen also writes back whatever was still dirty.)
 */
TEST_F(xfs, unseen_error_refuses_mount)
{
	char vl[PATH_LEN], opts[1536], path[PATH_LEN];
	int fa, kmsg, fd;
	struct layers l;
	struct stat st;

	ASSERT_EQ(0, layers_init(&l, XFS_MNT, "pending"));
	ASSERT_EQ(0, write_file("/tmp/ovlv/pending.lower/lowerfile", 8192, 1, NULL));
	snprintf(vl, sizeof(vl), "%s/lowerfile", l.merged);
	/* the upper's negative dentry, so that the overlay can look the name up after all */
	snprintf(path, sizeof(path), "%s/lowerfile", l.upper);
	ASSERT_EQ(-1, stat(path, &st));
	/* a file with data only in the page cache, written directly on the upper fs */
	snprintf(path, sizeof(path), "%s/a", XFS_MNT);
	ASSERT_EQ(0, write_file(path, 65536, 30, &fa));

	ASSERT_EQ(0, xfs_shutdown(self->rootfd));
	/* writeback of a fails: the error is recorded, nobody has seen it on the super block */
	EXPECT_EQ(-EIO, sys_ret(fsync(fa)));

	kmsg = kmsg_open();
	ASSERT_LE(0, kmsg);
	EXPECT_EQ(-EIO, ovl_mount(&l, "volatile"));
	EXPECT_TRUE(kmsg_seen(kmsg, MSG_UNSEEN));
	close(kmsg);
	EXPECT_EQ(-EIO, ovl_mount(&l, "volatile"));

	/* a normal mount is not refused for it */
	ASSERT_EQ(0, ovl_mount(&l, NULL));
	ASSERT_EQ(0, mount_options(l.merged, opts, sizeof(opts)));
	TH_LOG("normal mount on the shut-down upper: %s", opts);
	EXPECT_TRUE(has_option(opts, "ro"));
	EXPECT_EQ(0, ovl_umount(&l));

	/* the user syncs the upper, and so sees the error */
	EXPECT_EQ(-EIO, sys_ret(syncfs(self->rootfd)));
	ASSERT_EQ(0, ovl_mount(&l, "volatile"));
	ASSERT_EQ(0, mount_options(l.merged, opts, sizeof(opts)));
	TH_LOG("volatile mount once the error was seen: %s", opts);
	EXPECT_TRUE(has_option(opts, "volatile"));
	EXPECT_TRUE(has_option(opts, "ro"));
	fd = open(vl, O_RDONLY);
	ASSERT_LE(0, fd) {
		TH_LOG("%s: %s", vl, strerror(errno));
	}
	EXPECT_EQ(0, sys_ret(fsync(fd)));
	EXPECT_EQ(0, sys_ret(fdatasync(fd)));
	EXPECT_EQ(0, sys_ret(syncfs(fd)));
	close(fd);
	EXPECT_EQ(0, ovl_umount(&l));
	close(fa);
}

TEST_HARNESS_MAIN

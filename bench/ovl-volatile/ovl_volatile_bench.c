// SPDX-License-Identifier: GPL-2.0
/*
 * overlayfs "volatile" benchmark: an fsync-heavy workload, 2,000 files of 4 KiB each created,
 * written and fsynced, through a normal and through a volatile overlay on the same kernel.
 *
 * The upper layer is ext4 on the virtio-blk disk with serial "ovl-bench" (host cache=none, made
 * by host-setup), the lower a tmpfs.  Each run gets fresh upper and work directories; the rounds
 * alternate normal, volatile, normal, volatile, ...  A run is timed with the guest's
 * CLOCK_MONOTONIC under plain TCG (no icount: this is I/O), and the disk's completed flushes and
 * writes are read from /sys/block/<dev>/stat (fields 16 and 5) right before and after it.
 *
 * So that the counts are the overlay's doing, ext4 is mounted with commit=600 and the flusher is
 * kept asleep (vm.dirty_writeback_centisecs and dirty_expire_centisecs of an hour): the journal
 * thread and the flusher write nothing during a run.  Every run starts on a freshly mounted ext4
 * (an unmount checkpoints the journal: a journal left full by the previous normal run would make
 * ext4 checkpoint during the next run, with flushes of its own) and after a syncfs of it.  After
 * the run, ext4 is unmounted and mounted again, and the files are read back from the disk.
 *
 * Output: KTAP, one result per check, and for the report
 *	# BENCH fsync-2000x4k-normal <median ns> ns flushes=<median> writes=<median>
 *	# BENCH fsync-2000x4k-volatile <median ns> ns flushes=<median> writes=<median>
 *	# BENCH fsync-2000x4k-speedup <normal / volatile> x
 *	# BENCH fsync-2000x4k-volatile-flushes <most flushes of any volatile run> flushes
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../tests/ovl-volatile/ovl_disk.h"

#define NFILES		2000
#define FILE_SZ		4096
#define ROUNDS		3
#define SERIAL		"ovl-bench"
#define DISK_MNT	"/mnt/ovlb-ext4"
#define TMP_MNT		"/tmp/ovlb"
#define CASE		"fsync-2000x4k"

enum { NORMAL, VOLATILE };
static const char *const mode_name[] = { "normal", "volatile" };

struct run {
	uint64_t ns;
	unsigned long long flushes, writes;
	bool ok;
};

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}


static int syncfs_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY);
	int ret;

	if (fd < 0)
		return -1;
	ret = syncfs(fd);
	close(fd);
	return ret;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void fill(char *buf, int i)
{
	int j;

	for (j = 0; j < FILE_SZ; j++)
		buf[j] = (char)(i * 131 + j * 7);
}

/* NFILES x (create, write 4 KiB, fsync, close) in dir; 0 if every call succeeded. */
static int workload(const char *dir)
{
	char path[300], buf[FILE_SZ];
	int i, fd;

	for (i = 0; i < NFILES; i++) {
		snprintf(path, sizeof(path), "%s/f%04d", dir, i);
		fill(buf, i);
		fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
		if (fd < 0)
			return -1;
		if (write(fd, buf, FILE_SZ) != FILE_SZ || fsync(fd)) {
			close(fd);
			return -1;
		}
		close(fd);
	}
	return 0;
}

/* Every 50th file of the run, read back from the upper directory. */
static int check_upper(const char *upper)
{
	char path[300], buf[FILE_SZ], want[FILE_SZ];
	int i, fd;

	for (i = 0; i < NFILES; i += 50) {
		snprintf(path, sizeof(path), "%s/f%04d", upper, i);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			return -1;
		fill(want, i);
		if (read(fd, buf, FILE_SZ) != FILE_SZ || memcmp(buf, want, FILE_SZ) ||
		    read(fd, buf, 1) != 0) {
			close(fd);
			return -1;
		}
		close(fd);
	}
	return 0;
}

/* Unmounts the upper ext4 (which writes everything back) and mounts it again. */
static int remount_upper(const char *dev)
{
	char path[64];

	snprintf(path, sizeof(path), "/dev/%s", dev);
	if (umount(DISK_MNT))
		return -1;
	return mount(path, DISK_MNT, "ext4", 0, "commit=600");
}

static void one_run(const char *dev, int mode, int round, struct run *r, bool *data_ok)
{
	char base[200], upper[240], work[240], opts[800], merged[] = TMP_MNT "/merged";
	struct disk_stat st0 = { 0 }, st1 = { 0 };
	uint64_t t0, t1;

	memset(r, 0, sizeof(*r));
	snprintf(base, sizeof(base), "%s/%s-%d", DISK_MNT, mode_name[mode], round);
	snprintf(upper, sizeof(upper), "%s/upper", base);
	snprintf(work, sizeof(work), "%s/work", base);
	if (mkdir(base, 0755) || mkdir(upper, 0755) || mkdir(work, 0755)) {
		printf("# %s round %d: mkdir: %s\n", mode_name[mode], round, strerror(errno));
		return;
	}
	snprintf(opts, sizeof(opts), "lowerdir=%s/lower,upperdir=%s,workdir=%s%s",
		 TMP_MNT, upper, work, mode == VOLATILE ? ",volatile" : "");
	if (mount("overlay", merged, "overlay", 0, opts)) {
		printf("# %s round %d: mount -o %s: %s\n", mode_name[mode], round, opts,
		       strerror(errno));
		return;
	}
	if (syncfs_path(DISK_MNT) || disk_stat(dev, &st0)) {
		umount(merged);
		return;
	}
	t0 = now_ns();
	r->ok = !workload(merged);
	t1 = now_ns();
	if (disk_stat(dev, &st1))
		r->ok = false;
	r->ns = t1 - t0;
	r->writes = st1.writes - st0.writes;
	r->flushes = st1.flushes - st0.flushes;
	/* unmounted, and the upper mounted again: the files are all on the disk */
	if (umount(merged) || remount_upper(dev))
		r->ok = false;
	if (check_upper(upper))
		*data_ok = false;
	printf("# round %d %-8s: %8.3f s  %5llu flushes  %5llu writes%s\n", round,
	       mode_name[mode], r->ns / 1e9, r->flushes, r->writes, r->ok ? "" : "  FAILED");
	fflush(stdout);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[n / 2];
}

static int results;
static bool all_ok = true;

static void result(bool ok, const char *what)
{
	printf("%s %d %s\n", ok ? "ok" : "not ok", ++results, what);
	if (!ok)
		all_ok = false;
}

int main(void)
{
	uint64_t ns[2][ROUNDS], fl[2][ROUNDS], wr[2][ROUNDS], med_ns[2];
	unsigned long long max_vflushes = 0, min_nflushes = ~0ULL;
	struct run runs[2][ROUNDS];
	bool data_ok = true, calls_ok = true;
	char dev[32], path[300];
	int r, m;

	printf("TAP version 13\n1..4\n");
	if (write_str("/proc/sys/vm/dirty_writeback_centisecs", "360000") ||
	    write_str("/proc/sys/vm/dirty_expire_centisecs", "360000")) {
		printf("Bail out! cannot set the writeback sysctls\n");
		return 1;
	}
	if (find_disk(SERIAL, dev, sizeof(dev))) {
		printf("Bail out! no virtio disk with serial %s (host-setup attaches it)\n", SERIAL);
		return 1;
	}
	snprintf(path, sizeof(path), "/dev/%s", dev);
	mkdir(DISK_MNT, 0755);
	mkdir(TMP_MNT, 0755);
	if (mount(path, DISK_MNT, "ext4", 0, "commit=600") ||
	    mount("tmpfs", TMP_MNT, "tmpfs", 0, "size=16m") ||
	    mkdir(TMP_MNT "/lower", 0755) || mkdir(TMP_MNT "/merged", 0755)) {
		printf("Bail out! mounting the upper ext4 or the tmpfs: %s\n", strerror(errno));
		return 1;
	}
	printf("# upper: ext4 on %s (cache=none); %d x (create, write %d bytes, fsync), %d rounds\n",
	       dev, NFILES, FILE_SZ, ROUNDS);

	for (r = 0; r < ROUNDS; r++) {
		for (m = NORMAL; m <= VOLATILE; m++) {
			one_run(dev, m, r, &runs[m][r], &data_ok);
			ns[m][r] = runs[m][r].ns;
			fl[m][r] = runs[m][r].flushes;
			wr[m][r] = runs[m][r].writes;
			calls_ok &= runs[m][r].ok;
		}
		if (runs[VOLATILE][r].flushes > max_vflushes)
			max_vflushes = runs[VOLATILE][r].flushes;
		if (runs[NORMAL][r].flushes < min_nflushes)
			min_nflushes = runs[NORMAL][r].flushes;
	}
	for (m = NORMAL; m <= VOLATILE; m++) {
		med_ns[m] = median(ns[m], ROUNDS);
		printf("# BENCH %s-%s %llu ns flushes=%llu writes=%llu\n", CASE, mode_name[m],
		       (unsigned long long)med_ns[m],
		       (unsigned long long)median(fl[m], ROUNDS),
		       (unsigned long long)median(wr[m], ROUNDS));
	}
	if (calls_ok && med_ns[VOLATILE])
		printf("# BENCH %s-speedup %.2f x\n", CASE, (double)med_ns[NORMAL] / med_ns[VOLATILE]);
	printf("# BENCH %s-volatile-flushes %llu flushes\n", CASE, max_vflushes);

	result(calls_ok, "every mount, write and fsync succeeded");
	result(calls_ok && max_vflushes == 0, "no flush reached the disk during a volatile run");
	result(calls_ok && min_nflushes >= NFILES, "a normal run flushed at least once per fsync");
	result(calls_ok && data_ok, "the files of every run are on the disk after unmount");

	umount(DISK_MNT);
	umount(TMP_MNT);
	return all_ok ? 0 : 1;
}

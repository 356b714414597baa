// SPDX-License-Identifier: GPL-2.0
/*
 * zonefs "explicit-open" benchmark: open/write/close cycles over many sequential zone files,
 * on a file system mounted without and with explicit-open, on the same kernel.
 *
 * The device is a memory-backed zoned null_blk device (configfs): 64 zones of 1 MiB, zone 0
 * the super block, 63 sequential files, at most 8 open zones and no active limit (48 files
 * partially written stay active: an active limit would refuse the 13th). Each case formats
 * it afresh (./mkzonefs, untimed), mounts it, and runs rounds; a round goes over FILES (48)
 * sequential files one after the other:
 *
 *   cycle-4k-*     open(O_WRONLY | O_DIRECT), one 4 KiB asynchronous direct write at the end
 *                  of the file (io_submit + io_getevents), close
 *   open-close-*   open(O_WRONLY | O_DIRECT), close (nothing written)
 *
 * with "-default" (no option: no zone command from zonefs) and "-explicit-open" (a zone OPEN
 * at each open, a CLOSE at each close of a written file, a RESET at the close of an unwritten
 * one). One warm-up round, then REPS (11) timed rounds; the figure is the median round time
 * divided by FILES: guest nanoseconds per cycle, under icount an instruction count
 * (docs/benchmarks.md). Writes are asynchronous because stock 6.1 fails synchronous direct
 * writes to sequential files (patches/fixes/0001).
 *
 * Zone commands are counted on the device side, from /sys/block/<dev>/stat: the block layer
 * accounts zone management requests (open, close, finish, reset) as write requests of zero
 * sectors, so over the timed rounds
 *	zone commands = completed write requests - data write requests,
 * the data write requests being the 4 KiB writes (each one request: wr_sectors / 8). There is
 * no counter in null_blk's sysfs and no ftrace in these kernels (CONFIG_FTRACE is off), so
 * this is the counter; BLKREPORTZONE confirms the end state of every file's zone. The counts
 * must be 0 per cycle without the option and 2 with it (open + close/reset): a case whose
 * counts differ fails.
 *
 * Output: KTAP, one result per case, each after the line the report reads:
 *   # BENCH <case> <median ns per cycle> ns min=<ns> max=<ns> reps=<n> files=<n>
 *           zone_cmds_per_cycle=<n.nn> case_ms=<guest ms of the whole case>
 *
 * Usage: zonefs_eo_bench [CASE-GLOB]   (the glob also comes from $KTEST_CASE)
 */
#define _GNU_SOURCE
#include <fnmatch.h>

#include "../../tests/zonefs-explicit-open/zonefs_util.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#define MNT		"/mnt/zfs-bench"
#define NAME		"zfs-bench"
#define FILES		48
#define REPS		11
#define WSIZE		4096

struct bench_case {
	const char *name;
	const char *opts;
	int write;
	int cmds_per_cycle;	/* the zone commands each cycle must send */
	unsigned int end_cond;	/* every file's zone after the case */
};

static const struct bench_case cases[] = {
	{ "cycle-4k-default", "", 1, 0, BLK_ZONE_COND_IMP_OPEN },
	{ "cycle-4k-explicit-open", "explicit-open", 1, 2, BLK_ZONE_COND_CLOSED },
	{ "open-close-default", "", 0, 0, BLK_ZONE_COND_EMPTY },
	{ "open-close-explicit-open", "explicit-open", 0, 2, BLK_ZONE_COND_EMPTY },
};

static struct zdev dev;
static char *buf;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One round over the files; returns 0 or -errno (the first failure). */
static int round_trip(const struct bench_case *c, off_t pos)
{
	char path[64];
	int i, fd;
	long r;

	for (i = 0; i < FILES; i++) {
		snprintf(path, sizeof(path), MNT "/seq/%d", i);
		fd = open(path, O_WRONLY | O_DIRECT);
		if (fd < 0)
			return -errno;
		if (c->write) {
			r = zt_awrite(fd, buf, WSIZE, pos);
			if (r != WSIZE) {
				close(fd);
				return r < 0 ? r : -EIO;
			}
		}
		if (close(fd))
			return -errno;
	}
	return 0;
}

/*
 * Every file's zone at the end of a case: CLOSED (explicit-open, written), EMPTY (nothing
 * written), IMP_OPEN without the option, or CLOSED there too where null_blk closed an
 * implicitly open zone to make room for the next (8 open zones, 48 files).
 */
static int check_zones(const struct bench_case *c, char *why, size_t len)
{
	char conds[128];
	int i;

	if (zdev_conds(&dev, conds, NULL, NULL)) {
		snprintf(why, len, "zone report failed");
		return -1;
	}
	for (i = 0; i < FILES; i++) {
		char want = zt_cond_char(c->end_cond);

		if (conds[i] == want || (want == 'I' && conds[i] == 'C'))
			continue;
		snprintf(why, len, "seq/%d: zone %c, expected %c (zones %s)", i, conds[i], want,
			 conds);
		return -1;
	}
	return 0;
}

static int run_case(const struct bench_case *c)
{
	unsigned long long r0, w0, s0, r1, w1, s1, zcmds;
	uint64_t t[REPS], t0, case0 = now_ns();
	double per_cycle;
	char why[256] = "";
	int rep, ret;

	umount(MNT);
	if (zt_mkzonefs(dev.nb.dev, NULL)) {
		printf("# %s: mkzonefs failed\n", c->name);
		return -1;
	}
	ret = zt_mount(dev.nb.dev, MNT, 0, c->opts);
	if (ret) {
		printf("# %s: mount -o '%s': %s\n", c->name, c->opts, strerror(-ret));
		return -1;
	}
	/* warm-up */
	ret = round_trip(c, 0);
	if (ret) {
		printf("# %s: warm-up: %s\n", c->name, strerror(-ret));
		goto fail;
	}
	if (zt_blk_stat(dev.nb.id, &r0, &w0, &s0)) {
		printf("# %s: no /sys/block/%s/stat\n", c->name, dev.nb.id);
		goto fail;
	}
	for (rep = 0; rep < REPS; rep++) {
		t0 = now_ns();
		ret = round_trip(c, (off_t)(rep + 1) * WSIZE * c->write);
		t[rep] = now_ns() - t0;
		if (ret) {
			printf("# %s: round %d: %s\n", c->name, rep, strerror(-ret));
			goto fail;
		}
	}
	zt_blk_stat(dev.nb.id, &r1, &w1, &s1);
	/* every zone command is a write request without data; each data write one request */
	zcmds = (w1 - w0) - (s1 - s0) / (WSIZE >> 9);
	per_cycle = (double)zcmds / (REPS * FILES);
	if (r1 != r0 || zcmds != (unsigned long long)c->cmds_per_cycle * REPS * FILES ||
	    (s1 - s0) != (unsigned long long)c->write * REPS * FILES * (WSIZE >> 9)) {
		printf("# %s: %llu zone commands in %d cycles (expected %d each), %llu reads, "
		       "%llu sectors written\n", c->name, zcmds, REPS * FILES, c->cmds_per_cycle,
		       r1 - r0, s1 - s0);
		goto fail;
	}
	if (zt_sysfs(&dev.nb, "nr_wro_seq_files") != 0) {
		printf("# %s: nr_wro_seq_files %ld after the rounds\n", c->name,
		       zt_sysfs(&dev.nb, "nr_wro_seq_files"));
		goto fail;
	}
	if (check_zones(c, why, sizeof(why))) {
		printf("# %s: %s\n", c->name, why);
		goto fail;
	}
	umount(MNT);
	qsort(t, REPS, sizeof(t[0]), cmp_u64);
	printf("# BENCH %s %llu ns min=%llu max=%llu reps=%d files=%d zone_cmds_per_cycle=%.2f "
	       "case_ms=%llu\n", c->name, (unsigned long long)(t[REPS / 2] / FILES),
	       (unsigned long long)(t[0] / FILES), (unsigned long long)(t[REPS - 1] / FILES), REPS,
	       FILES, per_cycle, (unsigned long long)((now_ns() - case0) / 1000000));
	return 0;
fail:
	umount(MNT);
	return -1;
}

int main(int argc, char **argv)
{
	const char *glob = argc > 1 ? argv[1] : getenv("KTEST_CASE");
	struct nullb_cfg cfg = {
		.size_mb = 64, .zone_size_mb = 1, .zone_nr_conv = 1, .zone_max_open = 8,
	};
	unsigned int i, n = 0, failed = 0;
	int ret;

	if (glob && !*glob)
		glob = NULL;
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		n += !glob || !fnmatch(glob, cases[i].name, 0);
	printf("TAP version 13\n1..%u\n", n);
	if (posix_memalign((void **)&buf, 4096, WSIZE))
		return 1;
	memset(buf, 0x5a, WSIZE);
	ret = zdev_nullb(&dev, NAME, &cfg);
	if (ret) {
		printf("# null_blk: %s\n", strerror(-ret));
		for (i = 1; i <= n; i++)
			printf("not ok %u no device\n", i);
		return 1;
	}
	mkdir(MNT, 0755);
	for (i = 0, n = 0; i < ARRAY_SIZE(cases); i++) {
		if (glob && fnmatch(glob, cases[i].name, 0))
			continue;
		ret = run_case(&cases[i]);
		printf("%s %u %s\n", ret ? "not ok" : "ok", ++n, cases[i].name);
		failed += !!ret;
		fflush(stdout);
	}
	nullb_destroy(&dev.nb);
	return failed ? 1 : 0;
}

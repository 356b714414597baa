// SPDX-License-Identifier: GPL-2.0
/*
 * STP leap seconds: the cost of reading the STP sysfs attributes, the one path of the feature
 * that stock 6.1 and ours both reach on a machine without STP (QEMU).  The leap-second policy
 * itself runs only on an STP event or once an hour, and stock's cannot be reached without STP,
 * so there is no hot path to compare beyond this.
 *
 * Cases (each: REPS rounds of LOOPS x open + read + close, the median round per read):
 *   scheduled-read   /sys/devices/system/stp/leap_seconds_scheduled (ENODATA here)
 *   leap-read        /sys/devices/system/stp/leap_seconds, code the series does not change:
 *                    the control, its ratio shows the noise between the two kernels
 *
 * Output is KTAP, one result per case, each preceded by the line the report parses:
 *   # BENCH <case> <median> ns min=<ns> max=<ns> reps=<n> loops=<n> errno=<errno of the read>
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REPS	11
#define LOOPS	2000

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a;
	unsigned long long y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

/* One open + read + close: 0 or the errno of the step that failed. */
static int read_once(const char *path)
{
	char buf[64];
	int fd = open(path, O_RDONLY), ret = 0;

	if (fd < 0)
		return errno;
	if (read(fd, buf, sizeof(buf)) < 0)
		ret = errno;
	close(fd);
	return ret;
}

static int run_case(int num, const char *name, const char *path)
{
	unsigned long long t[REPS], t0;
	int r, i, err = read_once(path);

	/* A missing file is a failure; ENODATA is the expected answer without STP. */
	if (err && err != ENODATA) {
		printf("not ok %d %s # %s: %s\n", num, name, path, strerror(err));
		return 1;
	}
	for (r = 0; r < REPS; r++) {
		t0 = now_ns();
		for (i = 0; i < LOOPS; i++)
			read_once(path);
		t[r] = (now_ns() - t0) / LOOPS;
	}
	qsort(t, REPS, sizeof(t[0]), cmp_ull);
	printf("# BENCH %s %llu ns min=%llu max=%llu reps=%d loops=%d errno=%d\n",
	       name, t[REPS / 2], t[0], t[REPS - 1], REPS, LOOPS, err);
	printf("ok %d %s\n", num, name);
	return 0;
}

int main(void)
{
	int fail = 0;

	printf("TAP version 13\n1..2\n");
	fail |= run_case(1, "scheduled-read", "/sys/devices/system/stp/leap_seconds_scheduled");
	fail |= run_case(2, "leap-read", "/sys/devices/system/stp/leap_seconds");
	return fail;
}

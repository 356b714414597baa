/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the benchmark programs share: a monotonic clock in ns, the report line
 * that scripts/bench-report.py parses, and the KTAP loop over the cases whose
 * names match a glob (argv[1] or $KTEST_CASE).
 *
 *   # BENCH <case> <median ns per op> ns min=<ns> max=<ns> reps=<n>
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline unsigned long long bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline int bench_cmp(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a;
	unsigned long long y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

/* @t: @reps repetitions' times, each of @ops operations; sorted here. */
static inline void bench_report(const char *name, unsigned long long *t, int reps,
				unsigned long long ops)
{
	qsort(t, reps, sizeof(t[0]), bench_cmp);
	printf("# BENCH %s %.3f ns min=%.3f max=%.3f reps=%d\n", name,
	       (double)t[reps / 2] / ops, (double)t[0] / ops, (double)t[reps - 1] / ops, reps);
}

/* The case glob: argv[1], else $KTEST_CASE; NULL (every case) if neither is set. */
static inline const char *bench_glob(int argc, char **argv)
{
	const char *glob = argc > 1 ? argv[1] : getenv("KTEST_CASE");

	return glob && *glob ? glob : NULL;
}

/*
 * Print the plan for the @n cases (@name(i)) that @glob selects and one KTAP
 * result per case from @run(i) (0: ok).  Returns the exit status.
 */
static inline int bench_run_cases(const char *glob, int n, const char *(*name)(int),
				  int (*run)(int))
{
	int i, k = 0, failed = 0;

	for (i = 0; i < n; i++)
		k += !glob || !fnmatch(glob, name(i), 0);
	printf("1..%d\n", k);
	k = 0;
	for (i = 0; i < n; i++) {
		if (glob && fnmatch(glob, name(i), 0))
			continue;
		if (run(i)) {
			printf("not ok %d %s\n", ++k, name(i));
			failed++;
		} else {
			printf("ok %d %s\n", ++k, name(i));
		}
	}
	return failed ? 1 : 0;
}

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fuzz groups' random numbers: splitmix64, seeded per case as
 * rng = seed ^ (case * 0xd1b54a32d192ed03), so that one seed replays every
 * case on every kernel; and the appending to a case's observation line.
 * Included by one C file per program.
 */
#ifndef FUZZ_RNG_H
#define FUZZ_RNG_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t rng;

static inline void fuzz_seed_case(uint64_t seed, unsigned long c)
{
	rng = seed ^ (c * 0xd1b54a32d192ed03ULL);
}

static inline uint64_t next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * Append to the observation line @buf of @cap bytes, whose first *@len are used;
 * what does not fit is dropped (the line stays terminated).
 */
static inline void fuzz_obs_vappend(char *buf, size_t cap, size_t *len, const char *fmt,
				    va_list ap)
{
	int n;

	if (*len >= cap - 1)
		return;
	n = vsnprintf(buf + *len, cap - *len, fmt, ap);
	if (n > 0)
		*len += n;
	if (*len > cap - 1)
		*len = cap - 1;
}

/* 0 .. n - 1 */
static inline unsigned int pick(unsigned int n)
{
	return next() % n;
}

/*
 * The run's parameters from the guest's environment: KTEST_SEED (the time if
 * unset), KTEST_FUZZ_CASES (default 1000), KTEST_FUZZ_SECONDS (default 420).
 */
struct fuzz_env {
	uint64_t seed;
	unsigned long cases;
	unsigned long limit;
};

static inline struct fuzz_env fuzz_env(void)
{
	const char *s = getenv("KTEST_SEED"), *n = getenv("KTEST_FUZZ_CASES");
	const char *t = getenv("KTEST_FUZZ_SECONDS");
	struct fuzz_env e;

	e.cases = n && *n ? strtoul(n, NULL, 0) : 1000;
	e.limit = t && *t ? strtoul(t, NULL, 0) : 420;
	e.seed = s && *s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL);
	return e;
}

#endif

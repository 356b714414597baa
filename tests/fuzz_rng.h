/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fuzz groups' random numbers: splitmix64, seeded per case as
 * rng = seed ^ (case * 0xd1b54a32d192ed03), so that one seed replays every
 * case on every kernel.  Included by one C file per program.
 */
#ifndef FUZZ_RNG_H
#define FUZZ_RNG_H

#include <stdint.h>

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

/* 0 .. n - 1 */
static inline unsigned int pick(unsigned int n)
{
	return next() % n;
}

#endif

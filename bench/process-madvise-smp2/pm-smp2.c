// SPDX-License-Identifier: GPL-2.0
/*
 * process_madvise(2) against a running target on two vCPUs, wall-clock.
 *
 * The target runs on one vCPU, the caller on the other.  The target loops over its memory:
 * it writes to every page of the advised area (so every MADV_COLD finds young ptes whose
 * accessed bit it must clear, and the target's mm is live on the other vCPU, so each flush
 * is a real TLB shootdown), and after every 64 pages it plays its own allocator: it writes 16
 * pages of a scratch area and gives them back with madvise(MADV_DONTNEED), a zap of its own
 * mm.  While a process_madvise() call holds an mmu_gather open on the target, such a zap is a
 * "nested" flush and flushes the target's whole TLB: the cost the bound on the batch is for.
 *
 * Cases, each printed as "# BENCH <case> <median> ns min= max= reps=":
 *   cold-1024x1p-vector     one call, 1024 single-page ranges (every other page of 8 MiB)
 *   cold-1024x1p-separate   1024 calls of one range each
 *   zap-during-vector       the target's time per allocator round (64 page writes + 16-page
 *                           DONTNEED) while the caller repeats the vector call back to back
 *   zap-during-separate     the same while the caller makes one call per range
 *   zap-alone               the same with no caller (the reference both others compare to)
 * Each call case: 1 warm-up and REPS (default 21) timed repetitions, median reported; each zap
 * case: REPS windows of 50 ms, the target's rounds counted in each, median ns per round.
 *
 * Usage: pm-smp2 [-r REPS] [CASE-GLOB]   (the glob also comes from $KTEST_CASE)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../tests/process-madvise/pm_util.h"

#define RANGES		1024
#define SCRATCH_PAGES	16
#define ROUND_PAGES	64
#define WINDOW_NS	50000000ull
#define DEFAULT_REPS	21
#define MAX_REPS	201

/* Shared with the target: its round counter and the address of its advised area. */
struct shared {
	volatile uint64_t rounds;
	char *volatile area;
	volatile int ready;
};

static long page_size;
static struct shared *sh;

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

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* The target, on CPU 1: write its pages round after round, zapping a scratch area each round. */
static void target(void)
{
	size_t len = 2 * RANGES * page_size, off = 0;
	char *mem, *scratch;
	uint64_t seq = 1;
	int i;

	if (pin(1))
		_exit(2);
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	scratch = mmap(NULL, SCRATCH_PAGES * page_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED || scratch == MAP_FAILED)
		_exit(2);
	madvise(mem, len, MADV_NOHUGEPAGE);
	for (off = 0; off < len; off += page_size)
		*(volatile uint64_t *)(mem + off) = seq++;
	sh->area = mem;
	sh->ready = 1;
	for (off = 0;;) {
		for (i = 0; i < ROUND_PAGES; i++) {
			*(volatile uint64_t *)(mem + off) = seq++;
			off = (off + page_size) % len;
		}
		for (i = 0; i < SCRATCH_PAGES; i++)
			*(volatile uint64_t *)(scratch + i * page_size) = seq++;
		madvise(scratch, SCRATCH_PAGES * page_size, MADV_DONTNEED);
		__atomic_add_fetch(&sh->rounds, 1, __ATOMIC_RELAXED);
	}
}

/* One vector call or RANGES single-range calls; 0 or -1 (errno set, or advised too little). */
static int advise(int pidfd, const struct iovec *iov, int vector)
{
	long r;
	int i;

	if (vector) {
		r = sys_process_madvise(pidfd, iov, RANGES, MADV_COLD, 0);
		return r == (long)(RANGES * page_size) ? 0 : -1;
	}
	for (i = 0; i < RANGES; i++) {
		r = sys_process_madvise(pidfd, &iov[i], 1, MADV_COLD, 0);
		if (r != page_size)
			return -1;
	}
	return 0;
}

static void report(const char *name, uint64_t *t, int reps)
{
	qsort(t, reps, sizeof(t[0]), cmp_u64);
	printf("# BENCH %s %llu ns min=%llu max=%llu reps=%d\n", name,
	       (unsigned long long)t[reps / 2], (unsigned long long)t[0],
	       (unsigned long long)t[reps - 1], reps);
}

/* Run one case (call: 1 = vector, 0 = separate; zap: measure the target instead). */
static int run_case(const char *name, int vector, int zap, int caller, int reps, char *why,
		    size_t whylen)
{
	static struct iovec iov[RANGES];
	static uint64_t t[MAX_REPS];
	int pidfd = -1, ret = -1, rep, i;
	pid_t pid;

	memset(sh, 0, sizeof(*sh));
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		snprintf(why, whylen, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0)
		target();
	while (!sh->ready) {
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			snprintf(why, whylen, "target failed to start");
			return -1;
		}
		usleep(1000);
	}
	pidfd = sys_pidfd_open(pid, 0);
	if (pidfd < 0) {
		snprintf(why, whylen, "pidfd_open: %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < RANGES; i++) {
		iov[i].iov_base = sh->area + 2 * i * page_size;
		iov[i].iov_len = page_size;
	}
	if (caller && advise(pidfd, iov, vector)) {	/* warm-up */
		snprintf(why, whylen, "process_madvise: %s", strerror(errno));
		goto out;
	}
	for (rep = 0; rep < reps; rep++) {
		uint64_t t0 = now_ns(), r0 = sh->rounds, calls = 0;

		if (!zap) {
			if (advise(pidfd, iov, vector))
				goto failed;
			t[rep] = now_ns() - t0;
			continue;
		}
		/* The target's rounds in one window, with the caller busy or idle. */
		while (now_ns() - t0 < WINDOW_NS) {
			if (caller) {
				if (advise(pidfd, iov, vector))
					goto failed;
				calls++;
			} else {
				usleep(1000);
			}
		}
		r0 = sh->rounds - r0;
		if (!r0 || (caller && !calls)) {
			snprintf(why, whylen, "no target round (%llu) or call (%llu) in %llu ms",
				 (unsigned long long)r0, (unsigned long long)calls,
				 WINDOW_NS / 1000000);
			goto out;
		}
		t[rep] = (now_ns() - t0) / r0;
	}
	report(name, t, reps);
	ret = 0;
	goto out;
failed:
	snprintf(why, whylen, "process_madvise: %s", strerror(errno));
out:
	if (pidfd >= 0)
		close(pidfd);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct { const char *name; int vector, zap, caller; } cases[] = {
		{ "cold-1024x1p-vector", 1, 0, 1 },
		{ "cold-1024x1p-separate", 0, 0, 1 },
		{ "zap-during-vector", 1, 1, 1 },
		{ "zap-during-separate", 0, 1, 1 },
		{ "zap-alone", 0, 1, 0 },
	};
	const char *glob = getenv("KTEST_CASE");
	int reps = DEFAULT_REPS, n = 0, failed = 0, opt, i;
	char why[160];

	while ((opt = getopt(argc, argv, "r:")) != -1) {
		if (opt != 'r')
			goto usage;
		reps = atoi(optarg);
		if (reps < 1 || reps > MAX_REPS)
			goto usage;
	}
	if (optind < argc)
		glob = argv[optind];
	if (glob && !*glob)
		glob = NULL;
	page_size = sysconf(_SC_PAGESIZE);
	setvbuf(stdout, NULL, _IOLBF, 0);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED || sysconf(_SC_NPROCESSORS_ONLN) < 2 || pin(0)) {
		printf("KTAP version 1\n1..0 # SKIP needs two CPUs\n");
		return 4;
	}

	for (i = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); i++)
		n += !glob || !fnmatch(glob, cases[i].name, 0);
	printf("KTAP version 1\n");
	printf("# process_madvise(MADV_COLD) against a running target, 2 vCPUs, wall clock\n");
	printf("1..%d\n", n);
	for (i = n = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); i++) {
		if (glob && fnmatch(glob, cases[i].name, 0))
			continue;
		n++;
		if (run_case(cases[i].name, cases[i].vector, cases[i].zap, cases[i].caller, reps,
			     why, sizeof(why))) {
			printf("not ok %d %s # %s\n", n, cases[i].name, why);
			failed++;
		} else {
			printf("ok %d %s\n", n, cases[i].name);
		}
	}
	return failed ? 1 : 0;
usage:
	fprintf(stderr, "usage: %s [-r REPS(1..%d)] [CASE-GLOB]\n", argv[0], MAX_REPS);
	return 2;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * process_madvise(2) under random input, compared with stock 6.1 case by case.
 *
 * KTEST_SEED picks the cases, KTEST_FUZZ_CASES says how many (the harness passes both on the
 * kernel command line, the same seed to the stock and the full kernel).  Each deterministic case
 * lays out a fixed arena of slots in a target child (fixed addresses, so that no address depends
 * on ASLR), then calls process_madvise() with a random pidfd, vector, advice and flags, as root or
 * as uid 1000 with or without CAP_SYS_NICE, and prints one line
 *
 *	# obs c<N> <return> <errno> <residency of every slot>
 *
 * that scripts/matrix.py compares with stock's line for the same case.  Nothing timing-dependent
 * goes into those lines.  The checks made here on every kernel: the return value is -1 or at most
 * the sum of the lengths; the errno is one the call documents; no advice changes the target's
 * data; no call takes more than 5 s.  A last phase races the call against a target that maps,
 * unmaps, protects and exits on another CPU: only "no crash, sane result" is checked there.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>

#include "kselftest.h"
#include "../process-madvise/pm_util.h"

#define PS		4096UL
#define ARENA		0x100000000000UL	/* the target's slots, at a fixed address */
#define SLOT_PAGES	16
#define NSLOTS		8
#define SLOT(i)		(ARENA + (i) * 2 * SLOT_PAGES * PS)	/* a page-sized gap after each */
#define THP_SLOT	(ARENA + 0x1000000UL)			/* 2 MiB aligned, 2 MiB */
#define SZ_2M		(2UL << 20)
#define MAX_VLEN	(PM_UIO_MAXIOV + 2)

enum slot_kind { S_NONE, S_ANON, S_ANON_RO, S_ANON_EXEC, S_PROTNONE, S_SHARED, S_MEMFD,
		 S_LOCKED, S_UNTOUCHED, S_KINDS };

struct cmd {
	int op;
	uint64_t arg[NSLOTS + 2];
};

enum { OP_LAYOUT = 1, OP_VERIFY, OP_DROP, OP_CHURN };

static uint64_t rng;
/* How often (1 in ODD) a range gets an odd address or length: rarely in most cases. */
static uint64_t odd_one_in;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

static uint64_t word(uint64_t addr)
{
	return addr * 0x9e3779b97f4a7c15ULL + 0x5eed;
}

/* ---- the target ---- */

static void fill(uint64_t addr, size_t len)
{
	size_t off;

	for (off = 0; off < len; off += PS)
		*(volatile uint64_t *)(uintptr_t)(addr + off) = word(addr + off);
}

static int64_t check(uint64_t addr, size_t len)
{
	int64_t bad = 0;
	size_t off;

	for (off = 0; off < len; off += PS)
		bad += *(volatile uint64_t *)(uintptr_t)(addr + off) != word(addr + off);
	return bad;
}

/* Map slot I as KIND; THP: the 2 MiB slot too.  Fills what the kind lets it. */
static int64_t layout(const uint64_t *kinds)
{
	int i;

	munmap((void *)ARENA, 2 * NSLOTS * SLOT_PAGES * PS);
	munmap((void *)THP_SLOT, SZ_2M);
	for (i = 0; i < NSLOTS; i++) {
		size_t len = SLOT_PAGES * PS;
		void *p = (void *)SLOT(i), *m = p;
		int prot = PROT_READ | PROT_WRITE, flags = MAP_FIXED_NOREPLACE | MAP_PRIVATE |
			   MAP_ANONYMOUS, fd = -1;

		switch (kinds[i]) {
		case S_NONE:
			continue;
		case S_ANON_EXEC:
			prot |= PROT_EXEC;
			break;
		case S_SHARED:
			flags ^= MAP_PRIVATE | MAP_SHARED;
			break;
		case S_MEMFD:
			fd = memfd_create("pm-fuzz", MFD_CLOEXEC);
			if (fd < 0 || ftruncate(fd, len))
				return -1;
			flags = MAP_FIXED_NOREPLACE | MAP_SHARED;
			break;
		}
		m = mmap(p, len, prot, flags, fd, 0);
		if (fd >= 0)
			close(fd);
		if (m != p)
			return -1;
		if (kinds[i] != S_UNTOUCHED)
			fill((uint64_t)(uintptr_t)p, len);
		if (kinds[i] == S_ANON_RO || kinds[i] == S_PROTNONE)
			mprotect(p, len, kinds[i] == S_ANON_RO ? PROT_READ : PROT_NONE);
		if (kinds[i] == S_LOCKED && mlock(p, len))
			return -1;
	}
	if (kinds[NSLOTS]) {
		if (mmap((void *)THP_SLOT, SZ_2M, PROT_READ | PROT_WRITE,
			 MAP_FIXED_NOREPLACE | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) !=
		    (void *)THP_SLOT)
			return -1;
		fill(THP_SLOT, SZ_2M);
	}
	return 0;
}

static int64_t verify(const uint64_t *kinds)
{
	int64_t bad = 0;
	int i;

	for (i = 0; i < NSLOTS; i++)
		if (kinds[i] != S_NONE && kinds[i] != S_UNTOUCHED && kinds[i] != S_PROTNONE)
			bad += check(SLOT(i), SLOT_PAGES * PS);
	if (kinds[NSLOTS])
		bad += check(THP_SLOT, SZ_2M);
	return bad;
}

/* Change the arena as fast as possible for ARG ms (the race phase). */
static int64_t churn(uint64_t ms, uint64_t seed)
{
	uint64_t end = now_ms() + ms, n = 0;

	rng = seed | 1;
	while (now_ms() < end) {
		void *p = (void *)SLOT(below(NSLOTS));
		size_t len = (1 + below(SLOT_PAGES)) * PS;

		switch (below(5)) {
		case 0:
			munmap(p, len);
			break;
		case 1:
			if (mmap(p, len, PROT_READ | PROT_WRITE,
				 MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) != MAP_FAILED)
				memset(p, 1, len);
			break;
		case 2:
			mprotect(p, len, below(2) ? PROT_READ : PROT_NONE);
			break;
		case 3:
			madvise(p, len, MADV_DONTNEED);
			break;
		case 4:
			if (!mprotect(p, len, PROT_READ | PROT_WRITE | PROT_EXEC))
				memset(p, 2, len);
			break;
		}
		n++;
	}
	return n;
}

static void __attribute__((noreturn)) target_main(int in, int out)
{
	struct cmd c;
	int64_t r;

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	while (read(in, &c, sizeof(c)) == sizeof(c)) {
		switch (c.op) {
		case OP_LAYOUT:
			r = layout(c.arg);
			break;
		case OP_VERIFY:
			r = verify(c.arg);
			break;
		case OP_DROP:
			r = setgroups(0, NULL) || setresgid(PM_UNPRIV_ID, PM_UNPRIV_ID, PM_UNPRIV_ID) ||
			    setresuid(PM_UNPRIV_ID, PM_UNPRIV_ID, PM_UNPRIV_ID) ||
			    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) ? -1 : 0;
			break;
		case OP_CHURN:
			r = churn(c.arg[0], c.arg[1]);
			_exit(r > 0 ? 0 : 1);
		default:
			r = -1;
		}
		if (write(out, &r, sizeof(r)) != sizeof(r))
			break;
	}
	_exit(0);
}

struct target {
	pid_t pid;
	int pidfd, in, out;
};

static int target_start(struct target *t)
{
	int a[2], b[2];

	if (pipe2(a, O_CLOEXEC) || pipe2(b, O_CLOEXEC))
		return -1;
	t->pid = fork();
	if (t->pid < 0)
		return -1;
	if (!t->pid) {
		close(a[1]);
		close(b[0]);
		target_main(a[0], b[1]);
	}
	close(a[0]);
	close(b[1]);
	t->in = a[1];
	t->out = b[0];
	t->pidfd = sys_pidfd_open(t->pid, 0);
	return t->pidfd < 0 ? -1 : 0;
}

static int64_t target_do(struct target *t, struct cmd *c)
{
	int64_t r;

	if (write(t->in, c, sizeof(*c)) != sizeof(*c) || read(t->out, &r, sizeof(r)) != sizeof(r))
		return -2;
	return r;
}

static void target_stop(struct target *t)
{
	kill(t->pid, SIGKILL);
	waitpid(t->pid, NULL, 0);
	close(t->in);
	close(t->out);
	close(t->pidfd);
}

/* ---- the caller ---- */


struct res {
	long ret;
	int err;
};

static struct res call_as(enum pm_creds creds, int pidfd, const struct iovec *vec, size_t vlen,
			  int advice, unsigned int flags)
{
	struct res r = { -2, 0 };
	int p[2];
	pid_t pid;

	if (creds == PM_ROOT) {
		errno = 0;
		r.ret = sys_process_madvise(pidfd, vec, vlen, advice, flags);
		r.err = r.ret < 0 ? errno : 0;
		return r;
	}
	if (pipe(p))
		return r;
	pid = fork();
	if (!pid) {
		close(p[0]);
		if (pm_set_creds(creds)) {
			r.ret = -3;
		} else {
			errno = 0;
			r.ret = sys_process_madvise(pidfd, vec, vlen, advice, flags);
			r.err = r.ret < 0 ? errno : 0;
		}
		if (write(p[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &r, sizeof(r)) != sizeof(r))
		r.ret = -2;
	close(p[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return r;
}

static int pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static const int valid_advice[] = { MADV_COLD, MADV_PAGEOUT, MADV_WILLNEED, MADV_COLLAPSE };

static int pick_advice(void)
{
	static const int other[] = { MADV_NORMAL, MADV_DONTNEED, MADV_FREE, MADV_REMOVE,
				     MADV_HUGEPAGE, MADV_DONTFORK, MADV_HWPOISON, 22, 23, 24, 26,
				     -1, 100, INT32_MIN };

	if (below(8))
		return valid_advice[below(4)];
	return other[below(sizeof(other) / sizeof(other[0]))];
}

/* An address: mostly in the arena, sometimes anywhere a caller could get wrong. */
static uint64_t pick_base(bool thp)
{
	static const uint64_t odd[] = {
		0, 1, PS, 0x7ffffffff000UL, 0x7fffffffe000UL, 0x800000000000UL,
		0xffff800000000000UL, 0xffff888000000000UL, 0xffffffffff600000UL,
		0x8000000000000000UL, ~0UL & ~(PS - 1), ARENA - PS,
	};
	if (odd_one_in && !below(odd_one_in))
		return odd[below(sizeof(odd) / sizeof(odd[0]))];
	if (thp && below(3) == 0)
		return THP_SLOT + (below(2) ? 0 : below(512) * PS);
	return SLOT(below(NSLOTS)) + below(2 * SLOT_PAGES) * PS +
	       (odd_one_in && !below(odd_one_in) ? 1 + below(PS - 1) : 0);
}

static uint64_t pick_len(void)
{
	static const uint64_t odd[] = {
		0, 1, PS - 1, PS + 1, SZ_2M, 1UL << 31, PM_MAX_RW_COUNT, PM_MAX_RW_COUNT + PS,
		1UL << 40, (uint64_t)INT64_MAX, (uint64_t)-1, (uint64_t)-PS, 3UL << 30,
	};
	uint64_t r = below(16);

	if (odd_one_in && !below(odd_one_in))
		return odd[below(sizeof(odd) / sizeof(odd[0]))];
	if (r < 2)
		return 0;
	if (r == 2)
		return 1 + below(4 * PS);
	return (1 + below(r < 11 ? 4 : 2 * SLOT_PAGES)) * PS;
}

static size_t pick_vlen(void)
{
	static const size_t odd[] = { 0, PM_UIO_MAXIOV, PM_UIO_MAXIOV + 1, SIZE_MAX,
				      (1UL << 32) + 1 };
	uint64_t r = below(16);

	if (r < 13)
		return 1 + below(r < 8 ? 3 : 12);
	return odd[below(sizeof(odd) / sizeof(odd[0]))];
}

/* Residency of the arena as the pagemap shows it: a hex mask per slot, "T<n>h<thp>" for THP. */
static void residency(pid_t pid, bool thp, char *buf, size_t cap)
{
	uint64_t ent[SLOT_PAGES], *big;
	size_t off = 0, i;
	int s;

	buf[0] = 0;
	for (s = 0; s < NSLOTS; s++) {
		unsigned int mask = 0;

		if (pagemap_read(pid, SLOT(s), SLOT_PAGES, ent))
			memset(ent, 0, sizeof(ent));
		for (i = 0; i < SLOT_PAGES; i++)
			mask |= !!(ent[i] & PM_PRESENT) << i;
		off += snprintf(buf + off, cap - off, "%04x.", mask);
	}
	if (thp) {
		long n = 0, huge = smaps_kb(pid, THP_SLOT, "AnonHugePages");

		big = calloc(512, sizeof(*big));
		if (big && !pagemap_read(pid, THP_SLOT, 512, big))
			for (i = 0; i < 512; i++)
				n += !!(big[i] & PM_PRESENT);
		free(big);
		snprintf(buf + off, cap - off, "T%ldh%ld", n, huge);
	}
}

static bool documented_errno(int e)
{
	switch (e) {
	case EINVAL: case EFAULT: case EBADF: case ESRCH: case EACCES: case EPERM:
	case ENOMEM: case EAGAIN: case EINTR: case EBUSY:
		return true;
	}
	return false;
}

static struct iovec *vec_area;	/* MAX_VLEN entries, the page after it unmapped */
static size_t vec_area_len;

static int fail_count;

#define FAIL(...) do { ksft_print_msg(__VA_ARGS__); fail_count++; } while (0)

/* pidfd kinds */
enum { P_TARGET, P_TARGET_USER, P_SELF, P_CLOSED, P_MINUS1, P_DEVNULL, P_ZOMBIE, P_REAPED,
       P_KTHREAD, P_KINDS };

static int run_cases(long cases)
{
	struct target t, tu;
	int fds[P_KINDS], devnull, i;
	pid_t zombie, reaped;
	uint64_t kinds[NSLOTS + 2];
	long c;

	if (target_start(&t) || target_start(&tu))
		return -1;
	{
		struct cmd d = { .op = OP_DROP };

		if (target_do(&tu, &d))
			return -1;
	}
	zombie = fork();
	if (!zombie)
		_exit(0);
	reaped = fork();
	if (!reaped)
		_exit(0);
	fds[P_ZOMBIE] = sys_pidfd_open(zombie, 0);
	fds[P_REAPED] = sys_pidfd_open(reaped, 0);
	waitpid(reaped, NULL, 0);
	{
		siginfo_t si;

		waitid(P_PID, zombie, &si, WEXITED | WNOWAIT);
	}
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	fds[P_TARGET] = t.pidfd;
	fds[P_TARGET_USER] = tu.pidfd;
	fds[P_SELF] = sys_pidfd_open(getpid(), 0);
	fds[P_CLOSED] = 1000;
	fds[P_MINUS1] = -1;
	fds[P_DEVNULL] = devnull;
	fds[P_KTHREAD] = sys_pidfd_open(2, 0);

	for (c = 0; c < cases; c++) {
		struct target *tt;
		struct cmd lay = { .op = OP_LAYOUT };
		struct iovec *vec;
		size_t vlen, n, j;
		uint64_t total = 0, t0, took;
		int pk, advice, creds, vk;
		unsigned int flags;
		char res[160];
		struct res r;
		bool thp;

		/* Every kernel draws the same numbers for case c, whatever happened before. */
		rng = (strtoull(getenv("KTEST_SEED") ?: "1", NULL, 0) + 1) * 0x2545f4914f6cdd1dULL ^
		      (uint64_t)(c + 1) * 0x9e3779b97f4a7c15ULL;
		rng |= 1;
		for (i = 0; i < 4; i++)
			rnd();

		/* A third of the cases have no odd address or length at all. */
		odd_one_in = below(3) ? 4 + below(40) : 0;
		pk = below(16) < 13 ? (below(3) ? P_TARGET : P_TARGET_USER) : below(P_KINDS);
		tt = pk == P_TARGET_USER ? &tu : &t;
		thp = below(6) == 0;
		for (i = 0; i < NSLOTS; i++)
			kinds[i] = below(S_KINDS);
		kinds[NSLOTS] = thp;
		memcpy(lay.arg, kinds, sizeof(kinds));
		if (target_do(tt, &lay)) {
			FAIL("case %ld: layout failed", c);
			break;
		}
		advice = pick_advice();
		flags = below(24) ? 0 : (unsigned int)rnd();
		creds = below(3) ? PM_ROOT : below(PM_CREDS_KINDS);
		vlen = pick_vlen();
		n = vlen < MAX_VLEN ? vlen : MAX_VLEN;
		vec = vec_area + MAX_VLEN - n;
		for (j = 0; j < n; j++) {
			vec[j].iov_base = (void *)(uintptr_t)pick_base(thp);
			vec[j].iov_len = pick_len();
			/* An empty range is often at an address no other range could have. */
			if (!vec[j].iov_len && below(2))
				vec[j].iov_base = (void *)(uintptr_t)(below(2) ? 1 + below(PS - 1) :
								      SLOT(0) + 1 + below(PS - 1));
			total += vec[j].iov_len;
		}
		/* The vector itself: mostly fine, sometimes not readable at all or in part. */
		vk = below(40);
		if (vk == 0)
			vec = NULL;
		else if (vk == 1)
			vec = (struct iovec *)0xffff888000001000UL;
		else if (vk == 2 && n)
			vec = vec_area + MAX_VLEN - n + 1;	/* last entry in the unmapped page */

		t0 = now_ms();
		r = call_as(creds, fds[pk], vec, vlen, advice, flags);
		took = now_ms() - t0;

		if (r.ret < -1 || (r.ret >= 0 && (uint64_t)r.ret > total && vk > 2))
			FAIL("case %ld: return %ld of %llu bytes", c, r.ret,
			     (unsigned long long)total);
		if (r.ret == -1 && !documented_errno(r.err))
			FAIL("case %ld: errno %d", c, r.err);
		if (r.ret >= 0 && (advice != valid_advice[0] && advice != valid_advice[1] &&
				   advice != valid_advice[2] && advice != valid_advice[3]))
			FAIL("case %ld: advice %d accepted", c, advice);
		if (took > 5000)
			FAIL("case %ld: took %llu ms", c, (unsigned long long)took);
		/* Residency first: checking the data faults every page back in. */
		residency(tt->pid, thp, res, sizeof(res));
		lay.op = OP_VERIFY;
		if (target_do(tt, &lay))
			FAIL("case %ld: advice %d changed the target's data", c, advice);
		printf("# obs c%ld %ld %s %s\n", c, r.ret, r.ret < 0 ? (strerrorname_np(r.err) ?: "?") :
		       "-", res);
		if (c % 500 == 0)
			fflush(stdout);
	}
	target_stop(&t);
	target_stop(&tu);
	waitpid(zombie, NULL, 0);
	for (i = 0; i < P_KINDS; i++)
		if (i != P_TARGET && i != P_TARGET_USER && i != P_CLOSED && fds[i] >= 0)
			close(fds[i]);
	return 0;
}

/*
 * Races: a target on the other CPU churns the arena (and is killed halfway through some rounds)
 * while random vectors over it are advised.  Only sanity is checked; what each call returns
 * depends on timing and is not an observation.
 */
static int run_races(long rounds)
{
	long round, calls = 0;

	for (round = 0; round < rounds; round++) {
		struct cmd lay = { .op = OP_LAYOUT };
		struct target t;
		uint64_t end;
		int i;

		if (target_start(&t))
			return -1;
		for (i = 0; i < NSLOTS; i++)
			lay.arg[i] = S_ANON;
		if (target_do(&t, &lay))
			return -1;
		lay.op = OP_CHURN;
		lay.arg[0] = 300;
		lay.arg[1] = rnd();
		if (write(t.in, &lay, sizeof(lay)) != sizeof(lay))
			return -1;
		end = now_ms() + 400;
		while (now_ms() < end) {
			struct iovec vec[8];
			size_t n = 1 + below(8), j;
			int advice = valid_advice[below(4)];
			struct res r;

			for (j = 0; j < n; j++)
				vec[j] = (struct iovec){ (void *)(uintptr_t)pick_base(false),
							 pick_len() };
			r = call_as(below(4) ? PM_ROOT : PM_USER_NICE, t.pidfd, vec, n, advice, 0);
			calls++;
			if (r.ret < -1 || (r.ret == -1 && !documented_errno(r.err)))
				FAIL("race round %ld: ret %ld errno %d", round, r.ret, r.err);
			if (round % 2 && now_ms() + 200 > end)
				kill(t.pid, SIGKILL);
		}
		target_stop(&t);
	}
	ksft_print_msg("%ld racing calls in %ld rounds\n", calls, rounds);
	return 0;
}

int main(void)
{
	long cases = strtol(getenv("KTEST_FUZZ_CASES") ?: "1000", NULL, 0);
	const char *seed = getenv("KTEST_SEED") ?: "1";
	struct iovec v = { 0, 0 };
	uint64_t t0;
	long r;

	ksft_print_header();
	ksft_set_plan(3);
	ksft_print_msg("seed %s, %ld cases (KTEST_SEED, KTEST_FUZZ_CASES)\n", seed, cases);

	errno = 0;
	r = sys_process_madvise(-1, &v, 1, MADV_COLD, 1);
	if (r == -1 && errno == EINVAL)
		ksft_test_result_pass("syscall_exists\n");
	else
		ksft_exit_fail_msg("process_madvise(-1, ..., flags 1): %ld, %s (want EINVAL)\n",
				   r, strerrorname_np(errno) ?: "?");

	if (pin_cpu(0))
		ksft_exit_fail_msg("sched_setaffinity: %s\n", strerror(errno));
	vec_area_len = MAX_VLEN * sizeof(struct iovec);
	vec_area_len = (vec_area_len + PS - 1) & ~(PS - 1);
	{
		char *m = mmap(NULL, vec_area_len + PS, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED || munmap(m + vec_area_len, PS))
			ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
		vec_area = (struct iovec *)(m + vec_area_len) - MAX_VLEN;
	}

	t0 = now_ms();
	fail_count = 0;
	if (run_cases(cases))
		ksft_exit_fail_msg("setting up the targets: %s\n", strerror(errno));
	ksft_print_msg("%ld cases in %llu ms\n", cases, (unsigned long long)(now_ms() - t0));
	if (fail_count)
		ksft_test_result_fail("cases (%d failures)\n", fail_count);
	else
		ksft_test_result_pass("cases\n");

	fail_count = 0;
	{
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(0, &set);
		CPU_SET(1, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	rng = strtoull(seed, NULL, 0) | 1;
	odd_one_in = 16;
	if (run_races(cases >= 5000 ? 20 : 6))
		ksft_exit_fail_msg("race setup: %s\n", strerror(errno));
	if (fail_count)
		ksft_test_result_fail("races (%d failures)\n", fail_count);
	else
		ksft_test_result_pass("races\n");
	ksft_finished();
}

// SPDX-License-Identifier: GPL-2.0
/*
 * process_madvise(2) benchmark: MADV_COLD and MADV_PAGEOUT applied through a pidfd to a child
 * holding anonymous memory, over 1, 64 and 1024 ranges of 1 and of 16 pages, as one call with
 * the whole vector and as one call per range.
 *
 * Every case gets a fresh child that maps twice the memory it needs and populates all of it;
 * range i starts at chunk 2 * i, so no two ranges touch.  Before each repetition the child
 * writes to every page of every range (for PAGEOUT this faults the pages back in from swap,
 * so each repetition has the same work to do); only the process_madvise call(s) are timed,
 * with CLOCK_MONOTONIC.  The first repetition is a warm-up and is not counted; the cost of
 * the next one sets the number of timed repetitions: REPS (default 11), or fewer (down to 5)
 * when REPS would not fit in a budget of 2 s of guest time per case.
 *
 * Output is KTAP, one result per case, each preceded by the line the report parses:
 *   # BENCH <case> <median> ns min=<ns> max=<ns> reps=<n> calls=<n> ranges=<n> pages=<n>
 *           case_ms=<guest time the whole case took>
 *
 * cold-active-* cases put the pages on the active list (untimed) before each repetition.
 *
 * Usage: process-madvise [-r REPS] [CASE-GLOB]   (the glob also comes from $KTEST_CASE)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <asm/unistd.h>

/* The raw system calls and the advice numbers, as the test has them. */
#include "../../tests/process-madvise/pm_util.h"

#define DEFAULT_REPS	11
#define MIN_REPS	5
#define MAX_REPS	1001
/* Guest time one case may take, in ns, before its repetitions drop from REPS towards MIN_REPS. */
#define CASE_BUDGET_NS	2000000000ull
#define MAX_RANGES	1024	/* UIO_MAXIOV */

struct bench_case {
	char name[48];
	int advice;
	int ranges;
	int pages;	/* per range */
	int vector;	/* one call with every range, or one call per range */
	int active;	/* the pages are put on the active list before each repetition */
};

static long page_size;

/* A store the compiler must keep: it is what faults the page in or marks it accessed. */
static void touch(char *p, uint64_t v)
{
	__atomic_store_n((uint64_t *)p, v, __ATOMIC_RELAXED);
}

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

/* The whole of LEN bytes through read(2) or write(2), retrying short and interrupted calls. */
static int io_full(int fd, void *buf, size_t len, bool wr)
{
	char *p = buf;

	while (len) {
		ssize_t n = wr ? write(fd, p, len) : read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
	return io_full(fd, (void *)buf, len, true);
}

static int read_full(int fd, void *buf, size_t len)
{
	return io_full(fd, buf, len, false);
}

/*
 * The target: map twice the memory of all ranges, populate it, report the address, then on each
 * 't' write to every page of every range and answer; exit on anything else or EOF.  The first
 * word of each page gets a value that changes per write, the rest stays zero: zram neither
 * sees a same-filled page nor spends long compressing it.
 */
static void child(const struct bench_case *c, int cmd_fd, int ack_fd)
{
	size_t chunk = (size_t)c->pages * page_size;
	size_t len = 2 * chunk * c->ranges;
	uint64_t seq = 1;
	char *mem, op;
	size_t off;
	int i, p;

	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		_exit(2);
	madvise(mem, len, MADV_NOHUGEPAGE);
	for (off = 0; off < len; off += page_size)
		touch(mem + off, seq++);
	if (write_full(ack_fd, &mem, sizeof(mem)))
		_exit(2);
	while (read_full(cmd_fd, &op, 1) == 0 && op == 't') {
		for (i = 0; i < c->ranges; i++) {
			char *r = mem + 2 * chunk * i;

			for (p = 0; p < c->pages; p++)
				touch(r + (size_t)p * page_size, seq++);
		}
		if (write_full(ack_fd, &op, 1))
			_exit(2);
	}
	_exit(0);
}

/* Swapped-out memory of @pid in bytes, from VmSwap in /proc/PID/status; -1 if unknown. */
static long long vm_swap(pid_t pid)
{
	char path[64], line[256];
	long long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSwap: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

/*
 * Put the pages of the ranges on the active LRU list, untimed: read each page twice through
 * /proc/PID/mem (get_user_pages() marks it accessed each time: referenced, then active), then
 * drain this CPU's LRU batches (madvise(MADV_COLD) of a scratch page starts with
 * lru_add_drain()).  A fresh write leaves an anonymous page on the inactive list, where COLD has
 * nothing to move.
 */
static int activate(pid_t pid, const struct iovec *iov, int ranges)
{
	static char *scratch;
	char path[64], b;
	int fd, pass, i, ret = 0;
	size_t off;

	if (!scratch) {
		scratch = mmap(NULL, page_size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (scratch == MAP_FAILED)
			return -1;
		scratch[0] = 1;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < ranges; i++)
			for (off = 0; off < iov[i].iov_len; off += page_size)
				if (pread(fd, &b, 1, (uintptr_t)iov[i].iov_base + off) != 1)
					ret = -1;
		madvise(scratch, page_size, MADV_COLD);
	}
	close(fd);
	return ret;
}

/*
 * Run one case; on success print its BENCH line and return 0, else print why and return -1.
 */
static int run_case(const struct bench_case *c, int reps, char *why, size_t whylen)
{
	static struct iovec iov[MAX_RANGES];
	static uint64_t t[MAX_REPS];
	size_t chunk = (size_t)c->pages * page_size;
	size_t want = chunk * c->ranges;
	int cmd[2], ack[2], pidfd = -1, ret = -1, rep, i, status;
	char *addr, op = 't';
	uint64_t t0, t1, start = now_ns();
	pid_t pid;

	if (pipe(cmd) || pipe(ack)) {
		snprintf(why, whylen, "pipe: %s", strerror(errno));
		return -1;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		snprintf(why, whylen, "fork: %s", strerror(errno));
		for (i = 0; i < 2; i++) {
			close(cmd[i]);
			close(ack[i]);
		}
		return -1;
	}
	if (pid == 0) {
		close(cmd[1]);
		close(ack[0]);
		child(c, cmd[0], ack[1]);
	}
	close(cmd[0]);
	close(ack[1]);
	if (read_full(ack[0], &addr, sizeof(addr))) {
		snprintf(why, whylen, "target did not start");
		goto out;
	}
	pidfd = sys_pidfd_open(pid, 0);
	if (pidfd < 0) {
		snprintf(why, whylen, "pidfd_open: %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < c->ranges; i++) {
		iov[i].iov_base = addr + 2 * chunk * i;
		iov[i].iov_len = chunk;
	}

	for (rep = 0; rep <= reps; rep++) {
		uint64_t rep_start = now_ns();
		size_t done = 0;
		long r = 0;

		if (write_full(cmd[1], &op, 1) || read_full(ack[0], &op, 1)) {
			snprintf(why, whylen, "target stopped answering");
			goto out;
		}
		if (c->active && activate(pid, iov, c->ranges)) {
			snprintf(why, whylen, "activating the pages: %s", strerror(errno));
			goto out;
		}
		if (c->vector) {
			t0 = now_ns();
			r = sys_process_madvise(pidfd, iov, c->ranges, c->advice, 0);
			t1 = now_ns();
			if (r > 0)
				done = r;
		} else {
			t0 = now_ns();
			for (i = 0; i < c->ranges; i++) {
				r = sys_process_madvise(pidfd, &iov[i], 1, c->advice, 0);
				if (r < 0)
					break;
				done += r;
			}
			t1 = now_ns();
		}
		if (r < 0) {
			snprintf(why, whylen, "process_madvise: %s", strerror(errno));
			goto out;
		}
		if (done != want) {
			snprintf(why, whylen, "process_madvise advised %zu of %zu bytes", done, want);
			goto out;
		}
		if (c->advice == MADV_PAGEOUT) {
			/* The pages must really have gone to swap, or there was nothing to time. */
			long long sw = vm_swap(pid);

			if (sw < (long long)want) {
				snprintf(why, whylen,
					 "after MADV_PAGEOUT only %lld of %zu bytes in swap (no swap?)",
					 sw, want);
				goto out;
			}
		}
		if (rep == 0)
			continue;
		t[rep - 1] = t1 - t0;
		if (rep == 1) {
			/*
			 * The first timed repetition (re-touch, for PAGEOUT a swap-in, and the
			 * call) sets how many fit in the budget: an odd number from MIN_REPS up
			 * to the asked-for REPS.
			 */
			uint64_t one = now_ns() - rep_start;
			uint64_t fit = CASE_BUDGET_NS / (one ? one : 1);

			if (fit < (uint64_t)reps)
				reps = fit >= MIN_REPS ? (int)fit | 1 :
				       reps < MIN_REPS ? reps : MIN_REPS;
		}
	}
	qsort(t, reps, sizeof(t[0]), cmp_u64);
	printf("# BENCH %s %llu ns min=%llu max=%llu reps=%d calls=%d ranges=%d pages=%d case_ms=%llu\n",
	       c->name, (unsigned long long)(reps % 2 ? t[reps / 2] : (t[reps / 2 - 1] + t[reps / 2]) / 2),
	       (unsigned long long)t[0], (unsigned long long)t[reps - 1], reps,
	       c->vector ? 1 : c->ranges, c->ranges, c->ranges * c->pages,
	       (unsigned long long)(now_ns() - start) / 1000000);
	ret = 0;
out:
	op = 'q';
	write_full(cmd[1], &op, 1);
	close(cmd[1]);
	close(ack[0]);
	if (pidfd >= 0)
		close(pidfd);
	if (ret)
		kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct { const char *name; int advice; } advices[] = {
		{ "cold", MADV_COLD }, { "pageout", MADV_PAGEOUT },
	};
	static const int nranges[] = { 1, 64, 1024 };
	static const int npages[] = { 1, 16 };
	static struct bench_case cases[64];
	const char *glob = getenv("KTEST_CASE");
	int reps = DEFAULT_REPS, n = 0, failed = 0, opt, a, r, p, v, i;
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

	for (a = 0; a < 2; a++)
		for (r = 0; r < 3; r++)
			for (p = 0; p < 2; p++)
				for (v = 1; v >= 0; v--) {
					struct bench_case *c = &cases[n];

					snprintf(c->name, sizeof(c->name), "%s-%dx%dp-%s",
						 advices[a].name, nranges[r], npages[p],
						 v ? "vector" : "separate");
					c->advice = advices[a].advice;
					c->ranges = nranges[r];
					c->pages = npages[p];
					c->vector = v;
					if (!glob || !fnmatch(glob, c->name, 0))
						n++;
				}

	/* COLD on pages on the active list: the deactivation the call exists for. */
	for (r = 1; r < 3; r++)
		for (v = 1; v >= 0; v--) {
			struct bench_case *c = &cases[n];

			c->ranges = r == 1 ? 64 : 1024;
			c->pages = r == 1 ? 16 : 1;
			snprintf(c->name, sizeof(c->name), "cold-active-%dx%dp-%s", c->ranges,
				 c->pages, v ? "vector" : "separate");
			c->advice = MADV_COLD;
			c->vector = v;
			c->active = 1;
			if (!glob || !fnmatch(glob, c->name, 0))
				n++;
		}

	printf("KTAP version 1\n");
	printf("# process_madvise through a pidfd; up to %d timed repetitions per case (+1 warm-up)\n",
	       reps);
	printf("1..%d\n", n);
	for (i = 0; i < n; i++) {
		if (run_case(&cases[i], reps, why, sizeof(why))) {
			printf("not ok %d %s # %s\n", i + 1, cases[i].name, why);
			failed++;
		} else {
			printf("ok %d %s\n", i + 1, cases[i].name);
		}
	}
	printf("# guest time since boot: %.1f s\n", now_ns() / 1e9);
	return failed ? 1 : 0;
usage:
	fprintf(stderr, "usage: %s [-r REPS(1..%d)] [CASE-GLOB]\n", argv[0], MAX_REPS);
	return 2;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * process_madvise(2) at work: a child writes 32 MiB of anonymous memory, then its parent pages
 * that memory out from the outside (MADV_PAGEOUT through a pidfd) and watches the child's
 * resident and swapped sizes; the child reads its memory back, intact.  Needs swap.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pm_util.h"

#define SIZE (32UL << 20)
#define SIZE_MIB (SIZE >> 20)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void show(pid_t pid, uint64_t addr, const char *when)
{
	printf("  %-34s Rss %6ld kB   Swap %6ld kB\n", when, smaps_kb(pid, addr, "Rss"),
	       smaps_kb(pid, addr, "Swap"));
}

int main(void)
{
	int go[2], ready[2], pidfd;
	cpu_set_t cpu0;
	struct iovec iov;
	uint64_t *mem;
	char c = 0;
	double start = now(), t0;
	long ret;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/*
	 * Parent and child on one CPU: the kernel drains the caller's CPU's LRU batches before
	 * advising, and the last pages the child touched would otherwise wait in its CPU's.
	 */
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	sched_setaffinity(0, sizeof(cpu0), &cpu0);
	mem = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED || pipe(go) || pipe(ready)) {
		perror("pm_demo: setup");
		return 1;
	}
	pid = fork();
	if (pid == 0) {
		size_t i, bad = 0;

		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		/* The child's own copy: written after the fork, so only the child maps it. */
		for (i = 0; i < SIZE / sizeof(*mem); i++)
			mem[i] = i * 2654435761u;
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		for (i = 0; i < SIZE / sizeof(*mem); i++)
			bad += mem[i] != i * 2654435761u;
		c = bad ? 'x' : 'k';
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		pause();	/* until killed: the parent looks at its memory once more */
		_exit(0);
	}
	if (pid < 0 || read(ready[0], &c, 1) != 1) {
		perror("pm_demo: child");
		return 1;
	}
	pidfd = sys_pidfd_open(pid, 0);
	printf("child %d wrote %lu MiB of anonymous memory at %p; that mapping:\n", pid, SIZE_MIB,
	       mem);
	show(pid, (uintptr_t)mem, "before");

	iov.iov_base = mem;
	iov.iov_len = SIZE;
	t0 = now();
	ret = sys_process_madvise(pidfd, &iov, 1, MADV_PAGEOUT, 0);
	if (ret < 0) {
		perror("process_madvise(MADV_PAGEOUT)");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return 1;
	}
	printf("parent: process_madvise(pidfd, {%p, %lu MiB}, 1, MADV_PAGEOUT, 0) = %ld (%.2f s)\n",
	       mem, SIZE_MIB, ret, now() - t0);
	show(pid, (uintptr_t)mem, "after MADV_PAGEOUT");

	if (write(go[1], &c, 1) != 1 || read(ready[0], &c, 1) != 1)
		c = '?';
	show(pid, (uintptr_t)mem, "after the child read it all back");
	printf("child: its %lu MiB %s\n", SIZE_MIB,
	       c == 'k' ? "came back intact from swap" : "WAS DAMAGED");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	printf("(%.1f s in all)\n", now() - start);
	return c == 'k' ? 0 : 1;
}

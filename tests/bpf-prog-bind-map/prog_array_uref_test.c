// SPDX-License-Identifier: GPL-2.0
/*
 * A prog array's user references can drop to zero more than once: after its
 * last fd is closed, BPF_MAP_GET_FD_BY_ID hands out a new fd while the work
 * that the first drop scheduled to clear the array still holds the map.  Each
 * drop takes a map reference for that work; when the work is still pending,
 * 6.1 never puts the second one and the map is never freed (found by
 * bpf-prog-bind-map-fuzz under host load; patches/fixes/0007 puts it).
 *
 * The work is queued on the CPU where the last fd was closed.  A SCHED_FIFO
 * thread spinning on that CPU keeps its kworker off while this thread, moved
 * to another CPU, takes and closes a new fd; then the spinner stops, the work
 * runs, and the map must go.  Other map types have no such work: an array
 * map goes through the same steps as a control.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>
#include "kselftest_harness.h"
#include "bm_util.h"

static int map_create(enum bpf_map_type type)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 1;
	return sys_bpf(BPF_MAP_CREATE, &a, sizeof(a));
}

static int fd_by_id(unsigned int id)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_id = id;
	return sys_bpf(BPF_MAP_GET_FD_BY_ID, &a, sizeof(a));
}

/* Wait up to 5 s for the map with @id to be gone. */
static int map_gone(unsigned int id)
{
	int i, fd;

	for (i = 0; i < 500; i++) {
		fd = fd_by_id(id);
		if (fd < 0)
			return errno == ENOENT;
		close(fd);
		usleep(10000);
	}
	return 0;
}

static int pin(pid_t tid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(tid, sizeof(set), &set);
}

static atomic_int spin_stop, spinning;

static void *spinner(void *arg)
{
	(void)arg;
	atomic_store(&spinning, 1);
	while (!atomic_load(&spin_stop))
		;
	return NULL;
}

FIXTURE(uref) {
	struct sched_param saved_param;
	int saved_policy;
	cpu_set_t saved_cpus;
};

FIXTURE_SETUP(uref)
{
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	self->saved_policy = sched_getscheduler(0);
	ASSERT_EQ(0, sched_getparam(0, &self->saved_param));
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(self->saved_cpus), &self->saved_cpus));
}

FIXTURE_TEARDOWN(uref)
{
	sched_setscheduler(0, self->saved_policy, &self->saved_param);
	sched_setaffinity(0, sizeof(self->saved_cpus), &self->saved_cpus);
}

FIXTURE_VARIANT(uref) {
	enum bpf_map_type type;
};

FIXTURE_VARIANT_ADD(uref, prog_array) {
	.type = BPF_MAP_TYPE_PROG_ARRAY,
};

FIXTURE_VARIANT_ADD(uref, array) {
	.type = BPF_MAP_TYPE_ARRAY,
};

/*
 * Close the last fd on CPU 0 with a lower-priority SCHED_FIFO spinner queued
 * there, move to CPU 1 (the spinner then holds CPU 0 and its kworker waits),
 * take a new fd by id and close it: the user references drop to zero a second
 * time while the clearing work is pending.
 */
TEST_F(uref, second_release_while_clear_pending)
{
	struct sched_param hi = { .sched_priority = 20 }, lo = { .sched_priority = 10 };
	pthread_attr_t attr;
	pthread_t thread;
	cpu_set_t cpu0;
	unsigned int id;
	int fd, again;

	ASSERT_EQ(0, pin(0, 0));
	ASSERT_EQ(0, sched_setscheduler(0, SCHED_FIFO, &hi));
	fd = map_create(variant->type);
	ASSERT_LE(0, fd) TH_LOG("BPF_MAP_CREATE: %s", strerror(errno));
	id = map_id(fd);
	ASSERT_NE(0, id);

	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	atomic_store(&spin_stop, 0);
	atomic_store(&spinning, 0);
	ASSERT_EQ(0, pthread_attr_init(&attr));
	ASSERT_EQ(0, pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED));
	ASSERT_EQ(0, pthread_attr_setschedpolicy(&attr, SCHED_FIFO));
	ASSERT_EQ(0, pthread_attr_setschedparam(&attr, &lo));
	ASSERT_EQ(0, pthread_attr_setaffinity_np(&attr, sizeof(cpu0), &cpu0));
	ASSERT_EQ(0, pthread_create(&thread, &attr, spinner, NULL));

	/* The spinner waits behind us on CPU 0; the clearing work queues there. */
	close(fd);
	ASSERT_EQ(0, pin(0, 1));
	while (!atomic_load(&spinning))
		;
	again = fd_by_id(id);
	if (again >= 0)
		close(again);
	atomic_store(&spin_stop, 1);
	pthread_join(thread, NULL);
	pthread_attr_destroy(&attr);

	if (variant->type == BPF_MAP_TYPE_PROG_ARRAY) {
		ASSERT_LE(0, again)
			TH_LOG("the clearing work already ran: the race was not set up");
	} else {
		ASSERT_GT(0, again) TH_LOG("an array map outlived its last fd");
	}
	EXPECT_TRUE(map_gone(id)) TH_LOG("map id %u still alive 5 s after its last fd", id);
}

TEST_HARNESS_MAIN

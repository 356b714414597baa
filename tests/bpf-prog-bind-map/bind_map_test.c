// SPDX-License-Identifier: GPL-2.0
/*
 * BPF_PROG_BIND_MAP (patches/bpf-prog-bind-map), through raw bpf(2) calls:
 * a bound map is listed in the program's map_ids and lives as long as the
 * program; binding twice, or binding a map the instructions use, holds it
 * once (no leaked reference: the map is still freed with the program); the
 * errors of bad flags, bad attr tails and bad or swapped fds; unprivileged
 * callers under kernel.unprivileged_bpf_disabled 0 and 2 (which only stops them
 * making programs and maps); binds racing on two CPUs; binds racing the
 * readers of the program's used maps (map_ids and the xlated dump), the close
 * of its last fd, and the tail-call owner checks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include "kselftest_harness.h"
#include "bm_util.h"

static int map_create_n(enum bpf_map_type type, unsigned int value_size,
			unsigned int max_entries)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = 4;
	a.value_size = value_size;
	a.max_entries = max_entries;
	return sys_bpf(BPF_MAP_CREATE, &a, sizeof(a));
}

static int map_create(enum bpf_map_type type, unsigned int value_size)
{
	return map_create_n(type, value_size, 1);
}

static int load_insns(enum bpf_prog_type type, const struct bpf_insn *insns,
		      unsigned int n)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.insns = (unsigned long)insns;
	a.insn_cnt = n;
	a.license = (unsigned long)"GPL";
	return sys_bpf(BPF_PROG_LOAD, &a, sizeof(a));
}

/* A socket filter returning 0; with @map_fd >= 0 it loads that map's address. */
static int prog_load(int map_fd)
{
	struct bpf_insn with_map[] = {
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1,
		  .src_reg = BPF_PSEUDO_MAP_FD, .imm = map_fd },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	if (map_fd < 0)
		return load_insns(BPF_PROG_TYPE_SOCKET_FILTER, with_map + 2, 2);
	return load_insns(BPF_PROG_TYPE_SOCKET_FILTER, with_map, 4);
}

static long bind_map(int prog_fd, int map_fd, unsigned int flags)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_bind_map.prog_fd = prog_fd;
	a.prog_bind_map.map_fd = map_fd;
	a.prog_bind_map.flags = flags;
	return sys_bpf(BPF_PROG_BIND_MAP, &a, sizeof(a)) ? -errno : 0;
}

/* The program's map ids: their count (up to @max stored in @ids), or -errno. */
static int prog_map_ids(int prog_fd, unsigned int *ids, unsigned int max)
{
	struct bpf_prog_info info;
	int err = prog_info_ids(prog_fd, &info, ids, max);

	return err ?: (int)info.nr_map_ids;
}

/* Wait up to 5 s for the map to go (programs and maps are freed deferred). */
static bool map_gone(unsigned int id)
{
	int i;

	for (i = 0; i < 500; i++) {
		if (!map_alive(id))
			return true;
		usleep(10000);
	}
	return false;
}

FIXTURE(bm) {
	int prog, map;
};

FIXTURE_SETUP(bm)
{
	self->prog = prog_load(-1);
	ASSERT_LE(0, self->prog) TH_LOG("prog load: %s", strerror(errno));
	self->map = map_create(BPF_MAP_TYPE_ARRAY, 8);
	ASSERT_LE(0, self->map) TH_LOG("map create: %s", strerror(errno));
}

FIXTURE_TEARDOWN(bm)
{
	close(self->prog);
	close(self->map);
}

/* A program without maps holds the bound map, listed in map_ids. */
TEST_F(bm, bound_map_in_map_ids)
{
	unsigned int ids[4] = { 0 };

	ASSERT_EQ(0, prog_map_ids(self->prog, ids, 4));
	ASSERT_EQ(0, bind_map(self->prog, self->map, 0));
	ASSERT_EQ(1, prog_map_ids(self->prog, ids, 4));
	EXPECT_EQ(map_id(self->map), ids[0]);
}

/* A second bind of the same map succeeds and changes nothing. */
TEST_F(bm, bind_twice_holds_once)
{
	unsigned int ids[4] = { 0 };

	ASSERT_EQ(0, bind_map(self->prog, self->map, 0));
	ASSERT_EQ(0, bind_map(self->prog, self->map, 0));
	EXPECT_EQ(1, prog_map_ids(self->prog, ids, 4));
}

/* A map the instructions use is already held: binding it adds nothing. */
TEST_F(bm, bind_a_map_the_insns_use)
{
	unsigned int ids[4] = { 0 };
	int prog = prog_load(self->map);

	ASSERT_LE(0, prog);
	ASSERT_EQ(1, prog_map_ids(prog, ids, 4));
	ASSERT_EQ(0, bind_map(prog, self->map, 0));
	EXPECT_EQ(1, prog_map_ids(prog, ids, 4));
	EXPECT_EQ(map_id(self->map), ids[0]);
	close(prog);
}

/* Maps of several types, appended in bind order after the used ones. */
TEST_F(bm, several_maps_in_order)
{
	int hash = map_create(BPF_MAP_TYPE_HASH, 8);
	int parr = map_create(BPF_MAP_TYPE_PROG_ARRAY, 4);
	int prog = prog_load(self->map);
	unsigned int ids[8] = { 0 };

	ASSERT_LE(0, hash);
	ASSERT_LE(0, parr);
	ASSERT_LE(0, prog);
	ASSERT_EQ(0, bind_map(prog, hash, 0));
	ASSERT_EQ(0, bind_map(prog, parr, 0));
	ASSERT_EQ(0, bind_map(prog, hash, 0));
	ASSERT_EQ(3, prog_map_ids(prog, ids, 8));
	EXPECT_EQ(map_id(self->map), ids[0]);
	EXPECT_EQ(map_id(hash), ids[1]);
	EXPECT_EQ(map_id(parr), ids[2]);
	/* a short map_ids buffer gets the first ones, the count is the total */
	memset(ids, 0, sizeof(ids));
	ASSERT_EQ(3, prog_map_ids(prog, ids, 1));
	EXPECT_EQ(map_id(self->map), ids[0]);
	EXPECT_EQ(0, ids[1]);
	close(prog);
	close(hash);
	close(parr);
}

/* The bound map outlives its fd, and goes with the program. */
TEST_F(bm, map_lives_as_long_as_the_program)
{
	int map = map_create(BPF_MAP_TYPE_ARRAY, 8), loose = map_create(BPF_MAP_TYPE_ARRAY, 8);
	unsigned int id = map_id(map), loose_id = map_id(loose);

	ASSERT_NE(0, id);
	ASSERT_EQ(0, bind_map(self->prog, map, 0));
	close(map);
	close(loose);
	/* the unbound map goes at once (deferred), the bound one stays */
	EXPECT_TRUE(map_gone(loose_id));
	usleep(200000);
	EXPECT_TRUE(map_alive(id));
	close(self->prog);
	self->prog = prog_load(-1);
	EXPECT_TRUE(map_gone(id));
}

/* Many binds of one map take no extra references: it still goes with the program. */
TEST_F(bm, rebinding_leaks_no_reference)
{
	int prog = prog_load(self->map), map = map_create(BPF_MAP_TYPE_ARRAY, 8), i;
	unsigned int id = map_id(map), used = map_id(self->map);

	ASSERT_LE(0, prog);
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(0, bind_map(prog, map, 0));
		ASSERT_EQ(0, bind_map(prog, self->map, 0));
	}
	close(map);
	close(self->map);
	self->map = map_create(BPF_MAP_TYPE_ARRAY, 8);
	EXPECT_TRUE(map_alive(id));
	EXPECT_TRUE(map_alive(used));
	close(prog);
	EXPECT_TRUE(map_gone(id));
	EXPECT_TRUE(map_gone(used));
}

/* flags must be 0; the attr must be zero past them. */
TEST_F(bm, bad_flags_and_attr_tail)
{
	unsigned char big[sizeof(union bpf_attr) + 16];
	union bpf_attr *a = (union bpf_attr *)big;
	unsigned int ids[4];

	EXPECT_EQ(-EINVAL, bind_map(self->prog, self->map, 1));
	EXPECT_EQ(-EINVAL, bind_map(self->prog, self->map, 0x80000000));
	memset(big, 0, sizeof(big));
	a->prog_bind_map.prog_fd = self->prog;
	a->prog_bind_map.map_fd = self->map;
	big[offsetof(union bpf_attr, prog_bind_map.flags) + 4] = 1;
	EXPECT_EQ(-1, sys_bpf(BPF_PROG_BIND_MAP, a, sizeof(*a)));
	EXPECT_EQ(EINVAL, errno);
	/* bytes beyond the kernel's union must be zero too (E2BIG) */
	memset(big, 0, sizeof(big));
	a->prog_bind_map.prog_fd = self->prog;
	a->prog_bind_map.map_fd = self->map;
	big[sizeof(big) - 1] = 1;
	EXPECT_EQ(-1, sys_bpf(BPF_PROG_BIND_MAP, a, sizeof(big)));
	EXPECT_EQ(E2BIG, errno);
	/* a short attr: the missing fields are zero, so this is a valid bind */
	memset(big, 0, sizeof(big));
	a->prog_bind_map.prog_fd = self->prog;
	a->prog_bind_map.map_fd = self->map;
	EXPECT_EQ(0, sys_bpf(BPF_PROG_BIND_MAP, a,
			     offsetof(union bpf_attr, prog_bind_map.flags)));
	EXPECT_EQ(1, prog_map_ids(self->prog, ids, 4));
	/* none of the failures bound anything */
}

/* Bad, closed and swapped fds, and which error comes first. */
TEST_F(bm, bad_fds)
{
	int null = open("/dev/null", O_RDONLY), closed = dup(self->prog);
	unsigned int ids[4];

	ASSERT_LE(0, null);
	close(closed);
	EXPECT_EQ(-EBADF, bind_map(-1, self->map, 0));
	EXPECT_EQ(-EBADF, bind_map(closed, self->map, 0));
	EXPECT_EQ(-EBADF, bind_map(self->prog, -1, 0));
	EXPECT_EQ(-EBADF, bind_map(self->prog, closed, 0));
	EXPECT_EQ(-EINVAL, bind_map(self->map, self->map, 0));	/* map as prog */
	EXPECT_EQ(-EINVAL, bind_map(self->prog, self->prog, 0));	/* prog as map */
	EXPECT_EQ(-EINVAL, bind_map(self->map, self->prog, 0));	/* swapped */
	EXPECT_EQ(-EINVAL, bind_map(null, self->map, 0));
	EXPECT_EQ(-EINVAL, bind_map(self->prog, null, 0));
	/* the prog fd is looked at first, flags before both */
	EXPECT_EQ(-EBADF, bind_map(-1, null, 0));
	EXPECT_EQ(-EINVAL, bind_map(null, -1, 0));
	EXPECT_EQ(-EINVAL, bind_map(-1, -1, 2));
	EXPECT_EQ(0, prog_map_ids(self->prog, ids, 4));
	close(null);
}

static int read_sysctl(void)
{
	char buf[16] = "";
	int fd = open("/proc/sys/kernel/unprivileged_bpf_disabled", O_RDONLY);

	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) <= 0)
		return -1;
	close(fd);
	return atoi(buf);
}

static int write_sysctl(int v)
{
	char buf[4];
	int fd = open("/proc/sys/kernel/unprivileged_bpf_disabled", O_WRONLY), n;

	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%d", v);
	n = write(fd, buf, n) == n ? 0 : -errno;
	close(fd);
	return n;
}

/*
 * As uid 1000: its own program and map, and a program and map root made
 * (inherited fds).  With @locked (kernel.unprivileged_bpf_disabled 2) it
 * cannot make its own (EPERM), but the sysctl only guards program loads and
 * map creation: the fds it was given still bind.  Returns 0 or a step number.
 */
static int unprivileged_binds(int root_prog, int root_map, bool locked)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		int prog, map;

		if (setresgid(1000, 1000, 1000) || setresuid(1000, 1000, 1000))
			_exit(10);
		prog = prog_load(-1);
		map = map_create(BPF_MAP_TYPE_ARRAY, 8);
		if (locked) {
			if (prog >= 0 || errno != EPERM || map >= 0)
				_exit(11);
			if (bind_map(root_prog, root_map, 0) ||
			    bind_map(root_prog, root_map, 4) != -EINVAL)
				_exit(12);
			_exit(0);
		}
		if (prog < 0 || map < 0)
			_exit(13);
		if (bind_map(prog, map, 0) || bind_map(root_prog, root_map, 0) ||
		    bind_map(root_prog, map, 0))
			_exit(14);
		if (bind_map(prog, map, 1) != -EINVAL)
			_exit(15);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

TEST_F(bm, unprivileged_callers)
{
	int old = read_sysctl();
	unsigned int ids[4];

	if (old == 1)
		SKIP(return, "kernel.unprivileged_bpf_disabled is 1 (cannot be lowered)");
	ASSERT_LE(0, old);
	ASSERT_EQ(0, write_sysctl(0));
	EXPECT_EQ(0, unprivileged_binds(self->prog, self->map, false));
	EXPECT_EQ(2, prog_map_ids(self->prog, ids, 4));
	ASSERT_EQ(0, write_sysctl(2));
	EXPECT_EQ(0, unprivileged_binds(self->prog, self->map, true));
	write_sysctl(old);
}

/*
 * The number of CPUs online, read once before any test starts its threads:
 * glibc's sysconf() reads it from a file in /sys, and an fd opened by a
 * racing thread takes the number of an fd the test has just closed (a bind
 * through "the closed fd" then reaches that file: EINVAL, not EBADF).
 */
static long online_cpus = 1;

static void __attribute__((constructor)) count_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n > 0)
		online_cpus = n;
}

/*
 * Keep the calling thread on one CPU of the guest's two: racing threads then
 * run at once (left to the scheduler, threads that run for a few ms mostly
 * stay on the CPU they were created on).  Opens no fd.
 */
static void run_on_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu % online_cpus, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* Two threads binding 50 maps each to one program: all 100 held, once. */
struct racer {
	int prog, cpu;
	int maps[50];
};

static void *bind_all(void *arg)
{
	struct racer *r = arg;
	long bad = 0;
	int i;

	run_on_cpu(r->cpu);
	for (i = 0; i < 50; i++)
		bad += bind_map(r->prog, r->maps[i], 0) != 0;
	for (i = 0; i < 50; i++)	/* and again: already held */
		bad += bind_map(r->prog, r->maps[i], 0) != 0;
	return (void *)bad;
}

TEST_F(bm, binds_race_on_two_cpus)
{
	static struct racer r[2];
	unsigned int ids[128], seen = 0;
	pthread_t th[2];
	void *bad;
	int i, j, k;

	for (i = 0; i < 2; i++) {
		r[i].prog = self->prog;
		r[i].cpu = i;
		for (j = 0; j < 50; j++) {
			ASSERT_LE(0, r[i].maps[j] = map_create(BPF_MAP_TYPE_ARRAY, 8));
		}
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, pthread_create(&th[i], NULL, bind_all, &r[i]));
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, pthread_join(th[i], &bad));
		EXPECT_EQ(0, (long)bad);
	}
	ASSERT_EQ(100, prog_map_ids(self->prog, ids, 128));
	for (i = 0; i < 2; i++)
		for (j = 0; j < 50; j++)
			for (k = 0; k < 100; k++)
				if (ids[k] == map_id(r[i].maps[j])) {
					seen++;
					break;
				}
	EXPECT_EQ(100, seen);
	for (i = 0; i < 2; i++)
		for (j = 0; j < 50; j++)
			close(r[i].maps[j]);
}

/*
 * Binds racing with the readers of the program's used maps.  In 6.1 these
 * read prog->aux->used_maps under used_maps_mutex: BPF_OBJ_GET_INFO_BY_FD
 * (nr_map_ids and the ids; the xlated dump, which turns a map's address in
 * an instruction back into its id), the tail-call check of a program being
 * loaded (bpf_check_tail_call()) and the program's free
 * (__bpf_free_used_maps()).  A bind replaces the array by a longer one.
 */

/* -errno, or a new fd of the program with this id */
static int prog_fd_by_id(unsigned int id)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_id = id;
	fd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

static unsigned int prog_id(int prog_fd)
{
	struct bpf_prog_info info;

	return prog_info_ids(prog_fd, &info, NULL, 0) ? 0 : info.id;
}

/*
 * The first instruction of the program's xlated dump, in which 6.1 writes
 * the id of the map whose address the instruction loads (bpf_map_from_imm(),
 * a reader of used_maps); -errno, or -ENODATA when there was no dump.
 */
static int xlated_first(int prog_fd, struct bpf_insn *insn)
{
	struct bpf_insn insns[16];
	struct bpf_prog_info info;
	union bpf_attr a;

	memset(&info, 0, sizeof(info));
	info.xlated_prog_len = sizeof(insns);
	info.xlated_prog_insns = (unsigned long)insns;
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = prog_fd;
	a.info.info_len = sizeof(info);
	a.info.info = (unsigned long)&info;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)))
		return -errno;
	if (info.xlated_prog_len < sizeof(*insn) || info.xlated_prog_len > sizeof(insns))
		return -ENODATA;
	*insn = insns[0];
	return 0;
}

static long prog_array_set(int map_fd, unsigned int key, int prog_fd)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = map_fd;
	a.key = (unsigned long)&key;
	a.value = (unsigned long)&prog_fd;
	return sys_bpf(BPF_MAP_UPDATE_ELEM, &a, sizeof(a)) ? -errno : 0;
}

static long prog_array_clear(int map_fd, unsigned int key)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = map_fd;
	a.key = (unsigned long)&key;
	return sys_bpf(BPF_MAP_DELETE_ELEM, &a, sizeof(a)) ? -errno : 0;
}

/* BPF_PROG_TEST_RUN of a socket filter on a zeroed packet: its r0, or -errno. */
static long run_filter(int prog_fd)
{
	unsigned char pkt[64] = { 0 };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = prog_fd;
	a.test.data_in = (unsigned long)pkt;
	a.test.data_size_in = sizeof(pkt);
	a.test.repeat = 1;
	return sys_bpf(BPF_PROG_TEST_RUN, &a, sizeof(a)) ? -errno : a.test.retval;
}

/* Wait up to 10 s for every map of @ids to go. */
static bool maps_gone(const unsigned int *ids, int n)
{
	int i, tries = 0;

	for (i = 0; i < n; i++) {
		while (map_alive(ids[i])) {
			if (++tries > 1000)
				return false;
			usleep(10000);
		}
	}
	return true;
}

/* Keep the first failure of a thread, in its own buffer. */
static void note(char *buf, const char *fmt, ...)
{
	va_list ap;

	if (buf[0])
		return;
	va_start(ap, fmt);
	vsnprintf(buf, 160, fmt, ap);
	va_end(ap);
}

static int cmp_uint(const void *a, const void *b)
{
	unsigned int x = *(const unsigned int *)a, y = *(const unsigned int *)b;

	return x < y ? -1 : x > y;
}

#define RACE_ROUNDS	4
#define RACE_OWN	48	/* maps one binder alone binds, per round */
#define RACE_SHARED	16	/* maps both bind, in opposite orders */
#define RACE_MAX	(1 + 2 * RACE_OWN + RACE_SHARED)

struct race {
	int prog;
	unsigned int own;			/* the map the instructions use */
	int maps[2][RACE_OWN];
	int shared[RACE_SHARED];
	int shared_left[RACE_SHARED];		/* binders yet to bind it */
	unsigned int ids[RACE_MAX];		/* every id map_ids may hold, sorted */
	pthread_barrier_t start;		/* the three threads */
	int binders_done;
	long reads, partial, dumps;		/* partial: 1 < nr_map_ids < 113 */
	char err[3][160];			/* binder 0, binder 1, reader */
};

struct race_binder {
	struct race *r;
	int n;
};

/*
 * Bind this binder's maps, closing each fd once bound (the program's
 * reference alone keeps the map), and every third step a shared map.
 */
static void *race_bind(void *arg)
{
	struct race_binder *b = arg;
	struct race *r = b->r;
	char *err = r->err[b->n];
	long e;
	int j, s;

	run_on_cpu(b->n);
	pthread_barrier_wait(&r->start);
	for (j = 0; j < RACE_OWN; j++) {
		e = bind_map(r->prog, r->maps[b->n][j], 0);
		if (e)
			note(err, "bind of own map %d: %s", j, strerror(-e));
		close(r->maps[b->n][j]);
		/* let the reader in between (three threads on two CPUs) */
		sched_yield();
		if (j % (RACE_OWN / RACE_SHARED))
			continue;
		s = j / (RACE_OWN / RACE_SHARED);
		if (b->n)
			s = RACE_SHARED - 1 - s;
		e = bind_map(r->prog, r->shared[s], 0);
		if (e)
			note(err, "bind of shared map %d: %s", s, strerror(-e));
		if (!__atomic_sub_fetch(&r->shared_left[s], 1, __ATOMIC_ACQ_REL))
			close(r->shared[s]);
	}
	__atomic_add_fetch(&r->binders_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* One map_ids read against the one before: 0, or a failure noted. */
static int race_check(struct race *r, const unsigned int *ids, int n,
		      const unsigned int *prev_ids, int prev)
{
	bool seen[RACE_MAX] = { false };
	char *err = r->err[2];
	unsigned int *at;
	int k;

	if (n < 0) {
		note(err, "map_ids: %s", strerror(-n));
		return -1;
	}
	if (n < prev || n > RACE_MAX || !n) {
		note(err, "nr_map_ids went from %d to %d (%d maps in all)", prev, n, RACE_MAX);
		return -1;
	}
	if (ids[0] != r->own) {
		note(err, "map_ids[0] is %u, not the program's own map %u", ids[0], r->own);
		return -1;
	}
	for (k = 0; k < n; k++) {
		at = bsearch(&ids[k], r->ids, RACE_MAX, sizeof(*at), cmp_uint);
		if (!at) {
			note(err, "map_ids[%d] of %d is %u: no map bound", k, n, ids[k]);
			return -1;
		}
		if (seen[at - r->ids]) {
			note(err, "map %u listed twice in %d ids", ids[k], n);
			return -1;
		}
		seen[at - r->ids] = true;
		if (k < prev && ids[k] != prev_ids[k]) {
			note(err, "map_ids[%d] was %u, now %u", k, prev_ids[k], ids[k]);
			return -1;
		}
		if (k >= prev && !map_alive(ids[k])) {
			note(err, "map %u listed, but freed", ids[k]);
			return -1;
		}
	}
	return 0;
}

/* Read map_ids (and now and then the xlated dump) until the binders are done. */
static void *race_read(void *arg)
{
	unsigned int ids[RACE_MAX + 8], prev_ids[RACE_MAX + 8];
	struct race *r = arg;
	struct bpf_insn insn = { 0 };
	int n, prev = 0, done, e;

	pthread_barrier_wait(&r->start);
	do {
		done = __atomic_load_n(&r->binders_done, __ATOMIC_ACQUIRE);
		n = prog_map_ids(r->prog, ids, RACE_MAX + 8);
		if (race_check(r, ids, n, prev_ids, prev))
			break;
		memcpy(prev_ids, ids, n * sizeof(ids[0]));
		prev = n;
		r->reads++;
		r->partial += n > 1 && n < RACE_MAX;
		if (r->reads % 4)
			continue;
		e = xlated_first(r->prog, &insn);
		if (e == -ENODATA)
			continue;
		if (e || insn.imm != (int)r->own || insn.src_reg != BPF_PSEUDO_MAP_FD) {
			note(r->err[2], "xlated ld_imm64: %s, imm %d src %d (map %u)",
			     strerror(-e), insn.imm, insn.src_reg, r->own);
			break;
		}
		r->dumps++;
	} while (done < 2);
	return NULL;
}

/*
 * Two threads bind 64 maps each (16 of them shared: both bind those, in
 * opposite orders) to a program whose instructions use a map, closing each
 * map's fd once bound, while a third reads map_ids in a loop.  Every read is
 * a consistent prefix of the final list: nr_map_ids never goes down, the
 * program's own map comes first, the ids read before are where they were,
 * each id is one of the maps bound, none twice, and each is alive; at the
 * end all 113 are listed, and they all go with the program.
 *
 * Fails if: the bind replaces the array outside used_maps_mutex (or under a
 * lock of its own), so that a reader copies ids out of the array krealloc()
 * has just freed or sees the count ahead of the slots (an id of no map, or
 * 0); the bind looks for the map before taking the mutex, or drops it between
 * the look and the append (a shared map appended by both binders: listed
 * twice, 114 ids); the bind inserts rather than appends (the array kept
 * sorted for a binary search: ids read before move); it appends and takes
 * the map out again when it finds it already held (nr_map_ids goes down);
 * the program does not keep the reference the bind took (a listed map freed
 * when its fd is closed); a bind lost between the two binders (a map never
 * freed).
 */
TEST_F(bm, map_ids_read_while_binding)
{
	static struct race r;
	struct race_binder b[2] = { { &r, 0 }, { &r, 1 } };
	unsigned int all[RACE_ROUNDS * RACE_MAX], ids[RACE_MAX + 8];
	long reads = 0, partial = 0, dumps = 0;
	pthread_t th[3];
	int round, i, j, n = 0;

	for (round = 0; round < RACE_ROUNDS; round++) {
		memset(&r, 0, sizeof(r));
		i = map_create(BPF_MAP_TYPE_ARRAY, 8);
		ASSERT_LE(0, i);
		r.prog = prog_load(i);
		ASSERT_LE(0, r.prog) TH_LOG("prog load: %s", strerror(errno));
		r.own = map_id(i);
		r.ids[0] = r.own;
		close(i);
		for (i = 0; i < 2; i++)
			for (j = 0; j < RACE_OWN; j++) {
				r.maps[i][j] = map_create(BPF_MAP_TYPE_ARRAY, 8);
				ASSERT_LE(0, r.maps[i][j]);
				r.ids[1 + i * RACE_OWN + j] = map_id(r.maps[i][j]);
			}
		for (j = 0; j < RACE_SHARED; j++) {
			r.shared[j] = map_create(BPF_MAP_TYPE_HASH, 8);
			ASSERT_LE(0, r.shared[j]);
			r.shared_left[j] = 2;
			r.ids[1 + 2 * RACE_OWN + j] = map_id(r.shared[j]);
		}
		memcpy(all + n, r.ids, sizeof(r.ids));
		n += RACE_MAX;
		qsort(r.ids, RACE_MAX, sizeof(r.ids[0]), cmp_uint);
		ASSERT_EQ(0, pthread_barrier_init(&r.start, NULL, 3));
		ASSERT_EQ(0, pthread_create(&th[2], NULL, race_read, &r));
		for (i = 0; i < 2; i++) {
			ASSERT_EQ(0, pthread_create(&th[i], NULL, race_bind, &b[i]));
		}
		for (i = 0; i < 3; i++) {
			ASSERT_EQ(0, pthread_join(th[i], NULL));
		}
		for (i = 0; i < 3; i++) {
			EXPECT_EQ('\0', r.err[i][0]) TH_LOG("round %d, %s: %s", round,
							    i < 2 ? "binder" : "reader",
							    r.err[i]);
		}
		EXPECT_EQ(RACE_MAX, prog_map_ids(r.prog, ids, RACE_MAX + 8));
		pthread_barrier_destroy(&r.start);
		reads += r.reads;
		partial += r.partial;
		dumps += r.dumps;
		close(r.prog);
	}
	/* the program's free puts every map once: none leaked, none freed twice */
	EXPECT_TRUE(maps_gone(all, n));
	TH_LOG("%ld map_ids reads (%ld of a partial list), %ld xlated dumps",
	       reads, partial, dumps);
}

#define CLOSE_ROUNDS	16
#define CLOSE_MAPS	24

struct closing {
	int prog;			/* the program's one fd, until it is closed */
	unsigned int prog_id;
	int maps[2][CLOSE_MAPS];
	unsigned int ids[2][CLOSE_MAPS];
	int tried, tried_id;		/* binds binder 0, binder 1 have made */
	int ebadf, enoent, bound;
	char err[2][160];
};

/*
 * Binder 0: through the fd the main thread closes: EBADF from then on, or a
 * bind to the same program when binder 1's fd from the id took the number.
 * No other fd is opened while the threads run (see online_cpus).
 */
static void *closing_bind_fd(void *arg)
{
	struct closing *c = arg;
	long e;
	int j;

	run_on_cpu(0);
	for (j = 0; j < CLOSE_MAPS; j++) {
		e = bind_map(c->prog, c->maps[0][j], 0);
		__atomic_add_fetch(&c->tried, 1, __ATOMIC_RELEASE);
		if (e == -EBADF)
			c->ebadf++;
		else if (e)
			note(c->err[0], "bind %d: %s", j, strerror(-e));
	}
	return NULL;
}

/*
 * Binder 1: through a new fd from the program's id each time; the bind must
 * succeed and show at once in map_ids, until the id is gone (ENOENT).
 */
static void *closing_bind_id(void *arg)
{
	unsigned int ids[2 * CLOSE_MAPS + 8];
	struct closing *c = arg;
	int j, k, fd, n;
	long e;

	run_on_cpu(1);
	for (j = 0; j < CLOSE_MAPS; j++) {
		fd = prog_fd_by_id(c->prog_id);
		if (fd == -ENOENT) {
			c->enoent++;
			break;
		}
		if (fd < 0) {
			note(c->err[1], "fd of prog %u: %s", c->prog_id, strerror(-fd));
			break;
		}
		e = bind_map(fd, c->maps[1][j], 0);
		n = prog_map_ids(fd, ids, 2 * CLOSE_MAPS + 8);
		close(fd);
		__atomic_add_fetch(&c->tried_id, 1, __ATOMIC_RELEASE);
		if (e) {
			note(c->err[1], "bind %d: %s", j, strerror(-e));
			continue;
		}
		c->bound++;
		for (k = 0; k < n && k < 2 * CLOSE_MAPS + 8; k++)
			if (ids[k] == c->ids[1][j])
				break;
		if (n < 0 || k == n || k == 2 * CLOSE_MAPS + 8)
			note(c->err[1], "map %u bound but not in the %d map_ids", c->ids[1][j], n);
	}
	return NULL;
}

/*
 * The program's last fd is closed while two threads bind maps to it, one
 * through that fd and one through fds it gets from the program's id: the
 * only errors are EBADF (the closed fd) and ENOENT (the id of a program that
 * is gone), as on 6.1; after the close the program goes once the binds are
 * over, and with it every map it held (their fds closed too).
 *
 * Fails if: the bind does not hold the program for the whole call (it looks
 * the fd up with fdget() and file->private_data, or puts the program before
 * the map is added): the close frees the program while the bind grows its
 * array, so the map goes into freed memory and is never put (its id never
 * goes), or the array is freed twice (a kernel report); the program's free
 * puts only the maps its instructions use (bound maps kept in a list of
 * their own that bpf_prog_free() forgets): the bound maps never go; a bind
 * on a live program fails, or its map is not in map_ids at once.
 */
TEST_F(bm, last_fd_closed_while_binding)
{
	unsigned int all[CLOSE_ROUNDS * (2 * CLOSE_MAPS + 1)];
	int round, i, j, n = 0, spins, ebadf = 0, enoent = 0, bound = 0;
	static struct closing c;
	pthread_t th[2];

	for (round = 0; round < CLOSE_ROUNDS; round++) {
		memset(&c, 0, sizeof(c));
		i = map_create(BPF_MAP_TYPE_ARRAY, 8);
		ASSERT_LE(0, i);
		c.prog = prog_load(i);
		ASSERT_LE(0, c.prog);
		all[n++] = map_id(i);
		close(i);
		c.prog_id = prog_id(c.prog);
		ASSERT_NE(0, c.prog_id);
		for (i = 0; i < 2; i++)
			for (j = 0; j < CLOSE_MAPS; j++) {
				c.maps[i][j] = map_create(BPF_MAP_TYPE_ARRAY, 8);
				ASSERT_LE(0, c.maps[i][j]);
				c.ids[i][j] = map_id(c.maps[i][j]);
				all[n++] = c.ids[i][j];
			}
		ASSERT_EQ(0, pthread_create(&th[0], NULL, closing_bind_fd, &c));
		ASSERT_EQ(0, pthread_create(&th[1], NULL, closing_bind_id, &c));
		/* close after 0 to 15 binds of binder 0 and 0 to 3 of binder 1 */
		for (spins = 0; spins < 100000; spins++) {
			if (__atomic_load_n(&c.tried, __ATOMIC_ACQUIRE) >= round &&
			    __atomic_load_n(&c.tried_id, __ATOMIC_ACQUIRE) >= round / 4)
				break;
			sched_yield();
		}
		close(c.prog);
		for (i = 0; i < 2; i++) {
			ASSERT_EQ(0, pthread_join(th[i], NULL));
		}
		for (i = 0; i < 2; i++) {
			EXPECT_EQ('\0', c.err[i][0]) TH_LOG("round %d, binder %d: %s",
							    round, i, c.err[i]);
		}
		/* nothing holds the program now: its id is gone */
		EXPECT_EQ(-ENOENT, prog_fd_by_id(c.prog_id));
		for (i = 0; i < 2; i++)
			for (j = 0; j < CLOSE_MAPS; j++)
				close(c.maps[i][j]);
		ebadf += c.ebadf;
		enoent += c.enoent;
		bound += c.bound;
	}
	EXPECT_TRUE(maps_gone(all, n));
	TH_LOG("binds through the closed fd: %d EBADF; through the id: %d bound, %d ENOENT",
	       ebadf, bound, enoent);
}

#define TC_ARRAYS	16

struct tail_race {
	int p, prog_array, xdp;
	int unowned[TC_ARRAYS], xdp_owned[TC_ARRAYS];
	int passes, checked;			/* binder's passes, checker done */
	long runs, loads;
	char err[2][160];
};

/*
 * A socket filter that tail-calls slot 0 of @prog_array (and returns 1 when
 * the slot is empty).
 */
static int tail_caller(int prog_array)
{
	struct bpf_insn p[] = {
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 2,
		  .src_reg = BPF_PSEUDO_MAP_FD, .imm = prog_array },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 3, .imm = 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_tail_call },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return load_insns(BPF_PROG_TYPE_SOCKET_FILTER, p, 6);
}

/* r0 = @ret; exit */
static int ret_prog(enum bpf_prog_type type, int ret)
{
	struct bpf_insn p[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = ret },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return load_insns(type, p, 2);
}

/*
 * Bind every prog array to the tail-calling program, its own one again too;
 * then again (all held already) until the checker is done.
 */
static void *tail_bind(void *arg)
{
	struct tail_race *t = arg;
	long e;
	int k;

	run_on_cpu(0);
	do {
		for (k = 0; k < TC_ARRAYS; k++) {
			e = bind_map(t->p, t->unowned[k], 0);
			if (e)
				note(t->err[0], "bind of unowned prog array %d: %s", k,
				     strerror(-e));
			e = bind_map(t->p, t->xdp_owned[k], 0);
			if (e)
				note(t->err[0], "bind of XDP's prog array %d: %s", k,
				     strerror(-e));
			e = bind_map(t->p, t->prog_array, 0);
			if (e)
				note(t->err[0], "bind of its own prog array: %s", strerror(-e));
		}
		__atomic_add_fetch(&t->passes, 1, __ATOMIC_RELEASE);
	} while (!__atomic_load_n(&t->checked, __ATOMIC_ACQUIRE));
	return NULL;
}

/*
 * The owner checks, while the binds run: the XDP program into the unowned
 * arrays, the tail-calling program into its own array and out again, a new
 * program tail-calling through that array loaded (the load-time check of its
 * used maps), and the tail call run.
 */
static void *tail_check(void *arg)
{
	struct tail_race *t = arg;
	char *err = t->err[1];
	int k = 0, fd;
	long e;

	run_on_cpu(1);
	do {
		if (k < TC_ARRAYS) {
			e = prog_array_set(t->unowned[k], 0, t->xdp);
			if (e)
				note(err, "XDP program into unowned array %d: %s", k, strerror(-e));
			k++;
		}
		e = prog_array_set(t->prog_array, 1, t->p);
		if (e)
			note(err, "program into its own prog array: %s", strerror(-e));
		e = prog_array_clear(t->prog_array, 1);
		if (e)
			note(err, "clearing it: %s", strerror(-e));
		fd = tail_caller(t->prog_array);
		if (fd < 0)
			note(err, "load of a tail caller: %s", strerror(errno));
		else
			close(fd);
		t->loads++;
		e = run_filter(t->p);
		if (e != 2)
			note(err, "tail call returned %ld, not 2", e);
		t->runs++;
	} while (k < TC_ARRAYS || !__atomic_load_n(&t->passes, __ATOMIC_ACQUIRE));
	__atomic_store_n(&t->checked, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The tail-call owner checks run while a socket filter that tail-calls
 * through a prog array of its own is bound 16 prog arrays that nothing owns
 * yet and 16 that an XDP program owns: in 6.1 a bind checks no owner and sets
 * none (only a prog array update and the load of a program that uses the
 * array do), so every bind succeeds, the XDP program goes into the unowned
 * arrays, the program goes into its own array and is loaded against it, and
 * the tail call keeps working; afterwards the program cannot go into the
 * arrays XDP owns (EINVAL), the check still applies to bound arrays.
 *
 * Fails if: the bind runs the load-time tail-call check on what it binds
 * (bpf_check_tail_call() or bpf_prog_map_compatible() on a prog array):
 * binding an array the XDP program owns fails with EINVAL, and binding an
 * unowned one makes the socket filter its owner, so that the XDP program can
 * no longer go in (EINVAL), whichever of the two threads comes first; the
 * bind loses or replaces the program's own prog array among its used maps
 * (the array put early: the tail call fails, or a kernel report).
 */
TEST_F(bm, tail_call_checks_while_binding)
{
	static struct tail_race t;
	unsigned int ids[2 * TC_ARRAYS + 8];
	pthread_t th[2];
	int q, k, i;

	memset(&t, 0, sizeof(t));
	t.prog_array = map_create_n(BPF_MAP_TYPE_PROG_ARRAY, 4, 4);
	ASSERT_LE(0, t.prog_array);
	q = ret_prog(BPF_PROG_TYPE_SOCKET_FILTER, 2);
	ASSERT_LE(0, q) TH_LOG("socket filter load: %s", strerror(errno));
	t.xdp = ret_prog(BPF_PROG_TYPE_XDP, 2);
	ASSERT_LE(0, t.xdp) TH_LOG("XDP load: %s", strerror(errno));
	t.p = tail_caller(t.prog_array);
	ASSERT_LE(0, t.p) TH_LOG("tail caller load: %s", strerror(errno));
	ASSERT_EQ(0, prog_array_set(t.prog_array, 0, q));
	ASSERT_EQ(2, run_filter(t.p));
	for (k = 0; k < TC_ARRAYS; k++) {
		t.unowned[k] = map_create_n(BPF_MAP_TYPE_PROG_ARRAY, 4, 4);
		ASSERT_LE(0, t.unowned[k]);
		t.xdp_owned[k] = map_create_n(BPF_MAP_TYPE_PROG_ARRAY, 4, 4);
		ASSERT_LE(0, t.xdp_owned[k]);
		ASSERT_EQ(0, prog_array_set(t.xdp_owned[k], 0, t.xdp));
	}
	ASSERT_EQ(0, pthread_create(&th[1], NULL, tail_check, &t));
	ASSERT_EQ(0, pthread_create(&th[0], NULL, tail_bind, &t));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, pthread_join(th[i], NULL));
	}
	EXPECT_EQ('\0', t.err[0][0]) TH_LOG("binder: %s", t.err[0]);
	EXPECT_EQ('\0', t.err[1][0]) TH_LOG("checker: %s", t.err[1]);
	ASSERT_EQ(1 + 2 * TC_ARRAYS, prog_map_ids(t.p, ids, 2 * TC_ARRAYS + 8));
	EXPECT_EQ(map_id(t.prog_array), ids[0]);
	for (k = 0; k < TC_ARRAYS; k++) {
		EXPECT_EQ(-EINVAL, prog_array_set(t.xdp_owned[k], 1, t.p));
		EXPECT_EQ(-EINVAL, prog_array_set(t.unowned[k], 1, t.p));
		EXPECT_EQ(0, prog_array_set(t.unowned[k], 1, t.xdp));
	}
	EXPECT_EQ(2, run_filter(t.p));
	TH_LOG("%ld tail calls run, %ld tail callers loaded, %d passes of binds",
	       t.runs, t.loads, t.passes);
	for (k = 0; k < TC_ARRAYS; k++) {
		close(t.unowned[k]);
		close(t.xdp_owned[k]);
	}
	close(t.p);
	close(t.xdp);
	close(q);
	close(t.prog_array);
}

TEST_HARNESS_MAIN

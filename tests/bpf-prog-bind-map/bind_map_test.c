// SPDX-License-Identifier: GPL-2.0
/*
 * BPF_PROG_BIND_MAP (patches/bpf-prog-bind-map), through raw bpf(2) calls:
 * a bound map is listed in the program's map_ids and lives as long as the
 * program; binding twice, or binding a map the instructions use, holds it
 * once (no leaked reference: the map is still freed with the program); the
 * errors of bad flags, bad attr tails and bad or swapped fds; unprivileged
 * callers under kernel.unprivileged_bpf_disabled 0 and 2 (which only stops them
 * making programs and maps); binds racing on two CPUs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <pthread.h>
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

static int map_create(enum bpf_map_type type, unsigned int value_size)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = 4;
	a.value_size = value_size;
	a.max_entries = 1;
	return sys_bpf(BPF_MAP_CREATE, &a, sizeof(a));
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
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (unsigned long)(map_fd >= 0 ? with_map : with_map + 2);
	a.insn_cnt = map_fd >= 0 ? 4 : 2;
	a.license = (unsigned long)"GPL";
	return sys_bpf(BPF_PROG_LOAD, &a, sizeof(a));
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
	union bpf_attr a;

	memset(&info, 0, sizeof(info));
	info.nr_map_ids = max;
	info.map_ids = (unsigned long)ids;
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = prog_fd;
	a.info.info_len = sizeof(info);
	a.info.info = (unsigned long)&info;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)))
		return -errno;
	return info.nr_map_ids;
}

/* Is a map with this id still there?  (needs CAP_SYS_ADMIN) */
static bool map_alive(unsigned int id)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.map_id = id;
	fd = sys_bpf(BPF_MAP_GET_FD_BY_ID, &a, sizeof(a));
	if (fd < 0)
		return false;
	close(fd);
	return true;
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
			if (bind_map(root_prog, root_map, 0) || bind_map(root_prog, root_map, 4) != -EINVAL)
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

/* Two threads binding 50 maps each to one program: all 100 held, once. */
struct racer {
	int prog;
	int maps[50];
};

static void *bind_all(void *arg)
{
	struct racer *r = arg;
	long bad = 0;
	int i;

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
		for (j = 0; j < 50; j++)
			ASSERT_LE(0, r[i].maps[j] = map_create(BPF_MAP_TYPE_ARRAY, 8));
	}
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, bind_all, &r[i]));
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

TEST_HARNESS_MAIN

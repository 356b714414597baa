// SPDX-License-Identifier: GPL-2.0
/*
 * BPF_PROG_BIND_MAP at work, through raw bpf(2) calls: a map bound to a
 * program that does not use it shows up in the program's map_ids and lives
 * as long as the program, not as long as its own fd.  Every value printed
 * is read back from the kernel; any other behaviour than that prints
 * "UNEXPECTED: ..." and exits 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bm_util.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

static void unexpected(const char *what)
{
	printf("UNEXPECTED: %s\n", what);
	exit(1);
}

static void unexpected_errno(const char *what)
{
	printf("UNEXPECTED: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The program's id and map ids (up to @max in @ids); returns their count. */
static unsigned int prog_info(int prog_fd, unsigned int *ids, unsigned int max,
			      unsigned int *prog_id)
{
	struct bpf_prog_info info;

	errno = -prog_info_ids(prog_fd, &info, ids, max);
	if (errno)
		unexpected_errno("BPF_OBJ_GET_INFO_BY_FD of the program");
	*prog_id = info.id;
	return info.nr_map_ids;
}

static void print_map_ids(unsigned int prog_id, const unsigned int *ids, unsigned int n)
{
	unsigned int i;

	printf("  program %u map_ids:", prog_id);
	if (!n)
		printf(" (none)");
	for (i = 0; i < n && i < 8; i++)
		printf(" %u", ids[i]);
	printf("\n");
}

/* An fd of the map or program with this id, or -errno. */
static int fd_by_id(int cmd, unsigned int id)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	if (cmd == BPF_MAP_GET_FD_BY_ID)
		a.map_id = id;
	else
		a.prog_id = id;
	fd = sys_bpf(cmd, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

/* Wait up to 5 s for the object to go (the last put frees it deferred). */
static void expect_gone(int cmd, unsigned int id, const char *what)
{
	char s[128];
	int i, fd;

	for (i = 0; i < 500; i++) {
		fd = fd_by_id(cmd, id);
		if (fd == -ENOENT)
			return;
		if (fd < 0) {
			errno = -fd;
			snprintf(s, sizeof(s), "looking %s up by id %u", what, id);
			unexpected_errno(s);
		}
		close(fd);
		usleep(10000);
	}
	snprintf(s, sizeof(s), "%s (id %u) still there 5 s after its last fd was closed",
		 what, id);
	unexpected(s);
}

int main(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	unsigned int ids[8], n, mid, pid, pid2;
	union bpf_attr a;
	int map, prog, fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 1;
	map = sys_bpf(BPF_MAP_CREATE, &a, sizeof(a));
	if (map < 0)
		unexpected_errno("BPF_MAP_CREATE");
	mid = map_id(map);
	if (!mid)
		unexpected("no id for the map");
	printf("created an array map: id %u\n", mid);

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (unsigned long)insns;
	a.insn_cnt = ARRAY_SIZE(insns);
	a.license = (unsigned long)"GPL";
	prog = sys_bpf(BPF_PROG_LOAD, &a, sizeof(a));
	if (prog < 0)
		unexpected_errno("BPF_PROG_LOAD");
	n = prog_info(prog, ids, 8, &pid);
	printf("loaded a socket filter that uses no map (r0 = 0; exit): id %u\n", pid);
	print_map_ids(pid, ids, n);
	if (n)
		unexpected("map_ids not empty before the bind");

	memset(&a, 0, sizeof(a));
	a.prog_bind_map.prog_fd = prog;
	a.prog_bind_map.map_fd = map;
	if (sys_bpf(BPF_PROG_BIND_MAP, &a, sizeof(a)))
		unexpected_errno("BPF_PROG_BIND_MAP");
	printf("BPF_PROG_BIND_MAP(program %u, map %u): 0\n", pid, mid);
	n = prog_info(prog, ids, 8, &pid2);
	print_map_ids(pid2, ids, n);
	if (pid2 != pid)
		unexpected("the program's id changed");
	if (n != 1 || ids[0] != mid)
		unexpected("the bound map is not the program's one map id");

	close(map);
	fd = fd_by_id(BPF_MAP_GET_FD_BY_ID, mid);
	if (fd < 0) {
		errno = -fd;
		unexpected_errno("BPF_MAP_GET_FD_BY_ID after the map's fd was closed");
	}
	if (map_id(fd) != mid)
		unexpected("BPF_MAP_GET_FD_BY_ID gave another map");
	close(fd);
	printf("closed the map's fd: BPF_MAP_GET_FD_BY_ID(%u) still works, program %u holds it\n",
	       mid, pid);

	close(prog);
	expect_gone(BPF_PROG_GET_FD_BY_ID, pid, "the program");
	printf("closed the program's fd: program %u gone (BPF_PROG_GET_FD_BY_ID: ENOENT)\n", pid);
	expect_gone(BPF_MAP_GET_FD_BY_ID, mid, "the map its program held");
	printf("  and map %u with it: BPF_MAP_GET_FD_BY_ID(%u): ENOENT\n", mid, mid);
	return 0;
}

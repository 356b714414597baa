// SPDX-License-Identifier: GPL-2.0
/*
 * Cost of BPF_PROG_BIND_MAP (patches/bpf-prog-bind-map): binding a map the
 * program does not hold yet (the used-maps array grows), binding one it holds
 * (a search that finds it), with 1 and 64 maps held, and the program info
 * query that lists them.  64 maps are made once; a "grow" repetition loads a
 * fresh program and binds all 64 to it.
 *
 * Output is KTAP, one result per case, each preceded by the line the report
 * parses:  # BENCH <case> <median ns per call> ns min=<ns> max=<ns> reps=<n>
 *
 * Usage: bind_map_bench [CASE-GLOB]   (the glob also comes from $KTEST_CASE)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include "../bench_util.h"

#define NMAPS	64
#define REPS	11

static int maps[NMAPS];

static long sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(__NR_bpf, cmd, a, sizeof(*a));
}

static int prog_load(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (unsigned long)insns;
	a.insn_cnt = 2;
	a.license = (unsigned long)"GPL";
	return sys_bpf(BPF_PROG_LOAD, &a);
}

static int bind_map(int prog, int map)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_bind_map.prog_fd = prog;
	a.prog_bind_map.map_fd = map;
	return sys_bpf(BPF_PROG_BIND_MAP, &a) ? errno : 0;
}

static int query(int prog)
{
	unsigned int ids[NMAPS];
	struct bpf_prog_info info;
	union bpf_attr a;

	memset(&info, 0, sizeof(info));
	info.nr_map_ids = NMAPS;
	info.map_ids = (unsigned long)ids;
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = prog;
	a.info.info_len = sizeof(info);
	a.info.info = (unsigned long)&info;
	return sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) ? errno : 0;
}

enum kind { GROW_64, REBIND_1, REBIND_LAST_OF_64, QUERY_64 };

struct bench_case {
	const char *name;
	enum kind kind;
	int ops;	/* calls per repetition */
};

static const struct bench_case cases[] = {
	{ "bind-64-new-maps", GROW_64, NMAPS },
	{ "rebind-held-map-of-1", REBIND_1, 2000 },
	{ "rebind-last-map-of-64", REBIND_LAST_OF_64, 2000 },
	{ "prog-info-64-map-ids", QUERY_64, 2000 },
};

static int run_case(const struct bench_case *c)
{
	unsigned long long t[REPS], start, spent;
	int r, i, err = 0, prog = -1;

	if (c->kind != GROW_64) {
		prog = prog_load();
		for (i = 0; prog >= 0 && i < (c->kind == REBIND_1 ? 1 : NMAPS); i++)
			err |= bind_map(prog, maps[i]);
		if (prog < 0 || err)
			return -1;
	}
	for (r = -1; r < REPS; r++) {
		spent = 0;
		if (c->kind == GROW_64) {
			prog = prog_load();
			if (prog < 0)
				return -1;
		}
		start = bench_now_ns();
		for (i = 0; i < c->ops && !err; i++) {
			switch (c->kind) {
			case GROW_64:
				err = bind_map(prog, maps[i]);
				break;
			case REBIND_1:
				err = bind_map(prog, maps[0]);
				break;
			case REBIND_LAST_OF_64:
				err = bind_map(prog, maps[NMAPS - 1]);
				break;
			case QUERY_64:
				err = query(prog);
				break;
			}
		}
		spent = bench_now_ns() - start;
		if (err) {
			printf("# %s: errno %d\n", c->name, err);
			return -1;
		}
		if (c->kind == GROW_64)
			close(prog);
		if (r >= 0)
			t[r] = spent;
	}
	if (c->kind != GROW_64)
		close(prog);
	bench_report(c->name, t, REPS, c->ops);
	return 0;
}

static const char *case_name(int i)
{
	return cases[i].name;
}

static int case_run(int i)
{
	return run_case(&cases[i]);
}

int main(int argc, char **argv)
{
	union bpf_attr a;
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("KTAP version 1\n");
	for (i = 0; i < NMAPS; i++) {
		memset(&a, 0, sizeof(a));
		a.map_type = BPF_MAP_TYPE_ARRAY;
		a.key_size = 4;
		a.value_size = 8;
		a.max_entries = 1;
		maps[i] = sys_bpf(BPF_MAP_CREATE, &a);
		if (maps[i] < 0) {
			printf("Bail out! map create: %s\n", strerror(errno));
			return 1;
		}
	}
	printf("# BPF_PROG_BIND_MAP, median of %d repetitions\n", REPS);
	return bench_run_cases(bench_glob(argc, argv), sizeof(cases) / sizeof(cases[0]),
			       case_name, case_run);
}

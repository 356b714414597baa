// SPDX-License-Identifier: GPL-2.0
/*
 * Cost of bpf_per_cpu_ptr() and bpf_this_cpu_ptr() (patches/bpf-per-cpu-ptr)
 * in a running program: a socket filter that makes 64 calls (each result
 * NULL-tested where it may be NULL, and read), run 2,000 times per repetition
 * through BPF_PROG_TEST_RUN, with the JIT and with the interpreter (both
 * helpers stay calls in ours); on an int variable and on a struct field; and
 * the load of such a program (the verifier).  Times are per call (per load
 * for the load case).
 *
 * Output is KTAP, one result per case, each preceded by the line the report
 * parses:  # BENCH <case> <median ns per call> ns min=<ns> max=<ns> reps=<n>
 *
 * Usage: pcpu_bench [CASE-GLOB]   (the glob also comes from $KTEST_CASE)
 */
#define _GNU_SOURCE
#include "../../tests/bpf-per-cpu-ptr/pcpu_util.h"
#include "../bench_util.h"

#define CALLS	64
#define RUNS	2000
#define LOADS	20
#define REPS	11

enum kind { PER_INT, PER_STRUCT, THIS_INT, THIS_STRUCT, LOAD_PER };

static const struct bench_case {
	const char *name;
	enum kind kind;
	int jit;
} cases[] = {
	{ "per-cpu-ptr-int-jit", PER_INT, 1 },
	{ "per-cpu-ptr-struct-jit", PER_STRUCT, 1 },
	{ "this-cpu-ptr-int-jit", THIS_INT, 1 },
	{ "this-cpu-ptr-struct-jit", THIS_STRUCT, 1 },
	{ "per-cpu-ptr-int-interp", PER_INT, 0 },
	{ "this-cpu-ptr-int-interp", THIS_INT, 0 },
	{ "load-64-per-cpu-ptr-jit", LOAD_PER, 1 },
};

static int num_id, rq_id, rq_cpu_off;
static struct bpf_insn prog[CALLS * 8 + 4];

/* 64 calls, each result read into r6 (and NULL-tested for per_cpu_ptr) */
static unsigned int build(enum kind k)
{
	bool per = k == PER_INT || k == PER_STRUCT || k == LOAD_PER;
	bool st = k == PER_STRUCT || k == THIS_STRUCT;
	unsigned int n = 0, i;

	prog[n++] = BPF_MOV64_IMM(BPF_REG_6, 0);
	for (i = 0; i < CALLS; i++) {
		struct bpf_insn ld[2] = { PCPU_LD_KSYM(BPF_REG_1, st ? rq_id : num_id) };

		prog[n++] = ld[0];
		prog[n++] = ld[1];
		if (per)
			prog[n++] = BPF_MOV64_IMM(BPF_REG_2, 0);
		prog[n++] = BPF_EMIT_CALL(per ? BPF_FUNC_per_cpu_ptr : BPF_FUNC_this_cpu_ptr);
		if (per)
			prog[n++] = BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 2);
		prog[n++] = BPF_LDX_MEM(BPF_W, BPF_REG_0, BPF_REG_0, st ? rq_cpu_off : 0);
		prog[n++] = BPF_ALU64_REG(BPF_ADD, BPF_REG_6, BPF_REG_0);
	}
	prog[n++] = BPF_MOV64_REG(BPF_REG_0, BPF_REG_6);
	prog[n++] = BPF_EXIT_INSN();
	return n;
}

static int test_run(int fd)
{
	static char pkt[64];
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = fd;
	a.test.data_in = (unsigned long)pkt;
	a.test.data_size_in = sizeof(pkt);
	a.test.repeat = RUNS;
	if (pcpu_sys_bpf(BPF_PROG_TEST_RUN, &a))
		return -errno;
	/* every call read CPU 0's value: cpu_number and rq->cpu are 0 */
	return a.test.retval == 0 ? 0 : -EIO;
}

static int run_case(const struct bench_case *c)
{
	unsigned long long t[REPS], start, ops;
	unsigned int n = build(c->kind);
	int r, i, fd = -1, err = 0;

	if (pcpu_set_jit(c->jit))
		return -1;
	if (c->kind != LOAD_PER) {
		fd = pcpu_load(BPF_PROG_TYPE_SOCKET_FILTER, prog, n);
		if (fd < 0) {
			printf("# %s: load: %s\n%s", c->name, strerror(-fd), pcpu_log);
			return -1;
		}
	}
	ops = c->kind == LOAD_PER ? LOADS : (unsigned long long)RUNS * CALLS;
	for (r = -1; r < REPS && !err; r++) {
		start = bench_now_ns();
		if (c->kind == LOAD_PER) {
			for (i = 0; i < LOADS && !err; i++) {
				fd = pcpu_load(BPF_PROG_TYPE_SOCKET_FILTER, prog, n);
				err = fd < 0 ? fd : 0;
				if (fd >= 0)
					close(fd);
			}
		} else {
			err = test_run(fd);
		}
		if (r >= 0)
			t[r] = bench_now_ns() - start;
	}
	if (c->kind != LOAD_PER)
		close(fd);
	pcpu_set_jit(1);
	if (err) {
		printf("# %s: %s\n", c->name, strerror(-err));
		return -1;
	}
	bench_report(c->name, t, REPS, ops);
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
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("KTAP version 1\n");
	num_id = pcpu_var_id("cpu_number");
	rq_id = pcpu_var_id("runqueues");
	rq_cpu_off = pcpu_member_off("rq", "cpu");
	if (num_id <= 0 || rq_id <= 0 || rq_cpu_off <= 0) {
		printf("Bail out! per-CPU variables not in vmlinux BTF\n");
		return 1;
	}
	printf("# bpf_per_cpu_ptr / bpf_this_cpu_ptr, median of %d repetitions\n", REPS);
	return bench_run_cases(bench_glob(argc, argv), sizeof(cases) / sizeof(cases[0]),
			       case_name, case_run);
}

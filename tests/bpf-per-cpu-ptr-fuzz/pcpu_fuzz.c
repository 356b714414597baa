// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_per_cpu_ptr() / bpf_this_cpu_ptr() under seeded random programs,
 * compared with stock by scripts/matrix.py.  Each case builds one raw
 * program: a program type, a caller (root or uid 1000), the JIT on or off,
 * a first argument (a per-CPU ksym of one of several kinds, moved or not,
 * a scalar, the context, the stack, a pointer the helpers returned, an
 * uninitialised register, a BTF id that is no variable), a cpu (constant,
 * from the context, out of range, with upper bits, a pointer, unset), the
 * helper (153, 154 or a neighbour) and a use of the result (a read of some
 * size and offset, with or without a NULL test, a write, a second call, a
 * NULL test only, a store into the context).  It prints what user space
 * sees: the load's errno, the verifier's verdict (its last message and the
 * processed-instructions line, addresses masked) and, for a syscall
 * program, the result of a run on a random CPU.  Values that change from
 * boot to boot are reduced to whether the read happened.
 *
 * Checked on every kernel, from the helpers' documentation: when a loaded
 * syscall program's result tells (a NULL test of the helper's result, or a
 * checked read of rq->cpu or cpu_number), bpf_per_cpu_ptr(ksym, cpu) is NULL
 * exactly when the u32 cpu is not below nr_cpu_ids, and otherwise points at
 * that CPU's instance (it reads that CPU's number); bpf_this_cpu_ptr(ksym)
 * points at the instance of the CPU the program runs on.  A case that breaks
 * it has " VIOLATION" after its run result, and the run's last result fails.
 *
 * Environment: KTEST_SEED (random if unset, always printed), KTEST_FUZZ_CASES,
 * KTEST_FUZZ_SECONDS (time bound).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include "../bpf-per-cpu-ptr/pcpu_util.h"
#include "../fuzz_rng.h"
#include "kselftest.h"

#define NOBODY 1000

/* Per-CPU variables of several kinds; the first two read the same on every boot. */
static const char *const vars[] = {
	"runqueues",		/* struct rq: ->cpu is deterministic */
	"cpu_number",		/* int: the CPU's number */
	"process_counts",	/* unsigned long */
	"bpf_prog_active",	/* int */
	"irq_stat",		/* typedef of a struct */
	"current_task",		/* pointer */
	"cpu_sibling_map",	/* cpumask_var_t: an array */
	"this_cpu_off",		/* unsigned long */
};
#define NVARS (sizeof(vars) / sizeof(vars[0]))
static int var_id[NVARS];
static int rq_cpu_off, rq_struct_id;
static unsigned int nr_cpu_ids;
static int ncpus;

static const struct {
	enum bpf_prog_type type;
	const char *name;
} types[] = {
	{ BPF_PROG_TYPE_SYSCALL, "syscall" },
	{ BPF_PROG_TYPE_SYSCALL, "syscall" },
	{ BPF_PROG_TYPE_SYSCALL, "syscall" },
	{ BPF_PROG_TYPE_SYSCALL, "syscall" },
	{ BPF_PROG_TYPE_SYSCALL, "syscall" },
	{ BPF_PROG_TYPE_SYSCALL, "syscall" },
	{ BPF_PROG_TYPE_SOCKET_FILTER, "socket" },
	{ BPF_PROG_TYPE_SCHED_CLS, "sched_cls" },
	{ BPF_PROG_TYPE_XDP, "xdp" },
	{ BPF_PROG_TYPE_KPROBE, "kprobe" },
	{ BPF_PROG_TYPE_TRACEPOINT, "tracepoint" },
	{ BPF_PROG_TYPE_RAW_TRACEPOINT, "raw_tp" },
	{ BPF_PROG_TYPE_PERF_EVENT, "perf_event" },
	{ BPF_PROG_TYPE_CGROUP_SKB, "cgroup_skb" },
	{ BPF_PROG_TYPE_CGROUP_SYSCTL, "cgroup_sysctl" },
	{ BPF_PROG_TYPE_LWT_IN, "lwt_in" },
	{ BPF_PROG_TYPE_SK_MSG, "sk_msg" },
};
#define NTYPES (sizeof(types) / sizeof(types[0]))

struct io {
	uint64_t cpu;
	uint64_t out;
};

/* What the run of the program built must return, where it tells (see build()). */
static struct {
	bool judge, this, cpu_ctx, null_test;
	uint64_t cpu;		/* r2 as the program sets it, when not from the context */
	unsigned int bytes;	/* the read's size */
} want;
static unsigned long violations;

static struct bpf_insn insns[64];
static unsigned int n;
static char desc[256];

static void emit(struct bpf_insn i)
{
	insns[n++] = i;
}

static void emit_ksym(int reg, int btf_id)
{
	struct bpf_insn ld[2] = { PCPU_LD_KSYM(reg, btf_id) };

	emit(ld[0]);
	emit(ld[1]);
}

static void note(const char *fmt, ...)
{
	size_t l = strlen(desc);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(desc + l, sizeof(desc) - l, fmt, ap);
	va_end(ap);
}

/* Build a case's program; *det says whether its return value is boot-independent. */
static void build(bool syscall_prog, bool *det)
{
	unsigned int v = pick(NVARS), a = pick(14), c, helper, use, off, size;
	static const int sizes[] = { BPF_B, BPF_H, BPF_W, BPF_DW };
	static const int bytes[] = { 1, 2, 4, 8 };
	bool st;
	int si;

	n = 0;
	desc[0] = 0;
	*det = true;
	memset(&want, 0, sizeof(want));
	emit(BPF_MOV64_REG(BPF_REG_6, BPF_REG_1));
	/* r7: the cpu from the context, or a constant */
	if (syscall_prog && pick(2)) {
		emit(BPF_LDX_MEM(BPF_DW, BPF_REG_7, BPF_REG_6, 0));
		note("cpu=ctx ");
		want.cpu_ctx = true;
	} else {
		emit(BPF_MOV64_IMM(BPF_REG_7, pick(nr_cpu_ids + 2)));
		note("cpu=%d ", insns[n - 1].imm);
		want.cpu = insns[n - 1].imm;
	}

	/* the first argument */
	note("var=%s ", vars[v]);
	switch (a) {
	case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7:
		emit_ksym(BPF_REG_1, var_id[v]);
		note("arg=ksym ");
		break;
	case 8:
		emit_ksym(BPF_REG_1, var_id[v]);
		off = (int[]){ 1, 8, -8, 64 }[pick(4)];
		emit(BPF_ALU64_IMM(BPF_ADD, BPF_REG_1, off));
		note("arg=ksym%+d ", (int)off);
		break;
	case 9:
		emit_ksym(BPF_REG_1, var_id[v]);
		emit(BPF_ALU64_REG(BPF_ADD, BPF_REG_1, BPF_REG_7));
		note("arg=ksym+r7 ");
		break;
	case 10:
		emit(BPF_MOV64_IMM(BPF_REG_1, pick(3) ? 0 : 4096));
		note("arg=scalar ");
		break;
	case 11:
		switch (pick(4)) {
		case 0:
			emit(BPF_MOV64_REG(BPF_REG_1, BPF_REG_6));
			note("arg=ctx ");
			break;
		case 1:
			emit(BPF_ST_MEM(BPF_DW, BPF_REG_10, -8, 0));
			emit(BPF_MOV64_REG(BPF_REG_1, BPF_REG_10));
			emit(BPF_ALU64_IMM(BPF_ADD, BPF_REG_1, -8));
			note("arg=stack ");
			break;
		case 2:
			/* a BTF id that is a struct, not a variable */
			emit_ksym(BPF_REG_1, rq_struct_id);
			note("arg=btf-struct-id ");
			break;
		default:
			note("arg=unset ");
			break;
		}
		break;
	default:
		/* a pointer the helpers returned, given back */
		emit_ksym(BPF_REG_1, var_id[v]);
		emit(BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr));
		emit(BPF_MOV64_REG(BPF_REG_1, BPF_REG_0));
		note("arg=this_cpu_ptr() ");
		break;
	}

	/* the cpu argument and the helper */
	c = pick(8);
	helper = pick(20);
	helper = helper < 13 ? BPF_FUNC_per_cpu_ptr : helper < 19 ? BPF_FUNC_this_cpu_ptr :
		 BPF_FUNC_per_cpu_ptr + (pick(2) ? -1 : 2);
	/* judged: a ksym argument and a cpu the program sets (not fp, not unset) */
	want.judge = a < 8 && (helper == BPF_FUNC_this_cpu_ptr ||
			       (helper == BPF_FUNC_per_cpu_ptr && (c < 5 || c == 7)));
	want.this = helper == BPF_FUNC_this_cpu_ptr;
	if (helper == BPF_FUNC_this_cpu_ptr) {
		/* r2 is not an argument; maybe junk in it */
		if (c == 0)
			emit(BPF_MOV64_REG(BPF_REG_2, BPF_REG_10));
		note("this ");
	} else {
		if (c >= 3)
			want.cpu_ctx = false;
		switch (c) {
		case 0: case 1: case 2:
			emit(BPF_MOV64_REG(BPF_REG_2, BPF_REG_7));
			break;
		case 3:
			emit(BPF_MOV64_IMM(BPF_REG_2, -1));
			want.cpu = -1ULL;
			note("r2=-1 ");
			break;
		case 4: {
			struct bpf_insn ld[2] = {
				BPF_LD_IMM64_RAW(BPF_REG_2, 0, (1ULL << 32) | pick(nr_cpu_ids + 1)),
			};
			emit(ld[0]);
			emit(ld[1]);
			want.cpu = (1ULL << 32) | (uint32_t)ld[0].imm;
			note("r2=2^32+%d ", ld[0].imm);
			break;
		}
		case 5:
			emit(BPF_MOV64_REG(BPF_REG_2, BPF_REG_10));
			note("r2=fp ");
			break;
		case 6:
			note("r2=unset ");
			break;
		default:
			emit(BPF_MOV64_IMM(BPF_REG_2, nr_cpu_ids));
			want.cpu = nr_cpu_ids;
			note("r2=nr_cpu_ids ");
			break;
		}
		note(helper == BPF_FUNC_per_cpu_ptr ? "per " : "helper=%u ", helper);
	}
	emit(BPF_EMIT_CALL(helper));

	/* the use of r0 */
	use = pick(9);
	si = pick(4);
	size = bytes[si];
	off = pick(3) ? 0 : (int[]){ 4, 8, -4, 4096, 1 }[pick(5)];
	if (v == 0 && pick(2) && !off)
		off = rq_cpu_off;
	/* only rq->cpu and cpu_number's value are the same on every boot */
	if (!((v == 0 && off == (unsigned int)rq_cpu_off) || (v == 1 && off == 0)))
		*det = false;
	want.bytes = size;
	want.judge &= (use <= 2 && *det) || use == 8;
	want.null_test = use == 8;
	switch (use) {
	case 0: case 1: case 2:
		note("read%u@%d ", size, (int)off);
		emit(BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 2));
		emit(BPF_LDX_MEM(sizes[si], BPF_REG_0, BPF_REG_0, off));
		emit(BPF_JMP_A(1));
		emit(BPF_MOV64_IMM(BPF_REG_0, -1));
		if (!*det) {
			emit(BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, -1, 1));
			emit(BPF_MOV64_IMM(BPF_REG_0, 1));
		}
		break;
	case 3:
		note("read%u@%d-unchecked ", size, (int)off);
		emit(BPF_LDX_MEM(sizes[si], BPF_REG_0, BPF_REG_0, off));
		if (!*det)
			emit(BPF_MOV64_IMM(BPF_REG_0, 1));
		break;
	case 4:
		st = pick(2);
		note("write%u@%d%s ", size, (int)off, st ? "-st" : "");
		if (pick(2))
			emit(BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 1));
		if (st)
			emit(BPF_ST_MEM(sizes[si], BPF_REG_0, off, 1));
		else
			emit(BPF_STX_MEM(sizes[si], BPF_REG_0, BPF_REG_7, off));
		emit(BPF_MOV64_IMM(BPF_REG_0, 0));
		break;
	case 5:
		note("again ");
		emit(BPF_MOV64_REG(BPF_REG_1, BPF_REG_0));
		emit(BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr));
		emit(BPF_MOV64_IMM(BPF_REG_0, 0));
		break;
	case 6:
		note("to-ctx ");
		emit(BPF_STX_MEM(BPF_DW, BPF_REG_6, BPF_REG_0, 8));
		emit(BPF_MOV64_IMM(BPF_REG_0, 0));
		break;
	case 7:
		note("return-r0 ");
		break;
	default:
		note("null? ");
		emit(BPF_MOV64_IMM(BPF_REG_1, 0));
		emit(BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 1));
		emit(BPF_MOV64_IMM(BPF_REG_1, 1));
		emit(BPF_MOV64_REG(BPF_REG_0, BPF_REG_1));
		*det = true;
		break;
	}
	emit(BPF_EXIT_INSN());
}

/* The verdict: the last message before "processed", and that line; hex masked. */
static void verdict(char *out, size_t len)
{
	char *lines[2] = { NULL, NULL }, *p, *q, *e;
	char buf[512];
	size_t o = 0;
	int i;

	for (p = pcpu_log; *p; p = e + 1) {
		e = strchr(p, '\n');
		if (!e)
			break;
		*e = 0;
		if (!strncmp(p, "processed ", 10))
			lines[1] = p;
		else if (*p && !lines[1])
			lines[0] = p;
		*e = '\n';
	}
	out[0] = 0;
	for (i = 0; i < 2; i++) {
		if (!lines[i])
			continue;
		e = strchr(lines[i], '\n');
		snprintf(buf, sizeof(buf), "%.*s", e ? (int)(e - lines[i]) : 400, lines[i]);
		/* mask addresses and BTF ids: they vary between kernels */
		for (q = buf; *q && o + 8 < len; q++) {
			if (!strncmp(q, "btf_id ", 7) && isdigit(q[7])) {
				o += snprintf(out + o, len - o, "btf_id N");
				q += 7;
				while (isdigit(q[1]))
					q++;
				continue;
			}
			if (q[0] == '0' && q[1] == 'x' && strlen(q) > 10 && isxdigit(q[2]) &&
			    isxdigit(q[9])) {
				o += snprintf(out + o, len - o, "ADDR");
				q += 2;
				while (isxdigit(q[1]))
					q++;
				continue;
			}
			out[o++] = *q;
		}
		if (o + 3 < len)
			out[o++] = '|';
		out[o] = 0;
	}
}

/*
 * Whether the run's result @r (the program's 32-bit return value, from a run
 * on @runcpu) is what the helpers promise, or tells nothing.
 */
static bool judged(long r, const struct io *io, unsigned int runcpu)
{
	uint32_t cpu = want.cpu_ctx ? (uint32_t)io->cpu : (uint32_t)want.cpu;
	uint64_t mask = want.bytes == 8 ? 0xffffffffULL : (1ULL << (8 * want.bytes)) - 1;
	bool valid;

	if (!want.judge)
		return true;
	if (want.this)
		cpu = runcpu;
	valid = cpu < nr_cpu_ids;
	if (want.null_test)
		return r == valid;
	if (!valid)
		return r == 0xffffffffL;	/* the program's -1: NULL */
	return ((uint64_t)r & mask) == (cpu & mask);
}

static void one_case(unsigned long c)
{
	unsigned int t = pick(NTYPES), runcpu;
	bool unpriv = pick(8) == 0, jit = pick(10) < 7, det;
	bool syscall_prog = types[t].type == BPF_PROG_TYPE_SYSCALL;
	char v[1200];
	int fd, pfd[2], status;
	long r = 0;
	pid_t pid;
	struct io io;

	build(syscall_prog, &det);
	runcpu = pick(ncpus);
	io.cpu = pick(4) ? pick(nr_cpu_ids) : (uint64_t[]){ nr_cpu_ids, 0xffffffff,
			(1ULL << 32) | 1, 1ULL << 63 }[pick(4)];
	io.out = 0;
	pcpu_set_jit(jit);
	if (pipe(pfd))
		return;
	pid = fork();
	if (!pid) {
		cpu_set_t set;
		char res[64] = "-";

		close(pfd[0]);
		if (unpriv && (setresgid(NOBODY, NOBODY, NOBODY) ||
			       setresuid(NOBODY, NOBODY, NOBODY)))
			_exit(2);
		fd = pcpu_load(types[t].type, insns, n);
		verdict(v, sizeof(v));
		if (fd >= 0 && syscall_prog) {
			CPU_ZERO(&set);
			CPU_SET(runcpu, &set);
			sched_setaffinity(0, sizeof(set), &set);
			r = pcpu_run(fd, &io, sizeof(io));
			snprintf(res, sizeof(res), "%ld%s%s", det || r < 0 ? r : r != 0,
				 io.out ? " ctx-written" : "",
				 r >= 0 && !judged(r, &io, runcpu) ? " VIOLATION" : "");
		}
		dprintf(pfd[1], "load=%d run=%s verdict=%s", fd < 0 ? fd : 0, res, v);
		_exit(0);
	}
	close(pfd[1]);
	memset(v, 0, sizeof(v));
	r = read(pfd[0], v, sizeof(v) - 1);
	close(pfd[0]);
	waitpid(pid, &status, 0);
	violations += r > 0 && strstr(v, " VIOLATION");
	printf("# obs c%lu %s %s jit=%d cpu-in=%#llx on=%u %s| %s\n", c, types[t].name,
	       unpriv ? "uid1000" : "root", jit, (unsigned long long)io.cpu, runcpu, desc,
	       r > 0 ? v : "(no result)");
}

/* The probe: root loads a syscall program calling both helpers on cpu_number. */
static bool helpers_known(void)
{
	struct bpf_insn p[] = {
		PCPU_LD_KSYM(BPF_REG_1, var_id[1]),
		BPF_MOV64_IMM(BPF_REG_2, 0),
		BPF_EMIT_CALL(BPF_FUNC_per_cpu_ptr),
		PCPU_LD_KSYM(BPF_REG_1, var_id[1]),
		BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
		BPF_MOV64_IMM(BPF_REG_0, 0),
		BPF_EXIT_INSN(),
	};
	int fd = pcpu_load(BPF_PROG_TYPE_SYSCALL, p, sizeof(p) / sizeof(p[0]));

	if (fd < 0) {
		ksft_print_msg("probe: %s: %s", strerror(-fd), pcpu_log);
		return false;
	}
	close(fd);
	return true;
}

int main(void)
{
	const struct fuzz_env env = fuzz_env();
	const unsigned long cases = env.cases, limit = env.limit;
	const uint64_t seed = env.seed;
	unsigned long c, done = 0;
	time_t start = time(NULL);
	unsigned int i, missing = 0;

	ksft_print_header();
	ksft_set_plan(4);
	ksft_print_msg("seed %llu, %lu cases (KTEST_SEED=%llu replays them)\n",
		       (unsigned long long)seed, cases, (unsigned long long)seed);
	for (i = 0; i < NVARS; i++) {
		var_id[i] = pcpu_var_id(vars[i]);
		if (var_id[i] <= 0) {
			ksft_print_msg("per-CPU variable %s not in vmlinux BTF\n", vars[i]);
			missing++;
		}
	}
	rq_cpu_off = pcpu_member_off("rq", "cpu");
	rq_struct_id = pcpu_vmlinux() ? btf__find_by_name_kind(pcpu_vmlinux(), "rq",
							       BTF_KIND_STRUCT) : -1;
	nr_cpu_ids = pcpu_nr_cpu_ids();
	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	ksft_test_result(!missing && rq_cpu_off > 0 && rq_struct_id > 0 && nr_cpu_ids > 1,
			 "vmlinux BTF has the variables, nr_cpu_ids %u\n", nr_cpu_ids);
	ksft_test_result(helpers_known(), "helpers 153 and 154 take a per-CPU ksym\n");
	if (ktest_write_str("/proc/sys/kernel/unprivileged_bpf_disabled", "0"))
		ksft_print_msg("cannot allow unprivileged bpf\n");
	for (c = 0; c < cases; c++) {
		if ((unsigned long)(time(NULL) - start) > limit)
			break;
		fuzz_seed_case(seed, c);
		one_case(c);
		fflush(stdout);
		done++;
	}
	pcpu_set_jit(1);
	ksft_test_result(done > 0, "%lu of %lu cases in %ld s\n", done, cases,
			 (long)(time(NULL) - start));
	ksft_test_result(!violations,
			 "each result that tells is the CPU the helpers promise (%lu violations)\n",
			 violations);
	ksft_finished();
}

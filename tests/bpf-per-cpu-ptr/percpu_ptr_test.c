// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_per_cpu_ptr() and bpf_this_cpu_ptr() (patches/bpf-per-cpu-ptr), with
 * raw programs on typed per-CPU ksyms: the instance of every CPU read from
 * every CPU (struct rq, int cpu_number, unsigned long process_counts, which
 * forks on a pinned CPU move), with the JIT and with the interpreter (both
 * helpers stay calls in ours: inlining was measured and dropped); NULL for a
 * cpu at or above nr_cpu_ids and only the low 32 bits of the cpu used; the
 * verifier's rejections, each with stock's message: a missing NULL check,
 * writes through the result, reads beyond a scalar variable, arguments that
 * are not a per-CPU pointer at offset 0, variable offsets on the result
 * (bounded past the end, negative, unbounded; none on a struct), negative
 * and past-the-end constant offsets, the read-only result as a helper's
 * destination (and where a helper only reads it, accepted up to its size);
 * who may call the helpers.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <sys/wait.h>
#include "pcpu_util.h"
#include "kselftest_harness.h"

#define NOBODY 1000

struct pcpu_io {
	__u64 cpu;
	__u64 rq_ptr, rq_cpu;
	__u64 this_rq, this_rq_cpu;
	__u64 num_ptr, num;
	__u64 this_num;
	__u64 pc, this_pc;
	__u64 rq_base, num_base;
};

#define IO(f) ((short)offsetof(struct pcpu_io, f))
#define SENTINEL 0x5a5a5a5a5a5a5a5aULL

struct ids {
	int rq, num, pc, rq_cpu_off;
};

static int get_ids(struct ids *id)
{
	id->rq = pcpu_var_id("runqueues");
	id->num = pcpu_var_id("cpu_number");
	id->pc = pcpu_var_id("process_counts");
	id->rq_cpu_off = pcpu_member_off("rq", "cpu");
	return id->rq > 0 && id->num > 0 && id->pc > 0 &&
	       id->rq_cpu_off > 0 ? 0 : -1;
}

/* The program behind struct pcpu_io: every field but cpu is written by it. */
static int load_values_prog(const struct ids *id)
{
	struct bpf_insn p[] = {
		BPF_MOV64_REG(BPF_REG_6, BPF_REG_1),
		BPF_LDX_MEM(BPF_DW, BPF_REG_7, BPF_REG_6, IO(cpu)),
		/* runqueues on cpu, and here */
		PCPU_LD_KSYM(BPF_REG_1, id->rq),
		BPF_MOV64_REG(BPF_REG_2, BPF_REG_7),
		BPF_EMIT_CALL(BPF_FUNC_per_cpu_ptr),
		BPF_STX_MEM(BPF_DW, BPF_REG_6, BPF_REG_0, IO(rq_ptr)),
		BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 2),
		BPF_LDX_MEM(BPF_W, BPF_REG_1, BPF_REG_0, id->rq_cpu_off),
		BPF_STX_MEM(BPF_DW, BPF_REG_6, BPF_REG_1, IO(rq_cpu)),
		PCPU_LD_KSYM(BPF_REG_1, id->rq),
		BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
		BPF_STX_MEM(BPF_DW, BPF_REG_6, BPF_REG_0, IO(this_rq)),
		BPF_LDX_MEM(BPF_W, BPF_REG_1, BPF_REG_0, id->rq_cpu_off),
		BPF_STX_MEM(BPF_DW, BPF_REG_6, BPF_REG_1, IO(this_rq_cpu)),
		/* cpu_number (int) */
		PCPU_LD_KSYM(BPF_REG_1, id->num),
		BPF_MOV64_REG(BPF_REG_2, BPF_REG_7),
		BPF_EMIT_CALL(BPF_FUNC_per_cpu_ptr),
		BPF_STX_MEM(BPF_DW, BPF_REG_6, BPF_REG_0, IO(num_ptr)),
		BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 2),
		BPF_LDX_MEM(BPF_W, BPF_REG_1, BPF_REG_0, 0),
		BPF_STX_MEM(BPF_DW, BPF_REG_6, BPF_REG_1, IO(num)),
		PCPU_LD_KSYM(BPF_REG_1, id->num),
		BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
		BPF_LDX_MEM(BPF_W, BPF_REG_1, BPF_REG_0, 0),
		BPF_STX_MEM(BPF_DW, BPF_REG_6, BPF_REG_1, IO(this_num)),
		/* process_counts (unsigned long) */
		PCPU_LD_KSYM(BPF_REG_1, id->pc),
		BPF_MOV64_REG(BPF_REG_2, BPF_REG_7),
		BPF_EMIT_CALL(BPF_FUNC_per_cpu_ptr),
		BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 2),
		BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_0, 0),
		BPF_STX_MEM(BPF_DW, BPF_REG_6, BPF_REG_1, IO(pc)),
		PCPU_LD_KSYM(BPF_REG_1, id->pc),
		BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
		BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_0, 0),
		BPF_STX_MEM(BPF_DW, BPF_REG_6, BPF_REG_1, IO(this_pc)),
		/* the ksyms themselves: the per-CPU offsets' common base */
		PCPU_LD_KSYM(BPF_REG_1, id->rq),
		BPF_STX_MEM(BPF_DW, BPF_REG_6, BPF_REG_1, IO(rq_base)),
		PCPU_LD_KSYM(BPF_REG_1, id->num),
		BPF_STX_MEM(BPF_DW, BPF_REG_6, BPF_REG_1, IO(num_base)),
		BPF_MOV64_IMM(BPF_REG_0, 0),
		BPF_EXIT_INSN(),
	};

	return pcpu_load(BPF_PROG_TYPE_SYSCALL, p, ARRAY_SIZE(p));
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static long run_values(int fd, __u64 cpu, struct pcpu_io *io)
{
	memset(io, 0x5a, sizeof(*io));
	io->cpu = cpu;
	return pcpu_run(fd, io, sizeof(*io));
}

FIXTURE(values) {
	struct ids id;
	int fd;
	unsigned int nr_cpu_ids;
	int ncpus;
};

FIXTURE_VARIANT(values) {
	int jit;
};

FIXTURE_VARIANT_ADD(values, jit) {
	.jit = 1,
};

FIXTURE_VARIANT_ADD(values, interpreter) {
	.jit = 0,
};

FIXTURE_SETUP(values)
{
	ASSERT_EQ(0, get_ids(&self->id)) TH_LOG("per-CPU variables not in vmlinux BTF");
	ASSERT_EQ(0, pcpu_set_jit(variant->jit));
	self->fd = load_values_prog(&self->id);
	ASSERT_GE(self->fd, 0) TH_LOG("load: %s\n%s", strerror(-self->fd), pcpu_log);
	self->nr_cpu_ids = pcpu_nr_cpu_ids();
	self->ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	ASSERT_GE(self->nr_cpu_ids, 2) TH_LOG("the group runs under -smp 4");
}

FIXTURE_TEARDOWN(values)
{
	if (self->fd >= 0)
		close(self->fd);
	pcpu_set_jit(1);
}

/* From every CPU, every CPU's instance: the right one, and per_cpu == this. */
TEST_F(values, every_cpu_from_every_cpu)
{
	struct pcpu_io io;
	__u64 rq_off[64], num_off[64];
	int here, t, n = self->ncpus;

	ASSERT_LE(n, 64);
	ASSERT_EQ(n, (int)self->nr_cpu_ids);
	for (here = 0; here < n; here++) {
		ASSERT_EQ(0, pin(here));
		for (t = 0; t < n; t++) {
			ASSERT_EQ(0, run_values(self->fd, t, &io));
			EXPECT_NE(0, io.rq_ptr);
			EXPECT_EQ(t, io.rq_cpu);
			EXPECT_EQ(here, io.this_rq_cpu);
			EXPECT_EQ(t, io.num);
			EXPECT_EQ(here, io.this_num);
			if (t == here) {
				EXPECT_EQ(io.this_rq, io.rq_ptr);
				EXPECT_EQ(io.this_pc, io.pc);
			}
			/* one offset per CPU, whatever the variable */
			EXPECT_EQ(io.rq_ptr - io.rq_base, io.num_ptr - io.num_base);
			if (here == 0) {
				rq_off[t] = io.rq_ptr - io.rq_base;
				num_off[t] = io.num_ptr - io.num_base;
			} else {
				EXPECT_EQ(rq_off[t], io.rq_ptr - io.rq_base);
				EXPECT_EQ(num_off[t], io.num_ptr - io.num_base);
			}
		}
	}
	/* different CPUs, different instances */
	for (t = 1; t < n; t++) {
		EXPECT_NE(rq_off[0], rq_off[t]);
	}
}

/* NULL at and above nr_cpu_ids; the untouched fields keep their sentinel */
TEST_F(values, out_of_range_cpu_gives_null)
{
	__u64 bad[] = { self->nr_cpu_ids, self->nr_cpu_ids + 1, 64, 4096, 8192,
			0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff };
	struct pcpu_io io;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ASSERT_EQ(0, run_values(self->fd, bad[i], &io));
		EXPECT_EQ(0, io.rq_ptr) TH_LOG("cpu %llu", (unsigned long long)bad[i]);
		EXPECT_EQ(SENTINEL, io.rq_cpu);
		EXPECT_EQ(0, io.num_ptr);
		EXPECT_EQ(SENTINEL, io.num);
		EXPECT_EQ(SENTINEL, io.pc);
		EXPECT_NE(0, io.this_rq);
	}
	/* the last CPU is in range */
	ASSERT_EQ(0, run_values(self->fd, self->nr_cpu_ids - 1, &io));
	EXPECT_EQ(self->nr_cpu_ids - 1, io.rq_cpu);
	EXPECT_EQ(self->nr_cpu_ids - 1, io.num);
}

/* The cpu argument is a u32: the upper half of the register is not looked at. */
TEST_F(values, cpu_is_the_low_32_bits)
{
	struct pcpu_io io;
	unsigned int t;

	for (t = 0; t < self->nr_cpu_ids; t++) {
		ASSERT_EQ(0, run_values(self->fd, (1ULL << 32) | t, &io));
		EXPECT_EQ(t, io.rq_cpu);
		EXPECT_EQ(t, io.num);
		ASSERT_EQ(0, run_values(self->fd, 0xffffffff00000000ULL | t, &io));
		EXPECT_EQ(t, io.rq_cpu);
	}
	ASSERT_EQ(0, run_values(self->fd, (1ULL << 32) | self->nr_cpu_ids, &io));
	EXPECT_EQ(0, io.rq_ptr);
}

/*
 * A value the kernel keeps per CPU: process_counts goes up by one for each
 * fork on the forking CPU and down when the parent reaps the child.  Twenty
 * children are kept alive, blocked on a pipe, while the count is read.
 */
TEST_F(values, process_counts_follow_forks)
{
	struct pcpu_io a, b, c, o1, o2;
	int cpu, other, i, fds[2];
	pid_t pids[20];
	char x;

	for (cpu = 0; cpu < self->ncpus; cpu++) {
		other = (cpu + 1) % self->ncpus;
		ASSERT_EQ(0, pin(cpu));
		ASSERT_EQ(0, pipe(fds));
		ASSERT_EQ(0, run_values(self->fd, cpu, &a));
		ASSERT_EQ(0, run_values(self->fd, other, &o1));
		EXPECT_EQ(a.this_pc, a.pc);
		for (i = 0; i < 20; i++) {
			pids[i] = fork();
			if (!pids[i]) {
				close(fds[1]);
				_exit(read(fds[0], &x, 1));
			}
			ASSERT_GT(pids[i], 0);
		}
		ASSERT_EQ(0, run_values(self->fd, cpu, &b));
		ASSERT_EQ(0, run_values(self->fd, other, &o2));
		close(fds[0]);
		close(fds[1]);
		for (i = 0; i < 20; i++) {
			ASSERT_EQ(pids[i], waitpid(pids[i], NULL, 0));
		}
		ASSERT_EQ(0, run_values(self->fd, cpu, &c));
		/* kernel threads fork too, rarely */
		EXPECT_GE(b.pc - a.pc, 20) TH_LOG("cpu %d: %llu -> %llu", cpu,
						  (unsigned long long)a.pc,
						  (unsigned long long)b.pc);
		EXPECT_LE(b.pc - a.pc, 24) TH_LOG("cpu %d", cpu);
		EXPECT_LE(c.pc - a.pc + 4, 8) TH_LOG("cpu %d: back to %llu from %llu", cpu,
						     (unsigned long long)c.pc,
						     (unsigned long long)a.pc);
		EXPECT_LE(o2.pc - o1.pc + 4, 8) TH_LOG("cpu %d seen from %d", other, cpu);
	}
}

/* Load @p as a syscall program; expect -@err and @msg in the log. */
#define EXPECT_REJECT(p, err, msg) do {						\
	int _fd = pcpu_load(BPF_PROG_TYPE_SYSCALL, p,				\
			    sizeof(p) / sizeof(struct bpf_insn));		\
	const char *_msg = (msg);						\
	EXPECT_EQ(-(err), _fd) TH_LOG("%s", pcpu_log);				\
	if (_fd >= 0)								\
		close(_fd);							\
	EXPECT_NE(NULL, strstr(pcpu_log, _msg))					\
		TH_LOG("want '%s' in:\n%s", _msg, pcpu_log);			\
} while (0)

#define EXPECT_LOADS(p) do {							\
	int _fd = pcpu_load(BPF_PROG_TYPE_SYSCALL, p,				\
			    sizeof(p) / sizeof(struct bpf_insn));		\
	EXPECT_LE(0, _fd) TH_LOG("%s", pcpu_log);				\
	if (_fd >= 0)								\
		close(_fd);							\
} while (0)

/* per_cpu_ptr() may return NULL: use before a test is rejected */
TEST(null_check_required)
{
	struct ids id;

	ASSERT_EQ(0, get_ids(&id)) TH_LOG("per-CPU variables not in vmlinux BTF");
	{
		struct bpf_insn p[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.rq),
			BPF_MOV64_IMM(BPF_REG_2, 0),
			BPF_EMIT_CALL(BPF_FUNC_per_cpu_ptr),
			BPF_LDX_MEM(BPF_W, BPF_REG_0, BPF_REG_0, id.rq_cpu_off),
			BPF_EXIT_INSN(),
		};
		EXPECT_REJECT(p, EACCES, "R0 invalid mem access 'ptr_or_null_'");
	}
	{
		struct bpf_insn p[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.num),
			BPF_MOV64_IMM(BPF_REG_2, 0),
			BPF_EMIT_CALL(BPF_FUNC_per_cpu_ptr),
			BPF_LDX_MEM(BPF_W, BPF_REG_0, BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		EXPECT_REJECT(p, EACCES, "R0 invalid mem access 'rdonly_mem_or_null'");
	}
	{
		/* this_cpu_ptr() never returns NULL: no test needed */
		struct bpf_insn p[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.num),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_LDX_MEM(BPF_W, BPF_REG_0, BPF_REG_0, 0),
			PCPU_LD_KSYM(BPF_REG_1, id.rq),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_LDX_MEM(BPF_W, BPF_REG_0, BPF_REG_0, id.rq_cpu_off),
			BPF_EXIT_INSN(),
		};
		EXPECT_LOADS(p);
	}
	{
		/* the test must be on the result itself: a copy tested is enough */
		struct bpf_insn p[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.num),
			BPF_MOV64_IMM(BPF_REG_2, 1),
			BPF_EMIT_CALL(BPF_FUNC_per_cpu_ptr),
			BPF_MOV64_REG(BPF_REG_6, BPF_REG_0),
			BPF_JMP_IMM(BPF_JEQ, BPF_REG_6, 0, 1),
			BPF_LDX_MEM(BPF_W, BPF_REG_0, BPF_REG_0, 0),
			BPF_MOV64_IMM(BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		EXPECT_LOADS(p);
	}
}

/* Kernel per-CPU data is read-only through the result */
TEST(writes_rejected)
{
	struct ids id;

	ASSERT_EQ(0, get_ids(&id)) TH_LOG("per-CPU variables not in vmlinux BTF");
	{
		struct bpf_insn p[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.num),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_ST_MEM(BPF_W, BPF_REG_0, 0, 7),
			BPF_MOV64_IMM(BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		EXPECT_REJECT(p, EACCES, "R0 cannot write into rdonly_mem");
	}
	{
		struct bpf_insn p[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.pc),
			BPF_MOV64_IMM(BPF_REG_2, 0),
			BPF_EMIT_CALL(BPF_FUNC_per_cpu_ptr),
			BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 2),
			BPF_MOV64_IMM(BPF_REG_1, 7),
			BPF_STX_MEM(BPF_DW, BPF_REG_0, BPF_REG_1, 0),
			BPF_MOV64_IMM(BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		EXPECT_REJECT(p, EACCES, "R0 cannot write into rdonly_mem");
	}
	{
		struct bpf_insn p[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.rq),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_ST_MEM(BPF_W, BPF_REG_0, id.rq_cpu_off, 7),
			BPF_MOV64_IMM(BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		EXPECT_REJECT(p, EACCES, "only read is supported");
	}
}

/* A scalar variable's result is exactly the variable's size */
TEST(reads_within_the_variable)
{
	struct ids id;

	ASSERT_EQ(0, get_ids(&id)) TH_LOG("per-CPU variables not in vmlinux BTF");
	{
		struct bpf_insn p[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.num),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_LDX_MEM(BPF_W, BPF_REG_0, BPF_REG_0, 4),
			BPF_EXIT_INSN(),
		};
		EXPECT_REJECT(p, EACCES, "invalid access to memory, mem_size=4 off=4 size=4");
	}
	{
		struct bpf_insn p[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.num),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		EXPECT_REJECT(p, EACCES, "invalid access to memory, mem_size=4 off=0 size=8");
	}
	{
		struct bpf_insn p[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.pc),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		EXPECT_LOADS(p);
	}
}

/* Only a per-CPU BTF pointer at offset 0 is an argument */
TEST(arguments_checked)
{
	struct ids id;

	ASSERT_EQ(0, get_ids(&id)) TH_LOG("per-CPU variables not in vmlinux BTF");
	{
		struct bpf_insn p[] = {
			BPF_MOV64_IMM(BPF_REG_1, 0),
			BPF_MOV64_IMM(BPF_REG_2, 0),
			BPF_EMIT_CALL(BPF_FUNC_per_cpu_ptr),
			BPF_MOV64_IMM(BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		EXPECT_REJECT(p, EACCES, "R1 type=scalar expected=percpu_ptr_");
	}
	{
		/* the context */
		struct bpf_insn p[] = {
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_MOV64_IMM(BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		EXPECT_REJECT(p, EACCES, "R1 type=ctx expected=percpu_ptr_");
	}
	{
		/* a per-CPU ksym moved by a constant */
		struct bpf_insn p[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.rq),
			BPF_ALU64_IMM(BPF_ADD, BPF_REG_1, 8),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_MOV64_IMM(BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		EXPECT_REJECT(p, EACCES,
			      "dereference of modified percpu_ptr_ ptr R1 off=8 disallowed");
	}
	{
		/* a per-CPU ksym cannot be dereferenced without the helpers */
		struct bpf_insn p[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.rq),
			BPF_LDX_MEM(BPF_W, BPF_REG_0, BPF_REG_1, 0),
			BPF_EXIT_INSN(),
		};
		EXPECT_REJECT(p, EACCES, "access percpu memory");
	}
	{
		/* the returned pointer is not per-CPU any more */
		struct bpf_insn p[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.rq),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_MOV64_REG(BPF_REG_1, BPF_REG_0),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_MOV64_IMM(BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		EXPECT_REJECT(p, EACCES, "R1 type=ptr_ expected=percpu_ptr_");
	}
}

/*
 * A variable offset on the result: of a scalar variable's read-only memory,
 * bounded within the variable, it is accepted and reads where it points;
 * bounded past the end, negative or unbounded, it is rejected; a struct's
 * result takes no variable offset at all.  The context's u64 [0] is the cpu,
 * [1] the offset.
 */
TEST(variable_offsets)
{
	char msg[128];
	__u64 ctx[2];
	struct ids id;
	int fd, t, b;

	ASSERT_EQ(0, get_ids(&id)) TH_LOG("per-CPU variables not in vmlinux BTF");
	{
		/* byte ctx[1] & 3 of cpu_number on CPU ctx[0] */
		struct bpf_insn p[] = {
			BPF_MOV64_REG(BPF_REG_6, BPF_REG_1),
			BPF_LDX_MEM(BPF_DW, BPF_REG_8, BPF_REG_6, 8),
			BPF_ALU64_IMM(BPF_AND, BPF_REG_8, 3),
			PCPU_LD_KSYM(BPF_REG_1, id.num),
			BPF_LDX_MEM(BPF_DW, BPF_REG_2, BPF_REG_6, 0),
			BPF_EMIT_CALL(BPF_FUNC_per_cpu_ptr),
			BPF_JMP_IMM(BPF_JNE, BPF_REG_0, 0, 2),
			BPF_MOV64_IMM(BPF_REG_0, 0xff),
			BPF_EXIT_INSN(),
			BPF_ALU64_REG(BPF_ADD, BPF_REG_0, BPF_REG_8),
			BPF_LDX_MEM(BPF_B, BPF_REG_0, BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		fd = pcpu_load(BPF_PROG_TYPE_SYSCALL, p, ARRAY_SIZE(p));
		ASSERT_LE(0, fd) TH_LOG("%s", pcpu_log);
		/* little-endian: byte 0 is the cpu, the others 0 */
		for (t = 0; t < (int)pcpu_nr_cpu_ids(); t++)
			for (b = 0; b < 8; b++) {
				ctx[0] = t;
				ctx[1] = b;
				EXPECT_EQ(b & 3 ? 0 : t, pcpu_run(fd, ctx, sizeof(ctx)))
					TH_LOG("cpu %d byte %d", t, b);
			}
		close(fd);
	}
	{
		/* a word at 0..3 of the 4 bytes */
		struct bpf_insn p[] = {
			BPF_LDX_MEM(BPF_DW, BPF_REG_8, BPF_REG_1, 8),
			BPF_ALU64_IMM(BPF_AND, BPF_REG_8, 3),
			PCPU_LD_KSYM(BPF_REG_1, id.num),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_ALU64_REG(BPF_ADD, BPF_REG_0, BPF_REG_8),
			BPF_LDX_MEM(BPF_W, BPF_REG_0, BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		EXPECT_REJECT(p, EACCES,
			      "invalid access to memory, mem_size=4 off=3 size=4\nR0 max value is outside of the allowed memory range");
	}
	{
		/* any u64: rejected at the addition */
		struct bpf_insn p[] = {
			BPF_LDX_MEM(BPF_DW, BPF_REG_8, BPF_REG_1, 8),
			PCPU_LD_KSYM(BPF_REG_1, id.num),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_ALU64_REG(BPF_ADD, BPF_REG_0, BPF_REG_8),
			BPF_LDX_MEM(BPF_B, BPF_REG_0, BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		EXPECT_REJECT(p, EINVAL,
			      "math between rdonly_mem pointer and register with unbounded min value is not allowed");
	}
	{
		/* any u32: added, but no access is within bounds */
		struct bpf_insn p[] = {
			BPF_LDX_MEM(BPF_W, BPF_REG_8, BPF_REG_1, 8),
			PCPU_LD_KSYM(BPF_REG_1, id.num),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_ALU64_REG(BPF_ADD, BPF_REG_0, BPF_REG_8),
			BPF_LDX_MEM(BPF_B, BPF_REG_0, BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		EXPECT_REJECT(p, EACCES,
			      "R0 unbounded memory access, make sure to bounds check any such access");
	}
	{
		/* -4..-1 */
		struct bpf_insn p[] = {
			BPF_LDX_MEM(BPF_DW, BPF_REG_8, BPF_REG_1, 8),
			BPF_ALU64_IMM(BPF_AND, BPF_REG_8, 3),
			BPF_ALU64_IMM(BPF_SUB, BPF_REG_8, 4),
			PCPU_LD_KSYM(BPF_REG_1, id.num),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_ALU64_REG(BPF_ADD, BPF_REG_0, BPF_REG_8),
			BPF_LDX_MEM(BPF_B, BPF_REG_0, BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		EXPECT_REJECT(p, EACCES,
			      "R0 min value is negative, either use unsigned index or do a if (index >=0) check.");
	}
	{
		/* struct rq: fields are read at constant offsets only */
		struct bpf_insn p[] = {
			BPF_LDX_MEM(BPF_DW, BPF_REG_8, BPF_REG_1, 8),
			BPF_ALU64_IMM(BPF_AND, BPF_REG_8, 3),
			PCPU_LD_KSYM(BPF_REG_1, id.rq),
			BPF_MOV64_IMM(BPF_REG_2, 0),
			BPF_EMIT_CALL(BPF_FUNC_per_cpu_ptr),
			BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 2),
			BPF_ALU64_REG(BPF_ADD, BPF_REG_0, BPF_REG_8),
			BPF_LDX_MEM(BPF_W, BPF_REG_0, BPF_REG_0, id.rq_cpu_off),
			BPF_EXIT_INSN(),
		};
		snprintf(msg, sizeof(msg),
			 "R0 is ptr_rq invalid variable offset: off=%d, var_off=(0x0; 0x3)",
			 id.rq_cpu_off);
		EXPECT_REJECT(p, EACCES, msg);
	}
}

/*
 * Constant offsets: within the variable they are fine, in the instruction or
 * added to the register; negative, or reaching past the end, they are not.
 */
TEST(constant_offsets)
{
	int rq_size = pcpu_struct_size("rq");
	char msg[128];
	struct ids id;

	ASSERT_EQ(0, get_ids(&id)) TH_LOG("per-CPU variables not in vmlinux BTF");
	ASSERT_GT(rq_size, id.rq_cpu_off) TH_LOG("sizeof(struct rq) %d", rq_size);
	{
		struct bpf_insn p[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.num),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_LDX_MEM(BPF_W, BPF_REG_0, BPF_REG_0, -4),
			BPF_EXIT_INSN(),
		};
		EXPECT_REJECT(p, EACCES,
			      "invalid access to memory, mem_size=4 off=-4 size=4\nR0 min value is outside of the allowed memory range");
	}
	{
		struct bpf_insn p[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.num),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_ALU64_IMM(BPF_ADD, BPF_REG_0, -4),
			BPF_LDX_MEM(BPF_W, BPF_REG_0, BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		EXPECT_REJECT(p, EACCES,
			      "invalid access to memory, mem_size=4 off=-4 size=4\nR0 min value is outside of the allowed memory range");
	}
	{
		/* 4 bytes at 2 of 4 */
		struct bpf_insn p[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.num),
			BPF_MOV64_IMM(BPF_REG_2, 0),
			BPF_EMIT_CALL(BPF_FUNC_per_cpu_ptr),
			BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 2),
			BPF_ALU64_IMM(BPF_ADD, BPF_REG_0, 2),
			BPF_LDX_MEM(BPF_W, BPF_REG_0, BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		EXPECT_REJECT(p, EACCES,
			      "invalid access to memory, mem_size=4 off=2 size=4\nR0 min value is outside of the allowed memory range");
	}
	{
		/* process_counts: 4 bytes at 4 of 8 are fine, 8 are not */
		struct bpf_insn ok[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.pc),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_ALU64_IMM(BPF_ADD, BPF_REG_0, 4),
			BPF_LDX_MEM(BPF_W, BPF_REG_0, BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		struct bpf_insn p[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.pc),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_ALU64_IMM(BPF_ADD, BPF_REG_0, 4),
			BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		EXPECT_LOADS(ok);
		EXPECT_REJECT(p, EACCES,
			      "invalid access to memory, mem_size=8 off=4 size=8\nR0 min value is outside of the allowed memory range");
	}
	{
		/* struct rq: a field's offset added to the register is fine */
		struct bpf_insn p[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.rq),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_ALU64_IMM(BPF_ADD, BPF_REG_0, id.rq_cpu_off),
			BPF_LDX_MEM(BPF_W, BPF_REG_0, BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		EXPECT_LOADS(p);
	}
	{
		struct bpf_insn p[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.rq),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_LDX_MEM(BPF_W, BPF_REG_0, BPF_REG_0, -8),
			BPF_EXIT_INSN(),
		};
		EXPECT_REJECT(p, EACCES, "R0 is ptr_rq invalid negative access: off=-8");
	}
	{
		/* the last 2 bytes of struct rq and 2 beyond */
		struct bpf_insn p[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.rq),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_ALU64_IMM(BPF_ADD, BPF_REG_0, rq_size - 2),
			BPF_LDX_MEM(BPF_W, BPF_REG_0, BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		snprintf(msg, sizeof(msg), "access beyond struct rq at off %d size 4", rq_size - 2);
		EXPECT_REJECT(p, EACCES, msg);
	}
}

/*
 * The read-only result where a helper writes (bpf_probe_read_kernel()'s dst,
 * bpf_strtol()'s res) is refused, as is a struct's; where a helper only
 * reads (bpf_strtol()'s buf), it is taken, for no more than its size.
 */
TEST(result_as_helper_buffer)
{
	struct ids id;

	ASSERT_EQ(0, get_ids(&id)) TH_LOG("per-CPU variables not in vmlinux BTF");
	{
		struct bpf_insn p[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.num),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_MOV64_REG(BPF_REG_1, BPF_REG_0),
			BPF_MOV64_IMM(BPF_REG_2, 4),
			BPF_MOV64_IMM(BPF_REG_3, 0),
			BPF_EMIT_CALL(BPF_FUNC_probe_read_kernel),
			BPF_MOV64_IMM(BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		EXPECT_REJECT(p, EACCES,
			      "R1 type=rdonly_mem expected=fp, pkt, pkt_meta, map_key, map_value, mem, alloc_mem, buf\n");
	}
	{
		struct bpf_insn p[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.rq),
			BPF_MOV64_IMM(BPF_REG_2, 0),
			BPF_EMIT_CALL(BPF_FUNC_per_cpu_ptr),
			BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 4),
			BPF_MOV64_REG(BPF_REG_1, BPF_REG_0),
			BPF_MOV64_IMM(BPF_REG_2, 4),
			BPF_MOV64_IMM(BPF_REG_3, 0),
			BPF_EMIT_CALL(BPF_FUNC_probe_read_kernel),
			BPF_MOV64_IMM(BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		EXPECT_REJECT(p, EACCES,
			      "R1 type=ptr_ expected=fp, pkt, pkt_meta, map_key, map_value, mem, alloc_mem, buf\n");
	}
	{
		/* strtol(cpu_number, 4, 0, &process_counts) */
		struct bpf_insn p[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.pc),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_MOV64_REG(BPF_REG_6, BPF_REG_0),
			PCPU_LD_KSYM(BPF_REG_1, id.num),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_MOV64_REG(BPF_REG_1, BPF_REG_0),
			BPF_MOV64_IMM(BPF_REG_2, 4),
			BPF_MOV64_IMM(BPF_REG_3, 0),
			BPF_MOV64_REG(BPF_REG_4, BPF_REG_6),
			BPF_EMIT_CALL(BPF_FUNC_strtol),
			BPF_MOV64_IMM(BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		EXPECT_REJECT(p, EACCES,
			      "R4 type=rdonly_mem expected=fp, pkt, pkt_meta, map_key, map_value, mem, alloc_mem, buf\n");
	}
	{
		/* strtol(cpu_number, 4, 0, stack) */
		struct bpf_insn p[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.num),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_MOV64_REG(BPF_REG_1, BPF_REG_0),
			BPF_MOV64_IMM(BPF_REG_2, 4),
			BPF_MOV64_IMM(BPF_REG_3, 0),
			BPF_MOV64_REG(BPF_REG_4, BPF_REG_10),
			BPF_ALU64_IMM(BPF_ADD, BPF_REG_4, -8),
			BPF_EMIT_CALL(BPF_FUNC_strtol),
			BPF_MOV64_IMM(BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		EXPECT_LOADS(p);
	}
	{
		/* strtol(cpu_number, 8, 0, stack): 8 bytes of 4 */
		struct bpf_insn p[] = {
			PCPU_LD_KSYM(BPF_REG_1, id.num),
			BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
			BPF_MOV64_REG(BPF_REG_1, BPF_REG_0),
			BPF_MOV64_IMM(BPF_REG_2, 8),
			BPF_MOV64_IMM(BPF_REG_3, 0),
			BPF_MOV64_REG(BPF_REG_4, BPF_REG_10),
			BPF_ALU64_IMM(BPF_ADD, BPF_REG_4, -8),
			BPF_EMIT_CALL(BPF_FUNC_strtol),
			BPF_MOV64_IMM(BPF_REG_0, 0),
			BPF_EXIT_INSN(),
		};
		EXPECT_REJECT(p, EACCES,
			      "invalid access to memory, mem_size=4 off=0 size=8\nR1 min value is outside of the allowed memory range");
	}
}

/* Root gets both helpers in a socket filter; uid 1000 and a user namespace's root do not. */
TEST(who_may_call)
{
	struct bpf_insn p[] = {
		BPF_MOV64_IMM(BPF_REG_1, 0),
		BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
		BPF_MOV64_IMM(BPF_REG_0, 0),
		BPF_EXIT_INSN(),
	};
	int fd, status;
	pid_t pid;

	/* root: the helper is known, the scalar argument is what fails */
	fd = pcpu_load(BPF_PROG_TYPE_SOCKET_FILTER, p, 4);
	EXPECT_EQ(-EACCES, fd);
	EXPECT_NE(NULL, strstr(pcpu_log, "R1 type=scalar expected=percpu_ptr_"))
		TH_LOG("%s", pcpu_log);

	ASSERT_EQ(0, ktest_write_str("/proc/sys/kernel/unprivileged_bpf_disabled", "0"));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		if (setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY))
			_exit(2);
		fd = pcpu_load(BPF_PROG_TYPE_SOCKET_FILTER, p, 4);
		if (fd != -EINVAL || !strstr(pcpu_log, "unknown func bpf_this_cpu_ptr#154")) {
			printf("# uid %d: %d %s\n", NOBODY, fd, pcpu_log);
			_exit(1);
		}
		p[1].imm = BPF_FUNC_per_cpu_ptr;
		fd = pcpu_load(BPF_PROG_TYPE_SOCKET_FILTER, p, 4);
		if (fd != -EINVAL || !strstr(pcpu_log, "unknown func bpf_per_cpu_ptr#153")) {
			printf("# uid %d: %d %s\n", NOBODY, fd, pcpu_log);
			_exit(1);
		}
		/* root of its own user namespace: no better */
		if (unshare(CLONE_NEWUSER))
			_exit(3);
		fd = pcpu_load(BPF_PROG_TYPE_SOCKET_FILTER, p, 4);
		if (fd != -EINVAL || !strstr(pcpu_log, "unknown func bpf_per_cpu_ptr#153")) {
			printf("# userns root: %d %s\n", fd, pcpu_log);
			_exit(1);
		}
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	ktest_write_str("/proc/sys/kernel/unprivileged_bpf_disabled", "2");
}

TEST_HARNESS_MAIN

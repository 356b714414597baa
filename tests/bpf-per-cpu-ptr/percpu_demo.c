// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_per_cpu_ptr() and bpf_this_cpu_ptr() at work: one raw BPF program on
 * two typed per-CPU ksyms of vmlinux (int cpu_number, each CPU's own number
 * on x86, and struct rq runqueues, whose member cpu is its CPU's number),
 * run through BPF_PROG_TEST_RUN on a CPU of our choice.  bpf_per_cpu_ptr()
 * gives the copy of the CPU asked for, whichever CPU runs the program, and
 * NULL past the last possible CPU; bpf_this_cpu_ptr() the running CPU's.
 * Every value printed is the program's; a wrong one prints "UNEXPECTED: ..."
 * and exits 1.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdarg.h>
#include <linux/kernel.h>
#include "pcpu_util.h"

struct demo_io {
	__u64 cpu;			/* in: the CPU for bpf_per_cpu_ptr() */
	__u64 ptr, num, rq_cpu;	/* bpf_per_cpu_ptr(): &cpu_number, cpu_number, rq.cpu */
	__u64 this_ptr, this_num, this_rq_cpu;	/* the same, bpf_this_cpu_ptr() */
};

#define IO(f) ((short)offsetof(struct demo_io, f))

static void __printf(1, 2) unexpected(const char *fmt, ...)
{
	va_list ap;

	printf("UNEXPECTED: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	exit(1);
}

/* The verifier's reason: its "unknown func" line, else its last line. */
static const char *log_reason(void)
{
	char *p = strstr(pcpu_log, "unknown func"), *e;

	if (!p) {
		e = pcpu_log + strlen(pcpu_log);
		while (e > pcpu_log && e[-1] == '\n')
			*--e = 0;
		p = strrchr(pcpu_log, '\n');
		p = p ? p + 1 : pcpu_log;
	}
	e = strchr(p, '\n');
	if (e)
		*e = 0;
	return p;
}

static int load(int num_id, int rq_id, int rq_cpu_off)
{
	struct bpf_insn p[] = {
		BPF_MOV64_REG(BPF_REG_6, BPF_REG_1),
		BPF_LDX_MEM(BPF_DW, BPF_REG_7, BPF_REG_6, IO(cpu)),
		/* r0 = bpf_per_cpu_ptr(&cpu_number, cpu), which may be NULL */
		PCPU_LD_KSYM(BPF_REG_1, num_id),
		BPF_MOV64_REG(BPF_REG_2, BPF_REG_7),
		BPF_EMIT_CALL(BPF_FUNC_per_cpu_ptr),
		BPF_STX_MEM(BPF_DW, BPF_REG_6, BPF_REG_0, IO(ptr)),
		BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 2),
		BPF_LDX_MEM(BPF_W, BPF_REG_1, BPF_REG_0, 0),
		BPF_STX_MEM(BPF_DW, BPF_REG_6, BPF_REG_1, IO(num)),
		/* r0 = bpf_per_cpu_ptr(&runqueues, cpu) */
		PCPU_LD_KSYM(BPF_REG_1, rq_id),
		BPF_MOV64_REG(BPF_REG_2, BPF_REG_7),
		BPF_EMIT_CALL(BPF_FUNC_per_cpu_ptr),
		BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 2),
		BPF_LDX_MEM(BPF_W, BPF_REG_1, BPF_REG_0, rq_cpu_off),
		BPF_STX_MEM(BPF_DW, BPF_REG_6, BPF_REG_1, IO(rq_cpu)),
		/* the same through bpf_this_cpu_ptr(), which is never NULL */
		PCPU_LD_KSYM(BPF_REG_1, num_id),
		BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
		BPF_STX_MEM(BPF_DW, BPF_REG_6, BPF_REG_0, IO(this_ptr)),
		BPF_LDX_MEM(BPF_W, BPF_REG_1, BPF_REG_0, 0),
		BPF_STX_MEM(BPF_DW, BPF_REG_6, BPF_REG_1, IO(this_num)),
		PCPU_LD_KSYM(BPF_REG_1, rq_id),
		BPF_EMIT_CALL(BPF_FUNC_this_cpu_ptr),
		BPF_LDX_MEM(BPF_W, BPF_REG_1, BPF_REG_0, rq_cpu_off),
		BPF_STX_MEM(BPF_DW, BPF_REG_6, BPF_REG_1, IO(this_rq_cpu)),
		BPF_MOV64_IMM(BPF_REG_0, 0),
		BPF_EXIT_INSN(),
	};

	return pcpu_load(BPF_PROG_TYPE_SYSCALL, p, ARRAY_SIZE(p));
}

static void pin(unsigned int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		unexpected("sched_setaffinity(CPU %u): %s", cpu, strerror(errno));
}

static void run(int fd, unsigned int cpu, struct demo_io *io)
{
	long ret;

	memset(io, 0xff, sizeof(*io));
	io->cpu = cpu;
	ret = pcpu_run(fd, io, sizeof(*io));
	if (ret)
		unexpected("BPF_PROG_TEST_RUN (cpu %u): %ld", cpu, ret);
}

int main(void)
{
	int num_id, rq_id, rq_cpu_off, fd;
	unsigned int nr, cpu, here;
	__u64 ptr[64];
	struct demo_io io;

	setvbuf(stdout, NULL, _IOLBF, 0);
	num_id = pcpu_var_id("cpu_number");
	rq_id = pcpu_var_id("runqueues");
	rq_cpu_off = pcpu_member_off("rq", "cpu");
	if (num_id <= 0 || rq_id <= 0 || rq_cpu_off <= 0)
		unexpected("cpu_number, runqueues or rq.cpu not in vmlinux BTF (%d %d %d)",
			   num_id, rq_id, rq_cpu_off);
	nr = pcpu_nr_cpu_ids();
	if (nr < 1 || nr > 64)
		unexpected("nr_cpu_ids %u (from /sys/devices/system/cpu/possible)", nr);
	if ((unsigned int)sysconf(_SC_NPROCESSORS_ONLN) != nr)
		unexpected("%ld CPUs online of %u possible", sysconf(_SC_NPROCESSORS_ONLN), nr);
	fd = load(num_id, rq_id, rq_cpu_off);
	if (fd < 0) {
		printf("UNEXPECTED: the program did not load (%s): %s\n", strerror(-fd),
		       log_reason());
		return 1;
	}

	here = nr - 1;
	pin(here);
	printf("bpf_per_cpu_ptr(&var, cpu): CPU cpu's copy, the program running on CPU %u\n",
	       here);
	for (cpu = 0; cpu <= nr; cpu++) {
		run(fd, cpu, &io);
		if (io.this_num != here)
			unexpected("run on CPU %u, this_cpu_ptr(&cpu_number) holds %llu", here,
				   (unsigned long long)io.this_num);
		if (cpu == nr) {
			if (io.ptr)
				unexpected("cpu %u = nr_cpu_ids gave %#llx, not NULL", cpu,
					   (unsigned long long)io.ptr);
			printf("  cpu %u: NULL (nr_cpu_ids is %u)\n", cpu, nr);
			break;
		}
		printf("  cpu %u: &cpu_number %#llx holds %llu, runqueues.cpu %llu\n", cpu,
		       (unsigned long long)io.ptr, (unsigned long long)io.num,
		       (unsigned long long)io.rq_cpu);
		if (!io.ptr || io.num != cpu || io.rq_cpu != cpu)
			unexpected("not CPU %u's copy", cpu);
		ptr[cpu] = io.ptr;
		if (cpu && ptr[cpu] == ptr[cpu - 1])
			unexpected("CPUs %u and %u share one copy", cpu - 1, cpu);
	}

	printf("bpf_this_cpu_ptr(&var): the running CPU's copy, the program pinned to each CPU\n");
	for (here = 0; here < nr; here++) {
		pin(here);
		run(fd, 0, &io);
		printf("  on CPU %u: &cpu_number %#llx holds %llu, runqueues.cpu %llu\n", here,
		       (unsigned long long)io.this_ptr, (unsigned long long)io.this_num,
		       (unsigned long long)io.this_rq_cpu);
		if (io.this_ptr != ptr[here] || io.this_num != here || io.this_rq_cpu != here)
			unexpected("not CPU %u's copy", here);
	}
	close(fd);
	return 0;
}

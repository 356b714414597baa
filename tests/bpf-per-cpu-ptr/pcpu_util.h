/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Raw BPF programs for bpf_per_cpu_ptr() / bpf_this_cpu_ptr() tests: BTF ids
 * of kernel variables (through libbpf's vmlinux BTF), a loader that keeps the
 * verifier's log, a runner for syscall programs (whose context comes back to
 * user space) and the bpf_jit_enable switch.
 */
#ifndef PCPU_UTIL_H
#define PCPU_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/filter.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "../file_util.h"

#define PCPU_LOG_SIZE 0x100000

static char pcpu_log[PCPU_LOG_SIZE];

static inline long pcpu_sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static struct btf *pcpu_btf;

static inline struct btf *pcpu_vmlinux(void)
{
	if (!pcpu_btf)
		pcpu_btf = btf__load_vmlinux_btf();
	return pcpu_btf && !libbpf_get_error(pcpu_btf) ? pcpu_btf : NULL;
}

/* The BTF id of the kernel variable @name, or -1. */
static inline int pcpu_var_id(const char *name)
{
	struct btf *btf = pcpu_vmlinux();

	return btf ? btf__find_by_name_kind(btf, name, BTF_KIND_VAR) : -1;
}

/* Byte offset of @member in struct @sname, or -1. */
static inline int pcpu_member_off(const char *sname, const char *member)
{
	struct btf *btf = pcpu_vmlinux();
	const struct btf_type *t;
	const struct btf_member *m;
	int id, i;

	if (!btf)
		return -1;
	id = btf__find_by_name_kind(btf, sname, BTF_KIND_STRUCT);
	if (id < 0)
		return -1;
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), member))
			return btf_member_bit_offset(t, i) / 8;
	return -1;
}

/* sizeof(struct @sname), or -1. */
static inline int pcpu_struct_size(const char *sname)
{
	struct btf *btf = pcpu_vmlinux();
	int id;

	if (!btf)
		return -1;
	id = btf__find_by_name_kind(btf, sname, BTF_KIND_STRUCT);
	return id < 0 ? -1 : btf__resolve_size(btf, id);
}

/* r<dst> = &<var> as a typed ksym (two instructions) */
#define PCPU_LD_KSYM(dst, btf_id) \
	BPF_LD_IMM64_RAW_FULL(dst, BPF_PSEUDO_BTF_ID, 0, 0, btf_id, 0)

/*
 * Load @n instructions as @type; returns the fd or -errno, with the
 * verifier's log in pcpu_log.  Syscall programs are loaded sleepable, as
 * they must be.
 */
static inline int pcpu_load(enum bpf_prog_type type, const struct bpf_insn *insns,
			    unsigned int n)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.insns = (unsigned long)insns;
	a.insn_cnt = n;
	a.license = (unsigned long)"GPL";
	a.log_buf = (unsigned long)pcpu_log;
	a.log_size = sizeof(pcpu_log);
	a.log_level = 1;
	if (type == BPF_PROG_TYPE_SYSCALL)
		a.prog_flags = BPF_F_SLEEPABLE;
	pcpu_log[0] = 0;
	fd = pcpu_sys_bpf(BPF_PROG_LOAD, &a);
	return fd < 0 ? -errno : fd;
}

/* Run a syscall program on @ctx (copied back); returns its r0 or -errno. */
static inline long pcpu_run(int fd, void *ctx, unsigned int size)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = fd;
	a.test.ctx_in = (unsigned long)ctx;
	a.test.ctx_size_in = size;
	if (pcpu_sys_bpf(BPF_PROG_TEST_RUN, &a))
		return -errno;
	return a.test.retval;
}

static inline int pcpu_set_jit(int on)
{
	return ktest_write_str("/proc/sys/net/core/bpf_jit_enable", on ? "1" : "0");
}

/* nr_cpu_ids: one past the last possible CPU */
static inline unsigned int pcpu_nr_cpu_ids(void)
{
	unsigned int a, b = 0;
	char buf[256], *p;
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return 0;
	}
	fclose(f);
	/* "0-3" or "0" or "0-1,4": the last number is the last CPU */
	for (p = buf; *p; p++) {
		if (*p < '0' || *p > '9')
			continue;
		a = strtoul(p, &p, 10);
		b = a;
		p--;
	}
	return b + 1;
}

#endif

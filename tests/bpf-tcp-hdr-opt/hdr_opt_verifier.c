// SPDX-License-Identifier: GPL-2.0
/*
 * Load-time rules of BPF TCP header options (patches/bpf-tcp-hdr-opt), with
 * raw programs through bpf(2), each compared with stock 6.1's answer (the
 * errno and the verifier's message):
 *
 * - sock_ops reads skb_data and skb_data_end as 8-byte pointers only,
 *   skb_len as a 4-byte value, skb_tcp_flags as 1, 2 or 4 bytes from its
 *   first byte; none of the four can be written; the packet behind
 *   skb_data can be read within skb_data_end, never written, and is not a
 *   helper's memory;
 * - bpf_load_hdr_opt(), bpf_store_hdr_opt() and bpf_reserve_hdr_opt() are
 *   sock_ops helpers (unknown to a socket filter, cgroup skb or sockopt
 *   program) with a context, initialized memory and a non-zero size;
 * - who may load and attach a sock_ops program: CAP_BPF and CAP_NET_ADMIN
 *   (or CAP_SYS_ADMIN); uid 1000, root of a user namespace, CAP_BPF alone
 *   and CAP_NET_ADMIN alone get -EPERM; what uid 1000 gets attaching a
 *   program it was handed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include "hdr_opt.h"
#include "kselftest_harness.h"

#define CG_ROOT "/tmp/hdr-opt-cgroup"
#define NOBODY 1000

static char vlog[1 << 16];

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* Load @n instructions as @type: the fd, or -errno with the log in vlog. */
static int load(enum bpf_prog_type type, enum bpf_attach_type eat,
		const struct bpf_insn *insns, unsigned int n)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.expected_attach_type = eat;
	a.insns = (unsigned long)insns;
	a.insn_cnt = n;
	a.license = (unsigned long)"GPL";
	a.log_buf = (unsigned long)vlog;
	a.log_size = sizeof(vlog);
	a.log_level = 1;
	vlog[0] = 0;
	fd = sys_bpf(BPF_PROG_LOAD, &a);
	return fd < 0 ? -errno : fd;
}

#define OFF(f) ((short)offsetof(struct bpf_sock_ops, f))
#define N(x) (sizeof(x) / sizeof((x)[0]))

/* r0 = 1; exit */
#define RET1 BPF_MOV64_IMM(BPF_REG_0, 1), BPF_EXIT_INSN()

struct vcase {
	const char *name;
	enum bpf_prog_type type;
	enum bpf_attach_type eat;
	const struct bpf_insn *insns;
	unsigned int n;
	int err;		/* 0: must load; else -errno */
	const char *msg;	/* in the verifier log of a rejection */
};

/* ------------------------------------------------------------ accepted */

static const struct bpf_insn ok_ptrs[] = {
	BPF_LDX_MEM(BPF_DW, BPF_REG_2, BPF_REG_1, OFF(skb_data)),
	BPF_LDX_MEM(BPF_DW, BPF_REG_3, BPF_REG_1, OFF(skb_data_end)),
	RET1,
};

static const struct bpf_insn ok_len_flags[] = {
	BPF_LDX_MEM(BPF_W, BPF_REG_2, BPF_REG_1, OFF(skb_len)),
	BPF_LDX_MEM(BPF_W, BPF_REG_3, BPF_REG_1, OFF(skb_tcp_flags)),
	BPF_LDX_MEM(BPF_H, BPF_REG_4, BPF_REG_1, OFF(skb_tcp_flags)),
	BPF_LDX_MEM(BPF_B, BPF_REG_5, BPF_REG_1, OFF(skb_tcp_flags)),
	RET1,
};

/* read the TCP flags byte within skb_data_end */
static const struct bpf_insn ok_pkt_read[] = {
	BPF_LDX_MEM(BPF_DW, BPF_REG_2, BPF_REG_1, OFF(skb_data)),
	BPF_LDX_MEM(BPF_DW, BPF_REG_3, BPF_REG_1, OFF(skb_data_end)),
	BPF_MOV64_REG(BPF_REG_4, BPF_REG_2),
	BPF_ALU64_IMM(BPF_ADD, BPF_REG_4, 20),
	BPF_JMP_REG(BPF_JGT, BPF_REG_4, BPF_REG_3, 1),
	BPF_LDX_MEM(BPF_B, BPF_REG_5, BPF_REG_2, 13),
	RET1,
};

/* the three helpers, with an initialized 8-byte stack buffer */
static const struct bpf_insn ok_helpers[] = {
	BPF_MOV64_REG(BPF_REG_6, BPF_REG_1),
	BPF_ST_MEM(BPF_DW, BPF_REG_10, -8, 0x04b9),
	BPF_MOV64_REG(BPF_REG_1, BPF_REG_6),
	BPF_MOV64_REG(BPF_REG_2, BPF_REG_10),
	BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -8),
	BPF_MOV64_IMM(BPF_REG_3, 8),
	BPF_MOV64_IMM(BPF_REG_4, 0),
	BPF_EMIT_CALL(BPF_FUNC_load_hdr_opt),
	BPF_MOV64_REG(BPF_REG_1, BPF_REG_6),
	BPF_MOV64_REG(BPF_REG_2, BPF_REG_10),
	BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -8),
	BPF_MOV64_IMM(BPF_REG_3, 4),
	BPF_MOV64_IMM(BPF_REG_4, 0),
	BPF_EMIT_CALL(BPF_FUNC_store_hdr_opt),
	BPF_MOV64_REG(BPF_REG_1, BPF_REG_6),
	BPF_MOV64_IMM(BPF_REG_2, 4),
	BPF_MOV64_IMM(BPF_REG_3, 0),
	BPF_EMIT_CALL(BPF_FUNC_reserve_hdr_opt),
	RET1,
};

/* ------------------------------------------------------------ rejected */

#define CTX_LD(name, size, off) \
static const struct bpf_insn name[] = { \
	BPF_LDX_MEM(size, BPF_REG_2, BPF_REG_1, off), RET1, }

CTX_LD(ld_data_w, BPF_W, OFF(skb_data));
CTX_LD(ld_data_hi_w, BPF_W, OFF(skb_data) + 4);
CTX_LD(ld_data_end_w, BPF_W, OFF(skb_data_end));
CTX_LD(ld_data_end_h, BPF_H, OFF(skb_data_end));
CTX_LD(ld_len_dw, BPF_DW, OFF(skb_len));
CTX_LD(ld_len_b, BPF_B, OFF(skb_len));
CTX_LD(ld_len_h, BPF_H, OFF(skb_len));
CTX_LD(ld_flags_dw, BPF_DW, OFF(skb_tcp_flags));
CTX_LD(ld_flags_b1, BPF_B, OFF(skb_tcp_flags) + 1);
CTX_LD(ld_flags_h2, BPF_H, OFF(skb_tcp_flags) + 2);
CTX_LD(ld_past_end, BPF_W, sizeof(struct bpf_sock_ops));

static const struct bpf_insn st_data[] = {
	BPF_STX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, OFF(skb_data)),
	RET1,
};

static const struct bpf_insn st_data_end[] = {
	BPF_MOV64_IMM(BPF_REG_2, 0),
	BPF_STX_MEM(BPF_DW, BPF_REG_1, BPF_REG_2, OFF(skb_data_end)),
	RET1,
};

static const struct bpf_insn st_len[] = {
	BPF_MOV64_IMM(BPF_REG_2, 0),
	BPF_STX_MEM(BPF_W, BPF_REG_1, BPF_REG_2, OFF(skb_len)),
	RET1,
};

static const struct bpf_insn st_flags[] = {
	BPF_MOV64_IMM(BPF_REG_2, 2),
	BPF_STX_MEM(BPF_W, BPF_REG_1, BPF_REG_2, OFF(skb_tcp_flags)),
	RET1,
};

/* the flags byte read with no check against skb_data_end */
static const struct bpf_insn pkt_unchecked[] = {
	BPF_LDX_MEM(BPF_DW, BPF_REG_2, BPF_REG_1, OFF(skb_data)),
	BPF_LDX_MEM(BPF_B, BPF_REG_5, BPF_REG_2, 13),
	RET1,
};

/* a checked write into the header */
static const struct bpf_insn pkt_write[] = {
	BPF_LDX_MEM(BPF_DW, BPF_REG_2, BPF_REG_1, OFF(skb_data)),
	BPF_LDX_MEM(BPF_DW, BPF_REG_3, BPF_REG_1, OFF(skb_data_end)),
	BPF_MOV64_REG(BPF_REG_4, BPF_REG_2),
	BPF_ALU64_IMM(BPF_ADD, BPF_REG_4, 20),
	BPF_JMP_REG(BPF_JGT, BPF_REG_4, BPF_REG_3, 1),
	BPF_ST_MEM(BPF_B, BPF_REG_2, 13, 0),
	RET1,
};

/* bpf_store_hdr_opt() from the packet itself (checked) */
static const struct bpf_insn store_from_pkt[] = {
	BPF_LDX_MEM(BPF_DW, BPF_REG_2, BPF_REG_1, OFF(skb_data)),
	BPF_LDX_MEM(BPF_DW, BPF_REG_3, BPF_REG_1, OFF(skb_data_end)),
	BPF_MOV64_REG(BPF_REG_4, BPF_REG_2),
	BPF_ALU64_IMM(BPF_ADD, BPF_REG_4, 20),
	BPF_JMP_REG(BPF_JGT, BPF_REG_4, BPF_REG_3, 4),
	BPF_MOV64_IMM(BPF_REG_3, 4),
	BPF_MOV64_IMM(BPF_REG_4, 0),
	BPF_EMIT_CALL(BPF_FUNC_store_hdr_opt),
	BPF_EXIT_INSN(),
	RET1,
};

/* bpf_store_hdr_opt() from stack nobody wrote (privileged: allowed) */
static const struct bpf_insn store_uninit[] = {
	BPF_MOV64_REG(BPF_REG_2, BPF_REG_10),
	BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -8),
	BPF_MOV64_IMM(BPF_REG_3, 4),
	BPF_MOV64_IMM(BPF_REG_4, 0),
	BPF_EMIT_CALL(BPF_FUNC_store_hdr_opt),
	RET1,
};

/* bpf_load_hdr_opt() with a zero size */
static const struct bpf_insn load_zero[] = {
	BPF_ST_MEM(BPF_DW, BPF_REG_10, -8, 0),
	BPF_MOV64_REG(BPF_REG_2, BPF_REG_10),
	BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -8),
	BPF_MOV64_IMM(BPF_REG_3, 0),
	BPF_MOV64_IMM(BPF_REG_4, 0),
	BPF_EMIT_CALL(BPF_FUNC_load_hdr_opt),
	RET1,
};

/* bpf_load_hdr_opt() with a size beyond its 8-byte buffer */
static const struct bpf_insn load_oversize[] = {
	BPF_ST_MEM(BPF_DW, BPF_REG_10, -8, 0),
	BPF_MOV64_REG(BPF_REG_2, BPF_REG_10),
	BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -8),
	BPF_MOV64_IMM(BPF_REG_3, 16),
	BPF_MOV64_IMM(BPF_REG_4, 0),
	BPF_EMIT_CALL(BPF_FUNC_load_hdr_opt),
	RET1,
};

/* bpf_reserve_hdr_opt() with the stack, not the context */
static const struct bpf_insn reserve_no_ctx[] = {
	BPF_MOV64_REG(BPF_REG_1, BPF_REG_10),
	BPF_MOV64_IMM(BPF_REG_2, 4),
	BPF_MOV64_IMM(BPF_REG_3, 0),
	BPF_EMIT_CALL(BPF_FUNC_reserve_hdr_opt),
	RET1,
};

#define CALL_ONLY(name, fn) \
static const struct bpf_insn name[] = { \
	BPF_ST_MEM(BPF_DW, BPF_REG_10, -8, 0x04b9), \
	BPF_MOV64_REG(BPF_REG_2, BPF_REG_10), \
	BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -8), \
	BPF_MOV64_IMM(BPF_REG_3, 8), \
	BPF_MOV64_IMM(BPF_REG_4, 0), \
	BPF_EMIT_CALL(fn), \
	RET1, }

CALL_ONLY(call_load, BPF_FUNC_load_hdr_opt);
CALL_ONLY(call_store, BPF_FUNC_store_hdr_opt);
CALL_ONLY(call_reserve, BPF_FUNC_reserve_hdr_opt);

static char m[16][64];

static const struct vcase cases[] = {
	{ "sock_ops reads skb_data and skb_data_end (8 bytes)", BPF_PROG_TYPE_SOCK_OPS, 0, ok_ptrs, N(ok_ptrs), 0 },
	{ "sock_ops reads skb_len (4), skb_tcp_flags (4, 2, 1)", BPF_PROG_TYPE_SOCK_OPS, 0, ok_len_flags, N(ok_len_flags), 0 },
	{ "sock_ops reads the packet within skb_data_end", BPF_PROG_TYPE_SOCK_OPS, 0, ok_pkt_read, N(ok_pkt_read), 0 },
	{ "sock_ops calls the three helpers", BPF_PROG_TYPE_SOCK_OPS, 0, ok_helpers, N(ok_helpers), 0 },
	{ "4-byte read of skb_data", BPF_PROG_TYPE_SOCK_OPS, 0, ld_data_w, N(ld_data_w), -EACCES, m[0] },
	{ "4-byte read of skb_data's upper half", BPF_PROG_TYPE_SOCK_OPS, 0, ld_data_hi_w, N(ld_data_hi_w), -EACCES, m[1] },
	{ "4-byte read of skb_data_end", BPF_PROG_TYPE_SOCK_OPS, 0, ld_data_end_w, N(ld_data_end_w), -EACCES, m[2] },
	{ "2-byte read of skb_data_end", BPF_PROG_TYPE_SOCK_OPS, 0, ld_data_end_h, N(ld_data_end_h), -EACCES, m[3] },
	{ "8-byte read of skb_len", BPF_PROG_TYPE_SOCK_OPS, 0, ld_len_dw, N(ld_len_dw), -EACCES, m[4] },
	{ "1-byte read of skb_len", BPF_PROG_TYPE_SOCK_OPS, 0, ld_len_b, N(ld_len_b), -EACCES, m[5] },
	{ "2-byte read of skb_len", BPF_PROG_TYPE_SOCK_OPS, 0, ld_len_h, N(ld_len_h), -EACCES, m[6] },
	{ "8-byte read of skb_tcp_flags", BPF_PROG_TYPE_SOCK_OPS, 0, ld_flags_dw, N(ld_flags_dw), -EACCES, m[7] },
	{ "1-byte read of skb_tcp_flags' second byte", BPF_PROG_TYPE_SOCK_OPS, 0, ld_flags_b1, N(ld_flags_b1), -EACCES, m[8] },
	{ "2-byte read of skb_tcp_flags' upper half", BPF_PROG_TYPE_SOCK_OPS, 0, ld_flags_h2, N(ld_flags_h2), -EACCES, m[9] },
	{ "read past struct bpf_sock_ops", BPF_PROG_TYPE_SOCK_OPS, 0, ld_past_end, N(ld_past_end), -EACCES, m[10] },
	{ "write skb_data", BPF_PROG_TYPE_SOCK_OPS, 0, st_data, N(st_data), -EACCES, m[11] },
	{ "write skb_data_end", BPF_PROG_TYPE_SOCK_OPS, 0, st_data_end, N(st_data_end), -EACCES, m[12] },
	{ "write skb_len", BPF_PROG_TYPE_SOCK_OPS, 0, st_len, N(st_len), -EACCES, m[13] },
	{ "write skb_tcp_flags", BPF_PROG_TYPE_SOCK_OPS, 0, st_flags, N(st_flags), -EACCES, m[14] },
	{ "packet read without a check against skb_data_end", BPF_PROG_TYPE_SOCK_OPS, 0, pkt_unchecked, N(pkt_unchecked), -EACCES, "invalid access to packet, off=13 size=1" },
	{ "packet write", BPF_PROG_TYPE_SOCK_OPS, 0, pkt_write, N(pkt_write), -EACCES, "cannot write into packet" },
	{ "bpf_store_hdr_opt() from the packet", BPF_PROG_TYPE_SOCK_OPS, 0, store_from_pkt, N(store_from_pkt), -EACCES, "helper access to the packet is not allowed" },
	{ "bpf_store_hdr_opt() from uninitialized stack", BPF_PROG_TYPE_SOCK_OPS, 0, store_uninit, N(store_uninit), 0 },
	{ "bpf_load_hdr_opt() with size 0", BPF_PROG_TYPE_SOCK_OPS, 0, load_zero, N(load_zero), -EACCES, "invalid zero-sized read" },
	{ "bpf_load_hdr_opt() beyond its buffer", BPF_PROG_TYPE_SOCK_OPS, 0, load_oversize, N(load_oversize), -EINVAL, "invalid indirect access to stack R2 off=-8 size=16" },
	{ "bpf_reserve_hdr_opt() without the context", BPF_PROG_TYPE_SOCK_OPS, 0, reserve_no_ctx, N(reserve_no_ctx), -EACCES, "R1 type=fp expected=ctx" },
	{ "bpf_load_hdr_opt() in a socket filter", BPF_PROG_TYPE_SOCKET_FILTER, 0, call_load, N(call_load), -EINVAL, "unknown func bpf_load_hdr_opt#142" },
	{ "bpf_store_hdr_opt() in a socket filter", BPF_PROG_TYPE_SOCKET_FILTER, 0, call_store, N(call_store), -EINVAL, "unknown func bpf_store_hdr_opt#143" },
	{ "bpf_reserve_hdr_opt() in a socket filter", BPF_PROG_TYPE_SOCKET_FILTER, 0, call_reserve, N(call_reserve), -EINVAL, "unknown func bpf_reserve_hdr_opt#144" },
	{ "bpf_load_hdr_opt() in a cgroup skb program", BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_EGRESS, call_load, N(call_load), -EINVAL, "unknown func bpf_load_hdr_opt#142" },
	{ "bpf_store_hdr_opt() in a cgroup skb program", BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_EGRESS, call_store, N(call_store), -EINVAL, "unknown func bpf_store_hdr_opt#143" },
	{ "bpf_reserve_hdr_opt() in a cgroup sockopt program", BPF_PROG_TYPE_CGROUP_SOCKOPT, BPF_CGROUP_GETSOCKOPT, call_reserve, N(call_reserve), -EINVAL, "unknown func bpf_reserve_hdr_opt#144" },
	{ "bpf_load_hdr_opt() in a cgroup sock_addr program", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET4_CONNECT, call_load, N(call_load), -EINVAL, "unknown func bpf_load_hdr_opt#142" },
};

static void fill_ctx_msgs(void)
{
	static const struct { int i; short off; int size; } c[] = {
		{ 0, OFF(skb_data), 4 }, { 1, OFF(skb_data) + 4, 4 },
		{ 2, OFF(skb_data_end), 4 }, { 3, OFF(skb_data_end), 2 },
		{ 4, OFF(skb_len), 8 }, { 5, OFF(skb_len), 1 }, { 6, OFF(skb_len), 2 },
		{ 7, OFF(skb_tcp_flags), 8 }, { 8, OFF(skb_tcp_flags) + 1, 1 },
		{ 9, OFF(skb_tcp_flags) + 2, 2 },
		{ 10, sizeof(struct bpf_sock_ops), 4 },
		{ 11, OFF(skb_data), 8 }, { 12, OFF(skb_data_end), 8 },
		{ 13, OFF(skb_len), 4 }, { 14, OFF(skb_tcp_flags), 4 },
	};
	unsigned int i;

	for (i = 0; i < N(c); i++)
		snprintf(m[c[i].i], sizeof(m[0]), "invalid bpf_context access off=%d size=%d",
			 c[i].off, c[i].size);
}

TEST(verifier)
{
	unsigned int i;
	int fd, failed = 0;

	fill_ctx_msgs();
	for (i = 0; i < N(cases); i++) {
		const struct vcase *c = &cases[i];

		fd = load(c->type, c->eat, c->insns, c->n);
		if (fd >= 0)
			close(fd);
		if (c->err == 0 && fd < 0) {
			failed++;
			TH_LOG("%s: rejected (%s), stock loads it:\n%s", c->name,
			       strerror(-fd), vlog);
		} else if (c->err && fd != c->err) {
			failed++;
			TH_LOG("%s: %s, stock: %s\n%s", c->name,
			       fd < 0 ? strerror(-fd) : "loaded", strerror(-c->err), vlog);
		} else if (c->err && !strstr(vlog, c->msg)) {
			failed++;
			TH_LOG("%s: stock's message \"%s\" not in the log:\n%s", c->name,
			       c->msg, vlog);
		} else {
			printf("# ok: %s\n", c->name);
		}
	}
	EXPECT_EQ(0, failed);
}

/* ------------------------------------------------------------ privileges */

struct caps {
	__u64 eff;
};

static int set_caps(__u64 caps)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};

	d[0].effective = d[0].permitted = (__u32)caps;
	d[1].effective = d[1].permitted = (__u32)(caps >> 32);
	return syscall(__NR_capset, &h, d) ? -errno : 0;
}

#define CAPB(c) (1ULL << (c))

static const struct bpf_insn simple[] = { RET1 };

/* Run @fn in a child with @how; its result comes back as the exit status. */
static int in_child(int how, __u64 caps, int (*fn)(void *), void *arg)
{
	int status, pipefd[2], r = 0;
	pid_t pid;

	if (pipe(pipefd))
		return -1000;
	pid = fork();
	if (pid == 0) {
		close(pipefd[0]);
		if (how == 1 || how == 2) {
			/* uid 1000, no capabilities left */
			if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
			    setresuid(NOBODY, NOBODY, NOBODY))
				r = -2000;
			if (!r && how == 2 && unshare(CLONE_NEWUSER))
				r = -3000;
		} else if (how == 3) {
			if (set_caps(caps))
				r = -4000;
		}
		if (!r)
			r = fn(arg);
		if (write(pipefd[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(pipefd[1]);
	if (read(pipefd[0], &r, sizeof(r)) != sizeof(r))
		r = -5000;
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	return r;
}

static int try_load(void *arg)
{
	int fd = load(BPF_PROG_TYPE_SOCK_OPS, 0, simple, N(simple));

	(void)arg;
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return fd;
}

/* load as a socket filter (any user may) a program calling a sock_ops helper */
static int try_filter_with_helper(void *arg)
{
	int fd = load(BPF_PROG_TYPE_SOCKET_FILTER, 0, call_load, N(call_load));

	(void)arg;
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return fd;
}

TEST(load_uid1000)
{
	EXPECT_EQ(-EPERM, in_child(1, 0, try_load, NULL));
}

TEST(load_userns_root)
{
	EXPECT_EQ(-EPERM, in_child(2, 0, try_load, NULL));
}

TEST(load_cap_bpf_only)
{
	EXPECT_EQ(-EPERM, in_child(3, CAPB(CAP_BPF), try_load, NULL));
}

TEST(load_cap_net_admin_only)
{
	EXPECT_EQ(-EPERM, in_child(3, CAPB(CAP_NET_ADMIN), try_load, NULL));
}

TEST(load_cap_bpf_and_net_admin)
{
	EXPECT_EQ(0, in_child(3, CAPB(CAP_BPF) | CAPB(CAP_NET_ADMIN), try_load, NULL));
}

TEST(load_cap_sys_admin)
{
	EXPECT_EQ(0, in_child(3, CAPB(CAP_SYS_ADMIN), try_load, NULL));
}

TEST(uid1000_socket_filter_calling_a_sock_ops_helper)
{
	int r = in_child(1, 0, try_filter_with_helper, NULL);

	EXPECT_EQ(-EINVAL, r);
}

struct attach_arg {
	int prog, cg;
	int link;	/* BPF_LINK_CREATE, else BPF_PROG_ATTACH */
};

static int try_attach(void *p)
{
	struct attach_arg *a = p;
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	if (a->link) {
		attr.link_create.prog_fd = a->prog;
		attr.link_create.target_fd = a->cg;
		attr.link_create.attach_type = BPF_CGROUP_SOCK_OPS;
		fd = sys_bpf(BPF_LINK_CREATE, &attr);
		if (fd < 0)
			return -errno;
		close(fd);
		return 0;
	}
	attr.target_fd = a->cg;
	attr.attach_bpf_fd = a->prog;
	attr.attach_type = BPF_CGROUP_SOCK_OPS;
	attr.attach_flags = BPF_F_ALLOW_MULTI;
	if (sys_bpf(BPF_PROG_ATTACH, &attr))
		return -errno;
	memset(&attr, 0, sizeof(attr));
	attr.target_fd = a->cg;
	attr.attach_bpf_fd = a->prog;
	attr.attach_type = BPF_CGROUP_SOCK_OPS;
	if (sys_bpf(BPF_PROG_DETACH, &attr))
		return -errno;
	return 0;
}

static int cgroup_dir(const char *name)
{
	char p[128];

	mkdir(CG_ROOT, 0755);
	mount("none", CG_ROOT, "cgroup2", 0, NULL);
	snprintf(p, sizeof(p), "%s/%s-%d", CG_ROOT, name, getpid());
	mkdir(p, 0755);
	return open(p, O_RDONLY | O_DIRECTORY);
}

/*
 * uid 1000 handed a loaded sock_ops program and a cgroup's fd: 6.1 checks
 * no capability when attaching a sock_ops program (the fds are the
 * permission), so this pins stock's answer rather than a rule of ours.
 */
TEST(uid1000_attach_given_fds)
{
	struct attach_arg a = {};

	a.prog = load(BPF_PROG_TYPE_SOCK_OPS, 0, ok_helpers, N(ok_helpers));
	ASSERT_LE(0, a.prog) TH_LOG("%s", vlog);
	a.cg = cgroup_dir("perm");
	ASSERT_LE(0, a.cg);
	EXPECT_EQ(0, in_child(1, 0, try_attach, &a));
	a.link = 1;
	EXPECT_EQ(0, in_child(1, 0, try_attach, &a));
	close(a.prog);
	close(a.cg);
}

TEST_HARNESS_MAIN

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
 *   program) taking the context, memory within bounds and a non-zero size;
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

/*
 * One test per program: loads (err 0), or is rejected with -err and, in the
 * log, @msg or (for the context accesses) stock's "invalid bpf_context
 * access" line for @off and @size.
 */
FIXTURE(verifier) {
	int unused;
};

FIXTURE_VARIANT(verifier) {
	enum bpf_prog_type type;
	enum bpf_attach_type eat;
	const struct bpf_insn *insns;
	unsigned int n;
	int err;
	const char *msg;
	int off, size;
};

FIXTURE_SETUP(verifier)
{
}

FIXTURE_TEARDOWN(verifier)
{
}

#define OK(name, t, ins) \
	FIXTURE_VARIANT_ADD(verifier, name) { .type = t, .insns = ins, .n = N(ins) }
#define CTX(name, ins, o, sz) \
	FIXTURE_VARIANT_ADD(verifier, name) { .type = BPF_PROG_TYPE_SOCK_OPS, \
		.insns = ins, .n = N(ins), .err = -EACCES, .off = o, .size = sz }
#define REJ(name, t, e, ins, er, m) \
	FIXTURE_VARIANT_ADD(verifier, name) { .type = t, .eat = e, .insns = ins, \
		.n = N(ins), .err = er, .msg = m }

OK(read_skb_data_and_end_8, BPF_PROG_TYPE_SOCK_OPS, ok_ptrs);
OK(read_skb_len_4_tcp_flags_4_2_1, BPF_PROG_TYPE_SOCK_OPS, ok_len_flags);
OK(read_packet_within_skb_data_end, BPF_PROG_TYPE_SOCK_OPS, ok_pkt_read);
OK(call_the_three_helpers, BPF_PROG_TYPE_SOCK_OPS, ok_helpers);
/* privileged programs may pass stack nobody wrote */
OK(store_from_uninitialized_stack, BPF_PROG_TYPE_SOCK_OPS, store_uninit);
CTX(read_skb_data_4, ld_data_w, OFF(skb_data), 4);
CTX(read_skb_data_upper_4, ld_data_hi_w, OFF(skb_data) + 4, 4);
CTX(read_skb_data_end_4, ld_data_end_w, OFF(skb_data_end), 4);
CTX(read_skb_data_end_2, ld_data_end_h, OFF(skb_data_end), 2);
CTX(read_skb_len_8, ld_len_dw, OFF(skb_len), 8);
CTX(read_skb_len_1, ld_len_b, OFF(skb_len), 1);
CTX(read_skb_len_2, ld_len_h, OFF(skb_len), 2);
CTX(read_skb_tcp_flags_8, ld_flags_dw, OFF(skb_tcp_flags), 8);
CTX(read_skb_tcp_flags_second_byte, ld_flags_b1, OFF(skb_tcp_flags) + 1, 1);
CTX(read_skb_tcp_flags_upper_2, ld_flags_h2, OFF(skb_tcp_flags) + 2, 2);
CTX(read_past_bpf_sock_ops, ld_past_end, sizeof(struct bpf_sock_ops), 4);
CTX(write_skb_data, st_data, OFF(skb_data), 8);
CTX(write_skb_data_end, st_data_end, OFF(skb_data_end), 8);
CTX(write_skb_len, st_len, OFF(skb_len), 4);
CTX(write_skb_tcp_flags, st_flags, OFF(skb_tcp_flags), 4);
REJ(read_packet_unchecked, BPF_PROG_TYPE_SOCK_OPS, 0, pkt_unchecked, -EACCES,
    "invalid access to packet, off=13 size=1");
REJ(write_packet, BPF_PROG_TYPE_SOCK_OPS, 0, pkt_write, -EACCES, "cannot write into packet");
REJ(store_from_packet, BPF_PROG_TYPE_SOCK_OPS, 0, store_from_pkt, -EACCES,
    "helper access to the packet is not allowed");
REJ(load_size_0, BPF_PROG_TYPE_SOCK_OPS, 0, load_zero, -EACCES, "invalid zero-sized read");
REJ(load_beyond_buffer, BPF_PROG_TYPE_SOCK_OPS, 0, load_oversize, -EINVAL,
    "invalid indirect access to stack R2 off=-8 size=16");
REJ(reserve_without_ctx, BPF_PROG_TYPE_SOCK_OPS, 0, reserve_no_ctx, -EACCES,
    "R1 type=fp expected=ctx");
REJ(load_in_socket_filter, BPF_PROG_TYPE_SOCKET_FILTER, 0, call_load, -EINVAL,
    "unknown func bpf_load_hdr_opt#142");
REJ(store_in_socket_filter, BPF_PROG_TYPE_SOCKET_FILTER, 0, call_store, -EINVAL,
    "unknown func bpf_store_hdr_opt#143");
REJ(reserve_in_socket_filter, BPF_PROG_TYPE_SOCKET_FILTER, 0, call_reserve, -EINVAL,
    "unknown func bpf_reserve_hdr_opt#144");
REJ(load_in_cgroup_skb, BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_EGRESS, call_load, -EINVAL,
    "unknown func bpf_load_hdr_opt#142");
REJ(store_in_cgroup_skb, BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_EGRESS, call_store, -EINVAL,
    "unknown func bpf_store_hdr_opt#143");
REJ(reserve_in_cgroup_sockopt, BPF_PROG_TYPE_CGROUP_SOCKOPT, BPF_CGROUP_GETSOCKOPT, call_reserve,
    -EINVAL, "unknown func bpf_reserve_hdr_opt#144");
REJ(load_in_cgroup_sock_addr, BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET4_CONNECT, call_load,
    -EINVAL, "unknown func bpf_load_hdr_opt#142");

TEST_F(verifier, load)
{
	char msg[80];
	int fd;

	(void)self;
	fd = load(variant->type, variant->eat, variant->insns, variant->n);
	if (fd >= 0)
		close(fd);
	if (!variant->err) {
		ASSERT_LE(0, fd) TH_LOG("rejected (%s), stock loads it:\n%s", strerror(-fd), vlog);
		return;
	}
	ASSERT_EQ(variant->err, fd) TH_LOG("%s, stock: %s\n%s", fd < 0 ? strerror(-fd) : "loaded",
					   strerror(-variant->err), vlog);
	if (variant->msg)
		snprintf(msg, sizeof(msg), "%s", variant->msg);
	else
		snprintf(msg, sizeof(msg), "invalid bpf_context access off=%d size=%d",
			 variant->off, variant->size);
	EXPECT_NE(NULL, strstr(vlog, msg)) TH_LOG("stock's \"%s\" not in the log:\n%s", msg, vlog);
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

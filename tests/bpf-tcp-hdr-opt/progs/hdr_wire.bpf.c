// SPDX-License-Identifier: GPL-2.0
/*
 * sock_ops programs whose options the tests look for on the wire:
 *
 * wire	       one option on every packet of both sides, carrying the
 *	       tcp_flags the program saw when it reserved and when it wrote;
 *	       what the other side found of it, the args[0] of every call.
 * mtu	       reserves m_reserve bytes on every segment (and for
 *	       tcp_current_mss()), after a reservation that cannot fit.
 * nest_child, nest_parent
 *	       two programs of nested cgroups, 4 bytes each.
 * pmode       the active side writes an unknown option on 11-byte sends and
 *	       a known one (kind 34, TCP Fast Open, empty: ignored outside a
 *	       SYN) on 13-byte sends; the passive side counts its parse calls.
 * drop, drop_in
 *	       cgroup_skb egress / ingress: drops the first packets with d_flags
 *	       and keeps their options.
 */
#include <stddef.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/tcp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "../hdr_opt.h"

#ifndef SOL_TCP
#define SOL_TCP 6
#endif
#define TCP_SAVE_SYN 27

#define HDR_CB_FLAGS (BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG | \
		      BPF_SOCK_OPS_PARSE_UNKNOWN_HDR_OPT_CB_FLAG)

/* first line of an unexpected observation, for the test's log */
unsigned int bad_line;
#define BAD() do { if (!bad_line) bad_line = __LINE__; } while (0)

static int side_of(struct bpf_sock_ops *skops)
{
	return skops->local_port == SRV_PORT ? SIDE_PASSIVE : SIDE_ACTIVE;
}

static int ours(struct bpf_sock_ops *skops)
{
	return skops->local_port == SRV_PORT ||
	       skops->remote_port == bpf_htonl(SRV_PORT);
}

static int class_of(struct bpf_sock_ops *skops)
{
	__u32 f = skops->skb_tcp_flags;

	if (skops->args[0] == BPF_WRITE_HDR_TCP_CURRENT_MSS)
		return CL_NOSKB;
	if (f & TCPF_SYN)
		return (f & TCPF_ACK) ? CL_SYNACK : CL_SYN;
	return CL_OTHER;
}

/* payload bytes of the packet in skb_data, or -1 */
static int payload_of(struct bpf_sock_ops *skops)
{
	struct tcphdr *th = skops->skb_data;

	if ((void *)(th + 1) > skops->skb_data_end)
		return -1;
	return skops->skb_len - th->doff * 4;
}

static int fin_of(struct bpf_sock_ops *skops)
{
	struct tcphdr *th = skops->skb_data;

	if ((void *)(th + 1) > skops->skb_data_end)
		return 0;
	return th->fin;
}

/* ------------------------------------------------------------------ wire */
unsigned char w_kind = 0xB7;	/* KIND_EXP: experimental, magic eb9f */
unsigned char w_len = 6;	/* the option's kind-length (<= 8) */
unsigned char w_reserve = 6;
unsigned char w_ret_len = 1;	/* the program's return value in HDR_OPT_LEN_CB */
unsigned char w_ret_write = 1;	/* ... and in WRITE_HDR_OPT_CB */
unsigned char w_save_syn;
unsigned int w_flags = HDR_CB_FLAGS;

unsigned char last_len_flags[2];
struct opt_rec syn_in;		/* passive: the SYN, seen writing the first SYN-ACK */
struct opt_rec synack_syn[4];	/* passive: load(TCP_SYN) at each SYN-ACK */
struct opt_rec synack_in;	/* active: the SYN-ACK (ACTIVE_ESTABLISHED_CB) */
struct opt_rec ack_in;		/* passive: the ACK (PASSIVE_ESTABLISHED_CB) */
struct opt_rec data_in[2];	/* per side: the last data segment parsed */
struct opt_rec fin_in[2];	/* per side: the FIN parsed */
unsigned int len_calls[2][NR_CL];
unsigned int write_calls[2][NR_CL];
int store_ret[2][NR_CL];
unsigned int args_len[NR_CL][3];	/* args[0] 0, 1, 2 in HDR_OPT_LEN_CB */
unsigned int args_write[NR_CL][3];
unsigned int noskb_bad;
unsigned int passive_estab_flags;
unsigned int parse_calls[2];

static void search_key(unsigned char *b)
{
	int i;

	for (i = 0; i < 8; i++)
		b[i] = 0;
	b[0] = w_kind;
	if (w_kind == KIND_EXP) {
		b[1] = 4;
		b[2] = EXP_MAGIC0;
		b[3] = EXP_MAGIC1;
	}
}

static void load_into(struct bpf_sock_ops *skops, struct opt_rec *r, __u64 flags)
{
	unsigned char b[8];
	int i;

	search_key(b);
	r->ret = bpf_load_hdr_opt(skops, b, 8, flags);
	for (i = 0; i < 8; i++)
		r->data[i] = b[i];
	r->n++;
}

static void count_arg(unsigned int (*a)[3], int cl, __u32 arg)
{
	if (cl < 0 || cl >= NR_CL)
		return;
	__sync_fetch_and_add(&a[cl][arg > 2 ? 2 : arg], 1);
}

static int wire_len(struct bpf_sock_ops *skops)
{
	int side = side_of(skops), cl = class_of(skops);
	unsigned char b[8] = { 2, 0 };
	unsigned int i;

	__sync_fetch_and_add(&len_calls[side][cl], 1);
	count_arg(args_len, cl, skops->args[0]);
	if (cl == CL_NOSKB) {
		/* no skb: every skb field reads 0, and there is nothing to load */
		if (skops->skb_data)
			__sync_fetch_and_add(&noskb_bad, 1);
		if (skops->skb_data_end)
			__sync_fetch_and_add(&noskb_bad, 1);
		if (skops->skb_len || skops->skb_tcp_flags || !skops->is_fullsock)
			__sync_fetch_and_add(&noskb_bad, 1);
		if (bpf_load_hdr_opt(skops, b, 8, 0) != -EPERM)
			__sync_fetch_and_add(&noskb_bad, 1);
	} else {
		last_len_flags[side] = skops->skb_tcp_flags;
	}
	if (cl == CL_SYNACK) {
		i = len_calls[side][cl] - 1;
		if (i < 4)
			load_into(skops, &synack_syn[i], BPF_LOAD_HDR_OPT_TCP_SYN);
		if (i == 0)
			load_into(skops, &syn_in, BPF_LOAD_HDR_OPT_TCP_SYN);
	}
	if (bpf_reserve_hdr_opt(skops, w_reserve, 0))
		BAD();
	return w_ret_len;
}

static int wire_write(struct bpf_sock_ops *skops)
{
	int side = side_of(skops), cl = class_of(skops);
	unsigned char b[8];
	int ret;

	__sync_fetch_and_add(&write_calls[side][cl], 1);
	count_arg(args_write, cl, skops->args[0]);
	b[0] = w_kind;
	b[1] = w_len;
	if (w_kind == KIND_EXP) {
		b[2] = EXP_MAGIC0;
		b[3] = EXP_MAGIC1;
		b[4] = skops->skb_tcp_flags;
		b[5] = last_len_flags[side];
		b[6] = 0xA0 | side;
		b[7] = 0xA5;
	} else {
		b[2] = skops->skb_tcp_flags;
		b[3] = last_len_flags[side];
		b[4] = 0xA0 | side;
		b[5] = 0xA5;
		b[6] = 0x5A;
		b[7] = 0x5A;
	}
	ret = bpf_store_hdr_opt(skops, b, 8, 0);
	if (write_calls[side][cl] == 1)
		store_ret[side][cl] = ret;
	return w_ret_write;
}

static void wire_parse(struct bpf_sock_ops *skops)
{
	int side = side_of(skops), payload = payload_of(skops);

	__sync_fetch_and_add(&parse_calls[side], 1);
	if (fin_of(skops))
		load_into(skops, &fin_in[side], 0);
	else if (payload > 0)
		load_into(skops, &data_in[side], 0);
}

SEC("sockops")
int wire(struct bpf_sock_ops *skops)
{
	int one = 1;

	if (!ours(skops))
		return 1;
	switch (skops->op) {
	case BPF_SOCK_OPS_TCP_LISTEN_CB:
		if (w_save_syn)
			bpf_setsockopt(skops, SOL_TCP, TCP_SAVE_SYN, &one, sizeof(one));
		/* fall through */
	case BPF_SOCK_OPS_TCP_CONNECT_CB:
		if (bpf_sock_ops_cb_flags_set(skops, w_flags))
			BAD();
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		return wire_len(skops);
	case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
		return wire_write(skops);
	case BPF_SOCK_OPS_PARSE_HDR_OPT_CB:
		wire_parse(skops);
		break;
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
		load_into(skops, &synack_in, 0);
		break;
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		passive_estab_flags = skops->bpf_sock_ops_cb_flags;
		load_into(skops, &ack_in, 0);
		break;
	}
	return 1;
}

/* ------------------------------------------------------------------- mtu */
unsigned char m_reserve = 8;
unsigned int m_enospc, m_other, m_noskb, m_store_bad;

SEC("sockops")
int mtu(struct bpf_sock_ops *skops)
{
	unsigned char b[28] = { 0xB7 };
	int cl, n, ret;

	if (!ours(skops))
		return 1;
	switch (skops->op) {
	case BPF_SOCK_OPS_TCP_LISTEN_CB:
	case BPF_SOCK_OPS_TCP_CONNECT_CB:
		bpf_sock_ops_cb_flags_set(skops, BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		cl = class_of(skops);
		if (cl == CL_SYN || cl == CL_SYNACK) {
			bpf_reserve_hdr_opt(skops, 4, 0);
			break;
		}
		if (cl == CL_NOSKB)
			__sync_fetch_and_add(&m_noskb, 1);
		/* 40 bytes less the timestamps' 12: 29 cannot fit */
		ret = bpf_reserve_hdr_opt(skops, 29, 0);
		if (ret == -ENOSPC)
			__sync_fetch_and_add(&m_enospc, 1);
		else
			__sync_fetch_and_add(&m_other, 1);
		if (bpf_reserve_hdr_opt(skops, m_reserve, 0))
			__sync_fetch_and_add(&m_other, 1);
		break;
	case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
		cl = class_of(skops);
		n = (cl == CL_SYN || cl == CL_SYNACK) ? 4 : m_reserve;
		if (n > 28)
			n = 28;
		b[1] = n;
		b[2] = 0x4d;
		if (bpf_store_hdr_opt(skops, b, sizeof(b), 0))
			__sync_fetch_and_add(&m_store_bad, 1);
		break;
	}
	return 1;
}

/* ---------------------------------------------------------------- nested */
int n_store[2] = { E_UNSET, E_UNSET };
int n_dup = E_UNSET, n_load_child = E_UNSET;
unsigned int n_calls[2];

static int nest(struct bpf_sock_ops *skops, int parent)
{
	unsigned char b[8] = {};
	int ret;

	if (!ours(skops))
		return 1;
	switch (skops->op) {
	case BPF_SOCK_OPS_TCP_LISTEN_CB:
	case BPF_SOCK_OPS_TCP_CONNECT_CB:
		bpf_sock_ops_cb_flags_set(skops, BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		bpf_reserve_hdr_opt(skops, 4, 0);
		break;
	case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
		__sync_fetch_and_add(&n_calls[parent], 1);
		b[1] = 4;
		b[2] = 0xA0 | side_of(skops);
		if (parent && n_dup == E_UNSET) {
			/* the child's kind, already written by the child (while
			 * 4 bytes are left: space is checked first)
			 */
			b[0] = 0xB8;
			b[3] = 0x33;
			n_dup = bpf_store_hdr_opt(skops, b, 4, 0);
			b[1] = 0;
			n_load_child = bpf_load_hdr_opt(skops, b, 8, 0);
			b[1] = 4;
			b[2] = 0xA0 | side_of(skops);
		}
		b[0] = parent ? 0xB7 : 0xB8;
		b[3] = parent ? 0x22 : 0x11;
		ret = bpf_store_hdr_opt(skops, b, 4, 0);
		if (n_store[parent] == E_UNSET || ret)
			n_store[parent] = ret;
		break;
	}
	return 1;
}

SEC("sockops")
int nest_child(struct bpf_sock_ops *skops)
{
	return nest(skops, 0);
}

SEC("sockops")
int nest_parent(struct bpf_sock_ops *skops)
{
	return nest(skops, 1);
}

/* ----------------------------------------------------------------- pmode */
unsigned int p_srv_flags = BPF_SOCK_OPS_PARSE_UNKNOWN_HDR_OPT_CB_FLAG;
unsigned int p_cnt11, p_cnt13, p_cntfin, p_cnt_other;
int p_ld11 = E_UNSET, p_ld13 = E_UNSET;

SEC("sockops")
int pmode(struct bpf_sock_ops *skops)
{
	unsigned char b[8] = {};
	int payload;

	if (!ours(skops))
		return 1;
	switch (skops->op) {
	case BPF_SOCK_OPS_TCP_LISTEN_CB:
		bpf_sock_ops_cb_flags_set(skops, p_srv_flags);
		break;
	case BPF_SOCK_OPS_TCP_CONNECT_CB:
		bpf_sock_ops_cb_flags_set(skops, BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		if (skops->skb_len == 11)
			bpf_reserve_hdr_opt(skops, 4, 0);
		else if (skops->skb_len == 13)
			bpf_reserve_hdr_opt(skops, 2, 0);
		break;
	case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
		payload = payload_of(skops);
		if (payload == 11) {
			unsigned char u[4] = { 0xB9, 4, 0x11, 0x11 };

			if (bpf_store_hdr_opt(skops, u, 4, 0))
				BAD();
		} else if (payload == 13) {
			unsigned char k[4] = { 34, 2 };

			if (bpf_store_hdr_opt(skops, k, 4, 0))
				BAD();
		} else {
			BAD();
		}
		break;
	case BPF_SOCK_OPS_PARSE_HDR_OPT_CB:
		if (side_of(skops) != SIDE_PASSIVE)
			break;
		payload = payload_of(skops);
		if (fin_of(skops)) {
			__sync_fetch_and_add(&p_cntfin, 1);
		} else if (payload == 11) {
			__sync_fetch_and_add(&p_cnt11, 1);
			b[0] = 0xB9;
			p_ld11 = bpf_load_hdr_opt(skops, b, 8, 0);
		} else if (payload == 13) {
			__sync_fetch_and_add(&p_cnt13, 1);
			b[0] = 34;
			p_ld13 = bpf_load_hdr_opt(skops, b, 8, 0);
		} else {
			__sync_fetch_and_add(&p_cnt_other, 1);
		}
		break;
	}
	return 1;
}

/* ------------------------------------------------------------------ drop */
unsigned char d_flags = TCPF_SYN;
unsigned int d_drop = 1;
unsigned int d_seen, d_dropped;
unsigned char d_opts[2][40];
unsigned int d_optlen[2];

static int drop_first(struct __sk_buff *skb)
{
	unsigned char th[20];
	unsigned int off, i;
	unsigned char vihl;
	int olen;

	if (skb->protocol == bpf_htons(ETH_P_IP)) {
		if (bpf_skb_load_bytes(skb, 0, &vihl, 1))
			return 1;
		off = (vihl & 0xf) * 4;
	} else if (skb->protocol == bpf_htons(ETH_P_IPV6)) {
		off = 40;
	} else {
		return 1;
	}
	if (bpf_skb_load_bytes(skb, off, th, sizeof(th)))
		return 1;
	if ((th[0] << 8 | th[1]) != SRV_PORT && (th[2] << 8 | th[3]) != SRV_PORT)
		return 1;
	if (th[13] != d_flags)
		return 1;
	i = d_seen++;
	olen = (th[12] >> 4) * 4 - 20;
	/* hide that olen is a multiple of 4: the verifier needs olen >= 1 */
	asm volatile("" : "+r"(olen));
	if (i < 2 && olen >= 4 && olen <= 40) {
		d_optlen[i] = olen;
		bpf_skb_load_bytes(skb, off + 20, d_opts[i], olen);
	}
	if (d_dropped < d_drop) {
		d_dropped++;
		return 0;
	}
	return 1;
}

SEC("cgroup_skb/egress")
int drop(struct __sk_buff *skb)
{
	return drop_first(skb);
}

/* IPv6 SYN-ACKs skip the listener's egress programs: drop at the client */
SEC("cgroup_skb/ingress")
int drop_in(struct __sk_buff *skb)
{
	return drop_first(skb);
}

char _license[] SEC("license") = "GPL";

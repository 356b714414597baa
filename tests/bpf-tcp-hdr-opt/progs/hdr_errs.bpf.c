// SPDX-License-Identifier: GPL-2.0
/*
 * The helper-error battery: a sock_ops program that calls
 * bpf_reserve_hdr_opt(), bpf_store_hdr_opt(), bpf_load_hdr_opt() and
 * bpf_getsockopt(TCP_BPF_SYN*) with good and bad arguments, from the ops
 * where they work and from those where they must not, and keeps every
 * return value (res[], numbered by enum err_case) for user space to compare
 * with stock 6.1's.  Each slot keeps the first value only.
 *
 * The active side reserves the whole 20 bytes the SYN leaves and fills them
 * (with one option per call, several refused); the passive side looks at
 * the SYN while it writes the SYN-ACK.  mode 1 is the "corner" run: options
 * whose kind-length is below 2.
 */
#include <stddef.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/tcp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "../hdr_opt.h"

#ifndef SOL_TCP
#define SOL_TCP 6
#endif

int res[NR_E];
unsigned int mode;
unsigned int nr_prog_runs;

#define REC(i, v) do { if (res[i] == E_UNSET) res[i] = (v); } while (0)

static int is_passive(struct bpf_sock_ops *skops)
{
	return skops->local_port == SRV_PORT;
}

static int data_len(struct bpf_sock_ops *skops)
{
	return (long)skops->skb_data_end - (long)skops->skb_data;
}

static void conn_cb(struct bpf_sock_ops *skops)
{
	unsigned char buf[8] = { 2, 0 };
	int flags = BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG |
		    BPF_SOCK_OPS_PARSE_ALL_HDR_OPT_CB_FLAG;

	REC(E_CONN_LOAD, bpf_load_hdr_opt(skops, buf, sizeof(buf), 0));
	buf[0] = 0xB9;
	buf[1] = 4;
	REC(E_CONN_STORE, bpf_store_hdr_opt(skops, buf, 4, 0));
	REC(E_CONN_RESERVE, bpf_reserve_hdr_opt(skops, 4, 0));
	REC(E_CONN_FLAGS_SET, bpf_sock_ops_cb_flags_set(skops, flags));
}

static void active_len(struct bpf_sock_ops *skops)
{
	unsigned char buf[8] = { 2, 0 };
	unsigned char syn[64];

	if (skops->args[0] == BPF_WRITE_HDR_TCP_CURRENT_MSS)
		return;
	if (skops->skb_tcp_flags != TCPF_SYN) {
		/* data: a small option of its own, so that the passive
		 * side's PARSE_ALL callback sees it on the slow path
		 */
		if (skops->skb_len)
			bpf_reserve_hdr_opt(skops, 4, 0);
		return;
	}
	REC(E_LEN_TCP_FLAGS, skops->skb_tcp_flags);
	REC(E_LEN_SKB_LEN, skops->skb_len);
	if (mode == 1) {
		bpf_reserve_hdr_opt(skops, 4, 0);
		return;
	}
	REC(E_LEN_RES_1, bpf_reserve_hdr_opt(skops, 1, 0));
	REC(E_LEN_RES_FLAGS, bpf_reserve_hdr_opt(skops, 4, 1));
	REC(E_LEN_RES_21, bpf_reserve_hdr_opt(skops, 21, 0));
	REC(E_LEN_RES_41, bpf_reserve_hdr_opt(skops, 41, 0));
	REC(E_LEN_RES_12, bpf_reserve_hdr_opt(skops, 12, 0));
	REC(E_LEN_RES_9, bpf_reserve_hdr_opt(skops, 9, 0));
	REC(E_LEN_RES_8, bpf_reserve_hdr_opt(skops, 8, 0));
	REC(E_LEN_RES_2, bpf_reserve_hdr_opt(skops, 2, 0));
	REC(E_LEN_LOAD, bpf_load_hdr_opt(skops, buf, sizeof(buf), 0));
	buf[0] = 2;
	buf[1] = 0;
	REC(E_LEN_LOAD_SYN, bpf_load_hdr_opt(skops, buf, sizeof(buf),
					     BPF_LOAD_HDR_OPT_TCP_SYN));
	buf[0] = 0xB9;
	buf[1] = 4;
	REC(E_LEN_STORE, bpf_store_hdr_opt(skops, buf, 4, 0));
	REC(E_LEN_GETSOCKOPT_SYN, bpf_getsockopt(skops, SOL_TCP, TCP_BPF_SYN,
						 syn, sizeof(syn)));
}

static void active_write(struct bpf_sock_ops *skops)
{
	unsigned char b[32] = {};
	unsigned char s[2] = {};
	int i;

	if (skops->skb_tcp_flags != TCPF_SYN) {
		b[0] = 0xBD; b[1] = 4; b[2] = 1; b[3] = 2;
		bpf_store_hdr_opt(skops, b, 4, 0);
		return;
	}
	if (mode == 1) {
		b[0] = 0xB9;
		b[1] = 0;
		REC(E_CO_ST_LEN0, bpf_store_hdr_opt(skops, b, 2, 0));
		b[1] = 1;
		REC(E_CO_ST_LEN1, bpf_store_hdr_opt(skops, b, 2, 0));
		b[0] = 0xBA;
		b[1] = 2;
		REC(E_CO_ST_AFTER, bpf_store_hdr_opt(skops, b, 2, 0));
		return;
	}
	REC(E_WR_DATA_LEN, data_len(skops));
	REC(E_WR_SKB_LEN, skops->skb_len);
	REC(E_WR_TCP_FLAGS, skops->skb_tcp_flags);

	b[0] = 0xB9; b[1] = 4; b[2] = 0xfa; b[3] = 0xce;
	REC(E_WR_ST_FLAGS, bpf_store_hdr_opt(skops, b, 4, 1));
	REC(E_WR_ST_LEN1, bpf_store_hdr_opt(skops, b, 1, 0));
	b[1] = 6;
	REC(E_WR_ST_KINDLEN, bpf_store_hdr_opt(skops, b, 4, 0));
	b[0] = 1; b[1] = 2;
	REC(E_WR_ST_NOP, bpf_store_hdr_opt(skops, b, 2, 0));
	b[0] = 0; b[1] = 2;
	REC(E_WR_ST_EOL, bpf_store_hdr_opt(skops, b, 2, 0));
	b[0] = KIND_EXP; b[1] = 3; b[2] = EXP_MAGIC0; b[3] = EXP_MAGIC1;
	REC(E_WR_ST_EXP3, bpf_store_hdr_opt(skops, b, 4, 0));
	b[0] = 0xB9; b[1] = 21;
	REC(E_WR_ST_BIG, bpf_store_hdr_opt(skops, b, 24, 0));
	b[0] = 2; b[1] = 4; b[2] = 0x05; b[3] = 0xb4;
	REC(E_WR_ST_DUP_MSS, bpf_store_hdr_opt(skops, b, 4, 0));
	b[0] = 3; b[1] = 3; b[2] = 7;
	REC(E_WR_ST_DUP_WS, bpf_store_hdr_opt(skops, b, 3, 0));
	b[0] = 0xB9; b[1] = 4; b[2] = 0xfa; b[3] = 0xce;
	REC(E_WR_ST_OK, bpf_store_hdr_opt(skops, b, 4, 0));
	REC(E_WR_ST_DUP, bpf_store_hdr_opt(skops, b, 4, 0));
	b[0] = KIND_EXP; b[1] = 4; b[2] = EXP_MAGIC0; b[3] = EXP_MAGIC1;
	REC(E_WR_ST_EXP_OK, bpf_store_hdr_opt(skops, b, 4, 0));
	b[1] = 6; b[4] = 1; b[5] = 2;
	REC(E_WR_ST_EXP_DUP, bpf_store_hdr_opt(skops, b, 6, 0));
	b[1] = 4; b[2] = 0x12; b[3] = 0x34;
	REC(E_WR_ST_EXP_OTHER, bpf_store_hdr_opt(skops, b, 4, 0));
	b[0] = 253; b[2] = EXP_MAGIC0; b[3] = EXP_MAGIC1;
	REC(E_WR_ST_253, bpf_store_hdr_opt(skops, b, 4, 0));
	b[0] = 0xBA; b[1] = 5;
	REC(E_WR_ST_NOSPC, bpf_store_hdr_opt(skops, b, 8, 0));
	b[0] = 0xBB; b[1] = 4;
	REC(E_WR_ST_FILL, bpf_store_hdr_opt(skops, b, 4, 0));
	b[0] = 0xBC; b[1] = 2;
	REC(E_WR_ST_FULL, bpf_store_hdr_opt(skops, b, 2, 0));
	REC(E_WR_DATA_LEN_AFTER, data_len(skops));

	/* searches */
	for (i = 0; i < 8; i++)
		b[i] = 0;
	b[0] = 0xB9;
	REC(E_WR_LD_FOUND, bpf_load_hdr_opt(skops, b, 8, 0));
	s[0] = 0xB9;
	REC(E_WR_LD_SHORT, bpf_load_hdr_opt(skops, s, 2, 0));
	REC(E_WR_LD_SHORT_BYTES, s[0] << 8 | s[1]);
	b[0] = 0xB9; b[1] = 4;
	REC(E_WR_LD_REGLEN, bpf_load_hdr_opt(skops, b, 8, 0));
	b[1] = 0;
	REC(E_WR_LD_LEN1, bpf_load_hdr_opt(skops, b, 1, 0));
	REC(E_WR_LD_FLAGS, bpf_load_hdr_opt(skops, b, 8, 2));
	b[0] = 1;
	REC(E_WR_LD_NOP, bpf_load_hdr_opt(skops, b, 8, 0));
	b[0] = 0;
	REC(E_WR_LD_EOL, bpf_load_hdr_opt(skops, b, 8, 0));
	b[0] = KIND_EXP; b[1] = 3; b[2] = EXP_MAGIC0; b[3] = EXP_MAGIC1;
	REC(E_WR_LD_EXP3, bpf_load_hdr_opt(skops, b, 8, 0));
	b[1] = 0;
	REC(E_WR_LD_EXP0, bpf_load_hdr_opt(skops, b, 8, 0));
	b[1] = 6;
	REC(E_WR_LD_SEARCHLEN, bpf_load_hdr_opt(skops, b, 4, 0));
	b[1] = 4; b[2] = 0x12; b[3] = 0x34;
	REC(E_WR_LD_EXP_FOUND, bpf_load_hdr_opt(skops, b, 8, 0));
	b[1] = 6; b[2] = EXP_MAGIC0; b[3] = EXP_MAGIC1; b[4] = 0; b[5] = 0;
	REC(E_WR_LD_EXP_MAGIC4, bpf_load_hdr_opt(skops, b, 8, 0));
	b[1] = 4; b[2] = 0xaa; b[3] = 0xbb;
	REC(E_WR_LD_EXP_MISS, bpf_load_hdr_opt(skops, b, 8, 0));
	b[0] = 0xB7; b[1] = 0;
	REC(E_WR_LD_MISSING, bpf_load_hdr_opt(skops, b, 8, 0));
	b[0] = 2;
	REC(E_WR_LD_MSS, bpf_load_hdr_opt(skops, b, 8, 0));
	b[0] = 2; b[1] = 0;
	REC(E_WR_LD_SYN, bpf_load_hdr_opt(skops, b, 8, BPF_LOAD_HDR_OPT_TCP_SYN));
	REC(E_WR_RESERVE, bpf_reserve_hdr_opt(skops, 4, 0));
}

static void active_estab(struct bpf_sock_ops *skops)
{
	unsigned char b[8] = { 2, 0 };
	unsigned char syn[64];

	REC(E_AE_LD_MSS, bpf_load_hdr_opt(skops, b, 8, 0));
	b[0] = 2;
	b[1] = 0;
	REC(E_AE_LD_SYN, bpf_load_hdr_opt(skops, b, 8, BPF_LOAD_HDR_OPT_TCP_SYN));
	b[0] = 0xB9;
	b[1] = 4;
	REC(E_AE_STORE, bpf_store_hdr_opt(skops, b, 4, 0));
	REC(E_AE_RESERVE, bpf_reserve_hdr_opt(skops, 4, 0));
	REC(E_AE_GETSOCKOPT_SYN, bpf_getsockopt(skops, SOL_TCP, TCP_BPF_SYN,
						syn, sizeof(syn)));
	REC(E_AE_TCP_FLAGS, skops->skb_tcp_flags);
	REC(E_AE_DATA_LEN, data_len(skops));
	REC(E_AE_SKB_LEN, skops->skb_len);
}

static void passive_len(struct bpf_sock_ops *skops)
{
	unsigned char b[8] = { 0xB9, 0 };
	unsigned char syn[128];
	int i;

	if (skops->skb_tcp_flags != (TCPF_SYN | TCPF_ACK))
		return;
	if (mode == 1) {
		b[0] = 2;
		REC(E_CO_SA_LOAD_SYN_MSS,
		    bpf_load_hdr_opt(skops, b, 8, BPF_LOAD_HDR_OPT_TCP_SYN));
		b[0] = 0xB7;
		b[1] = 0;
		REC(E_CO_SA_LOAD_SYN_MISSING,
		    bpf_load_hdr_opt(skops, b, 8, BPF_LOAD_HDR_OPT_TCP_SYN));
		return;
	}
	REC(E_SA_TCP_FLAGS, skops->skb_tcp_flags);
	REC(E_SA_LOAD, bpf_load_hdr_opt(skops, b, 8, 0));
	b[0] = 0xB9;
	b[1] = 0;
	REC(E_SA_LOAD_SYN, bpf_load_hdr_opt(skops, b, 8, BPF_LOAD_HDR_OPT_TCP_SYN));
	b[0] = KIND_EXP; b[1] = 4; b[2] = 0x12; b[3] = 0x34;
	REC(E_SA_LOAD_SYN_EXP, bpf_load_hdr_opt(skops, b, 8, BPF_LOAD_HDR_OPT_TCP_SYN));
	REC(E_SA_GS_SYN, bpf_getsockopt(skops, SOL_TCP, TCP_BPF_SYN, syn, sizeof(syn)));
	REC(E_SA_GS_SYN_IP, bpf_getsockopt(skops, SOL_TCP, TCP_BPF_SYN_IP, syn, sizeof(syn)));
	REC(E_SA_GS_SYN_MAC, bpf_getsockopt(skops, SOL_TCP, TCP_BPF_SYN_MAC, syn, sizeof(syn)));
	for (i = 0; i < 24; i++)
		syn[i] = 0xee;
	REC(E_SA_GS_SYN_SHORT, bpf_getsockopt(skops, SOL_TCP, TCP_BPF_SYN, syn, 2));
	REC(E_SA_GS_SYN_SHORT_BYTE, syn[0] << 8 | syn[1]);
	REC(E_SA_GS_SYN_PAST, syn[2]);
	bpf_reserve_hdr_opt(skops, 4, 0);
}

static void passive_write(struct bpf_sock_ops *skops)
{
	unsigned char b[12] = { 8, 10 };

	if (skops->skb_tcp_flags != (TCPF_SYN | TCPF_ACK) || mode == 1)
		return;
	REC(E_SAW_TCP_FLAGS, skops->skb_tcp_flags);
	REC(E_SAW_ARG0, skops->args[0]);
	/* space is checked before duplicates */
	REC(E_SAW_ST_TS_BIG, bpf_store_hdr_opt(skops, b, 10, 0));
	b[1] = 2;
	REC(E_SAW_ST_DUP_TS, bpf_store_hdr_opt(skops, b, 2, 0));
	b[0] = 0xB8; b[1] = 4; b[2] = 0xab; b[3] = 0xcd;
	REC(E_SAW_ST_OK, bpf_store_hdr_opt(skops, b, 4, 0));
}

static void passive_estab(struct bpf_sock_ops *skops)
{
	unsigned char b[12] = { 0xB9, 0 };
	unsigned char syn[64];

	if (mode == 1)
		return;
	REC(E_PE_LOAD, bpf_load_hdr_opt(skops, b, 8, 0));
	b[0] = 8;
	b[1] = 0;
	REC(E_PE_LOAD_TS, bpf_load_hdr_opt(skops, b, 12, 0));
	b[0] = 0xB9;
	b[1] = 0;
	REC(E_PE_LOAD_SYN, bpf_load_hdr_opt(skops, b, 8, BPF_LOAD_HDR_OPT_TCP_SYN));
	REC(E_PE_GS_SYN, bpf_getsockopt(skops, SOL_TCP, TCP_BPF_SYN, syn, sizeof(syn)));
	REC(E_PE_TCP_FLAGS, skops->skb_tcp_flags);
	b[0] = 0xB9; b[1] = 4;
	REC(E_PE_STORE, bpf_store_hdr_opt(skops, b, 4, 0));
	REC(E_PE_RESERVE, bpf_reserve_hdr_opt(skops, 4, 0));
}

static void passive_parse(struct bpf_sock_ops *skops)
{
	unsigned char b[12] = { 0xBD, 4 };
	struct tcphdr *th = skops->skb_data;

	if (mode == 1)
		return;
	if ((void *)(th + 1) > skops->skb_data_end)
		return;
	/* the first data segment only */
	if (skops->skb_len <= th->doff * 4)
		return;
	REC(E_PA_SKB_LEN_MINUS_HDR, skops->skb_len - th->doff * 4);
	REC(E_PA_TCP_FLAGS, skops->skb_tcp_flags);
	REC(E_PA_STORE, bpf_store_hdr_opt(skops, b, 4, 0));
	REC(E_PA_RESERVE, bpf_reserve_hdr_opt(skops, 4, 0));
	b[1] = 0;
	REC(E_PA_LOAD, bpf_load_hdr_opt(skops, b, 8, 0));
	b[0] = 0xB9;
	b[1] = 0;
	REC(E_PA_LOAD_MISSING, bpf_load_hdr_opt(skops, b, 8, 0));
	b[0] = 8;
	b[1] = 0;
	REC(E_PA_LOAD_TS, bpf_load_hdr_opt(skops, b, 12, 0));
}

SEC("sockops")
int errs(struct bpf_sock_ops *skops)
{
	int flags = BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG |
		    BPF_SOCK_OPS_PARSE_ALL_HDR_OPT_CB_FLAG;

	if (skops->local_port != SRV_PORT && skops->remote_port != bpf_htonl(SRV_PORT))
		return 1;
	__sync_fetch_and_add(&nr_prog_runs, 1);

	switch (skops->op) {
	case BPF_SOCK_OPS_TCP_LISTEN_CB:
		bpf_sock_ops_cb_flags_set(skops, flags);
		break;
	case BPF_SOCK_OPS_TCP_CONNECT_CB:
		conn_cb(skops);
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		if (is_passive(skops))
			passive_len(skops);
		else
			active_len(skops);
		break;
	case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
		if (is_passive(skops))
			passive_write(skops);
		else
			active_write(skops);
		break;
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
		active_estab(skops);
		break;
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		passive_estab(skops);
		break;
	case BPF_SOCK_OPS_PARSE_HDR_OPT_CB:
		if (is_passive(skops))
			passive_parse(skops);
		break;
	}
	return 1;
}

char _license[] SEC("license") = "GPL";

// SPDX-License-Identifier: GPL-2.0
/*
 * sockopt: a sock_ops program that reserves and writes a 4-byte option on
 * every packet and, from the callback user space names (op_of_call: one of
 * BPF_SOCK_OPS_HDR_OPT_LEN_CB, BPF_SOCK_OPS_WRITE_HDR_OPT_CB,
 * BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB), calls bpf_setsockopt(level, optname)
 * with an int value (or, for TCP_CONGESTION, the name "reno").  It keeps the
 * first return value of a full socket's call and how many calls returned 0
 * and how many failed.
 */
#include <stddef.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/tcp.h>
#include <bpf/bpf_helpers.h>
#include "../../bpf-tcp-hdr-opt/hdr_opt.h"

#ifndef SOL_TCP
#define SOL_TCP 6
#endif

#define HDR_FLAGS BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG
#define RET_UNSET 0x7fffffff

int op_of_call;
int level, optname, optval;
int first_ret = RET_UNSET;
__u64 n_ok, n_err, n_len, n_write;

static void call_setsockopt(struct bpf_sock_ops *skops)
{
	char cc[8] = "reno";
	int v = optval, ret;

	if (!skops->is_fullsock)
		return;
	if (level == SOL_TCP && optname == TCP_CONGESTION)
		ret = bpf_setsockopt(skops, level, optname, cc, 5);
	else
		ret = bpf_setsockopt(skops, level, optname, &v, sizeof(v));
	if (first_ret == RET_UNSET)
		first_ret = ret;
	if (ret)
		__sync_fetch_and_add(&n_err, 1);
	else
		__sync_fetch_and_add(&n_ok, 1);
}

SEC("sockops")
int sockopt(struct bpf_sock_ops *skops)
{
	unsigned char opt[4] = { KIND_EXP, 4, EXP_MAGIC0, EXP_MAGIC1 };

	switch (skops->op) {
	case BPF_SOCK_OPS_TCP_CONNECT_CB:
	case BPF_SOCK_OPS_TCP_LISTEN_CB:
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		bpf_sock_ops_cb_flags_set(skops, HDR_FLAGS);
		break;
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
		bpf_sock_ops_cb_flags_set(skops, HDR_FLAGS);
		if (op_of_call == BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB)
			call_setsockopt(skops);
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		__sync_fetch_and_add(&n_len, 1);
		bpf_reserve_hdr_opt(skops, sizeof(opt), 0);
		if (op_of_call == BPF_SOCK_OPS_HDR_OPT_LEN_CB)
			call_setsockopt(skops);
		break;
	case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
		__sync_fetch_and_add(&n_write, 1);
		bpf_store_hdr_opt(skops, opt, sizeof(opt), 0);
		if (op_of_call == BPF_SOCK_OPS_WRITE_HDR_OPT_CB)
			call_setsockopt(skops);
		break;
	}
	return 1;
}

char _license[] SEC("license") = "GPL";

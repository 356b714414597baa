// SPDX-License-Identifier: GPL-2.0
/*
 * The header-option callback flags only, with no header-option helper and no
 * skb_* context field (so that a kernel without the feature still loads it
 * and the test sees what bpf_sock_ops_cb_flags_set() answers there): what
 * setting them returns, and the flags an accepted (child) socket starts
 * with after its listener set them.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "../hdr_opt.h"

unsigned int f_listen_flags;
int f_listen_ret = E_UNSET;
unsigned int f_listen_after;
int f_conn_ret_all = E_UNSET, f_conn_ret_ff = E_UNSET;
unsigned int f_conn_after;
unsigned int f_child_flags, f_child_calls;

SEC("sockops")
int flags(struct bpf_sock_ops *skops)
{
	if (skops->local_port != SRV_PORT && skops->remote_port != bpf_htonl(SRV_PORT))
		return 1;
	switch (skops->op) {
	case BPF_SOCK_OPS_TCP_LISTEN_CB:
		f_listen_ret = bpf_sock_ops_cb_flags_set(skops, f_listen_flags);
		f_listen_after = skops->bpf_sock_ops_cb_flags;
		break;
	case BPF_SOCK_OPS_TCP_CONNECT_CB:
		f_conn_ret_ff = bpf_sock_ops_cb_flags_set(skops, 0xff);
		f_conn_ret_all = bpf_sock_ops_cb_flags_set(skops, BPF_SOCK_OPS_ALL_CB_FLAGS);
		f_conn_after = skops->bpf_sock_ops_cb_flags;
		/* nothing for the rest of the connection */
		bpf_sock_ops_cb_flags_set(skops, 0);
		break;
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		f_child_flags = skops->bpf_sock_ops_cb_flags;
		f_child_calls++;
		break;
	}
	return 1;
}

char _license[] SEC("license") = "GPL";

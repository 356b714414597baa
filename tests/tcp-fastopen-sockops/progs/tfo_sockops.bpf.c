// SPDX-License-Identifier: GPL-2.0
/*
 * tfo_sockops: from the callback user space names (op_of_call), set the
 * socket option it names (level, optname) with a value that differs from the
 * call before (value, then value ^ toggle, ...), so that an option which
 * drops the socket's route on a change (SO_MARK, IP_TOS) drops it every time.
 * It counts the calls and those that returned 0, and keeps the first error.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

int op_of_call, level, optname, value, toggle;
__u64 n_calls, n_ok;
int first_err;

SEC("sockops")
int tfo_sockops(struct bpf_sock_ops *skops)
{
	int v, ret;

	if (skops->op != op_of_call || !skops->is_fullsock)
		return 1;
	v = value ^ ((n_calls & 1) ? toggle : 0);
	ret = bpf_setsockopt(skops, level, optname, &v, sizeof(v));
	__sync_fetch_and_add(&n_calls, 1);
	if (!ret)
		__sync_fetch_and_add(&n_ok, 1);
	else if (!first_err)
		first_err = ret;
	return 1;
}

char _license[] SEC("license") = "GPL";

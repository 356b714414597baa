// SPDX-License-Identifier: GPL-2.0
/*
 * The benchmark's sock_ops program.  mode 1: every connection of the cgroup
 * asks for the header option callbacks (write, and parse all), reserves 4
 * bytes on every packet it sends, writes an experimental option there (kind
 * 254, length 4, magic 0xeb9f) and looks it up in every packet it receives;
 * the counters say how often each worked.  mode 0: the program runs for the
 * ops every connection gets, and asks for nothing.
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

__u32 mode;
__u64 reserved, written, parsed, missed, failed;

SEC("sockops")
int hdr_opt_bench(struct bpf_sock_ops *skops)
{
	__u8 opt[4] = { 254, 4, 0xeb, 0x9f };
	long ret;

	if (!mode)
		return 1;
	switch (skops->op) {
	case BPF_SOCK_OPS_TCP_CONNECT_CB:
	case BPF_SOCK_OPS_TCP_LISTEN_CB:
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		bpf_sock_ops_cb_flags_set(skops, BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG |
					  BPF_SOCK_OPS_PARSE_ALL_HDR_OPT_CB_FLAG);
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		if (bpf_reserve_hdr_opt(skops, sizeof(opt), 0))
			failed++;
		else
			reserved++;
		break;
	case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
		if (bpf_store_hdr_opt(skops, opt, sizeof(opt), 0))
			failed++;
		else
			written++;
		break;
	case BPF_SOCK_OPS_PARSE_HDR_OPT_CB:
		ret = bpf_load_hdr_opt(skops, opt, sizeof(opt), 0);
		if (ret == sizeof(opt) && opt[2] == 0xeb && opt[3] == 0x9f)
			parsed++;
		else
			missed++;
		break;
	}
	return 1;
}

char _license[] SEC("license") = "GPL";

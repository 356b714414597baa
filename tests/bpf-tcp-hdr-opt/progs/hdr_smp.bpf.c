// SPDX-License-Identifier: GPL-2.0
/*
 * smp: a 6-byte experimental option (kind 254, magic eb9f, then the source
 * port of the packet it is in) written on every packet of both sides and
 * looked up in every packet received, from connections running on every
 * CPU at once.  The counters are shared by all CPUs (atomic adds); the test
 * wants no failed call, no packet without its option and no option carrying
 * another packet's port.
 *
 * noop: does nothing; attached and detached in a loop beside smp, so that the
 * cgroup's program array changes under the header option callbacks.
 */
#include <stddef.h>
#include <linux/bpf.h>
#include <linux/tcp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "../hdr_opt.h"

#define SMP_OPT_LEN	6
#define SMP_FLAGS	(BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG | \
			 BPF_SOCK_OPS_PARSE_ALL_HDR_OPT_CB_FLAG)

__u64 n_reserved, n_written, n_parsed, n_parsed_data, n_estab;
__u64 n_reserve_err, n_write_err, n_missing, n_missing_ctl, n_bad_port;
__u64 n_short_hdr;

/* The source port of the header at skb_data, or -1 if it cannot be read. */
static int hdr_sport(struct bpf_sock_ops *skops)
{
	const unsigned char *d = (void *)(long)skops->skb_data;

	if ((void *)(d + 2) > (void *)(long)skops->skb_data_end)
		return -1;
	return d[0] << 8 | d[1];
}

/*
 * The option of the packet at skb_data, checked against its source port.
 * A packet without it is counted apart when it carries no data (a control
 * packet, which a socket in TIME_WAIT may send without running programs).
 */
static void check_opt(struct bpf_sock_ops *skops)
{
	__u32 hlen = skops->skb_data_end - skops->skb_data;
	unsigned char b[SMP_OPT_LEN] = { KIND_EXP, 4, EXP_MAGIC0, EXP_MAGIC1 };
	int sport = hdr_sport(skops);

	if (sport < 0) {
		__sync_fetch_and_add(&n_short_hdr, 1);
		return;
	}
	if (bpf_load_hdr_opt(skops, b, sizeof(b), 0) != SMP_OPT_LEN) {
		if (skops->skb_len > hlen)
			__sync_fetch_and_add(&n_missing, 1);
		else
			__sync_fetch_and_add(&n_missing_ctl, 1);
		return;
	}
	if ((b[4] << 8 | b[5]) != sport)
		__sync_fetch_and_add(&n_bad_port, 1);
}

SEC("sockops")
int smp(struct bpf_sock_ops *skops)
{
	unsigned char b[SMP_OPT_LEN] = { KIND_EXP, SMP_OPT_LEN, EXP_MAGIC0, EXP_MAGIC1 };
	int sport;

	switch (skops->op) {
	case BPF_SOCK_OPS_TCP_CONNECT_CB:
	case BPF_SOCK_OPS_TCP_LISTEN_CB:
		bpf_sock_ops_cb_flags_set(skops, SMP_FLAGS);
		break;
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		/* the SYN-ACK or the ACK that completed the handshake */
		__sync_fetch_and_add(&n_estab, 1);
		check_opt(skops);
		bpf_sock_ops_cb_flags_set(skops, SMP_FLAGS);
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		if (bpf_reserve_hdr_opt(skops, SMP_OPT_LEN, 0))
			__sync_fetch_and_add(&n_reserve_err, 1);
		else
			__sync_fetch_and_add(&n_reserved, 1);
		break;
	case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
		sport = hdr_sport(skops);
		if (sport < 0) {
			__sync_fetch_and_add(&n_short_hdr, 1);
			break;
		}
		b[4] = sport >> 8;
		b[5] = sport;
		if (bpf_store_hdr_opt(skops, b, sizeof(b), 0))
			__sync_fetch_and_add(&n_write_err, 1);
		else
			__sync_fetch_and_add(&n_written, 1);
		break;
	case BPF_SOCK_OPS_PARSE_HDR_OPT_CB:
		__sync_fetch_and_add(&n_parsed, 1);
		if (skops->skb_len > skops->skb_data_end - skops->skb_data)
			__sync_fetch_and_add(&n_parsed_data, 1);
		check_opt(skops);
		break;
	}
	return 1;
}

SEC("sockops")
int noop(struct bpf_sock_ops *skops)
{
	return 1;
}

char _license[] SEC("license") = "GPL";

// SPDX-License-Identifier: GPL-2.0
/*
 * The fuzz group's sock_ops program: for each invocation that belongs to the
 * running case, the helper calls user space configured for (op, class), with
 * their lengths, flags and buffers; the first invocation of each (side, op,
 * class) records every return value, the buffers after the calls and what
 * skb_data shows (hdr_fuzz.h).
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "hdr_fuzz.h"

#define SOL_TCP		6
#define TCP_SAVE_SYN	27

struct hf_cfg cfg;
struct hf_slot res[HF_NSLOTS];

static __always_inline __u32 classify(__u32 f)
{
	if (!f)
		return HF_CL_NONE;
	if (f & 0x02)
		return (f & 0x10) ? HF_CL_SYNACK : HF_CL_SYN;
	if (f & 0x04)
		return HF_CL_RST;
	if (f & 0x01)
		return HF_CL_FIN;
	if (f & 0x08)
		return HF_CL_DATA;
	return HF_CL_ACK;
}

static __always_inline void call(struct bpf_sock_ops *skops, struct hf_call *c,
				 struct hf_rec *r)
{
	__u8 buf[HF_BUF];
	__u32 len = (c->len & (HF_BUF - 1)) + 1;
	int val = c->arg;
	long ret;

	__builtin_memcpy(buf, c->buf, HF_BUF);
	switch (c->helper) {
	case HF_LOAD:
		ret = bpf_load_hdr_opt(skops, buf, len, c->flags);
		break;
	case HF_STORE:
		ret = bpf_store_hdr_opt(skops, buf, len, c->flags);
		break;
	case HF_RESERVE:
		ret = bpf_reserve_hdr_opt(skops, c->arg, c->flags);
		break;
	case HF_GETSOCKOPT:
		ret = bpf_getsockopt(skops, SOL_TCP, c->arg, buf, len);
		break;
	case HF_SAVE_SYN:
		ret = bpf_setsockopt(skops, SOL_TCP, TCP_SAVE_SYN, &val, sizeof(val));
		break;
	case HF_CB_FLAGS:
		ret = bpf_sock_ops_cb_flags_set(skops, c->arg);
		break;
	case HF_SETSOCKOPT:
		ret = bpf_setsockopt(skops, c->arg >> 16, c->arg & 0xffff, buf, len);
		break;
	case HF_GETSOCKOPT_ANY:
		ret = bpf_getsockopt(skops, c->arg >> 16, c->arg & 0xffff, buf, len);
		break;
	default:
		return;
	}
	if (r) {
		r->ret = ret;
		__builtin_memcpy(r->buf, buf, HF_BUF);
	}
}

SEC("sockops")
int hdr_fuzz(struct bpf_sock_ops *skops)
{
	__u32 op = skops->op, side, cls, key, i;
	struct hf_slot *s = 0;
	__u8 *data, *end;

	if (op >= HF_NOPS)
		return 1;
	/*
	 * PARSE_UNKNOWN alone, for a segment with no option or with the
	 * aligned timestamps alone: stock 6.1 gets here when the segment
	 * before had an unknown option (a stale rx_opt.saw_unknown, fixed by
	 * patches/fixes/0006), ours does not.  Leave no trace of such a
	 * call, so that the two kernels stay comparable.
	 */
	if (op == BPF_SOCK_OPS_PARSE_HDR_OPT_CB &&
	    !(skops->bpf_sock_ops_cb_flags & BPF_SOCK_OPS_PARSE_ALL_HDR_OPT_CB_FLAG)) {
		data = (__u8 *)(long)skops->skb_data;
		end = (__u8 *)(long)skops->skb_data_end;
		/* exactly 20 bytes, or exactly 32 with NOP, NOP, TS */
		if (data + 20 <= end && data + 21 > end)
			return 1;
		if (data + 32 <= end && data + 33 > end && data[20] == 1 &&
		    data[21] == 1 && data[22] == 8 && data[23] == 10)
			return 1;
	}
	if (skops->local_port == cfg.port)
		side = 1;
	else if (bpf_ntohl(skops->remote_port) == cfg.port)
		side = 0;
	else
		return 1;
	cls = classify(skops->skb_tcp_flags) & (HF_NCLASS - 1);
	key = (side * HF_NOPS + op) * HF_NCLASS + cls;
	/* keep the bound visible to the verifier */
	asm volatile("" : "+r"(key));
	key &= HF_NSLOTS - 1;
	/* RTO and retransmission callbacks come from timers: not recorded */
	if (op != BPF_SOCK_OPS_RTO_CB && op != BPF_SOCK_OPS_RETRANS_CB && !res[key].seen) {
		s = &res[key];
		s->seen = 1;
	}

	call(skops, &cfg.calls[op][cls][0], s ? &s->r[0] : 0);
	call(skops, &cfg.calls[op][cls][1], s ? &s->r[1] : 0);
	call(skops, &cfg.calls[op][cls][2], s ? &s->r[2] : 0);

	if (s) {
		s->skb_len = skops->skb_len;
		s->tcp_flags = skops->skb_tcp_flags;
		s->args0 = skops->args[0];
		s->cb_flags = skops->bpf_sock_ops_cb_flags;
		s->state = skops->state;
		s->full = skops->is_fullsock;
		data = (__u8 *)(long)skops->skb_data;
		end = (__u8 *)(long)skops->skb_data_end;
		s->hdr = 0;
		if (data + 20 <= end) {
			s->hdr = 20;
#pragma unroll
			for (i = 0; i < HF_HDR; i++) {
				if (data + 21 + i > end)
					break;
				s->opt[i] = data[20 + i];
				s->hdr++;
			}
		}
	}
	/*
	 * SYN and SYN-ACK retransmissions after 10 s (HZ 250), not 1 s: no
	 * timer fires within a case (the routes' minimum RTO does that for
	 * the rest).
	 */
	if (op == BPF_SOCK_OPS_TIMEOUT_INIT) {
		skops->reply = 2500;
		/*
		 * Returning 0 would make TCP ignore the reply and arm its
		 * default 1 s timeout: a case slower than that under load
		 * retransmitted its SYN, and the retransmission's
		 * HDR_OPT_LEN callback (CURRENT_MSS) was recorded on one
		 * kernel and not the other (seen once in CI, c1213).
		 */
		return 1;
	}
	return cfg.ret[op][cls] ? 1 : 0;
}

char _license[] SEC("license") = "GPL";

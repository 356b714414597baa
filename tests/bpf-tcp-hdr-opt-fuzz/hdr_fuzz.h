/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What hdr_fuzz.bpf.c (the sock_ops program) and hdr_fuzz.c (user space)
 * share: the per-case configuration user space writes before a case and the
 * records the program leaves for it, both in the program's global data (.bss,
 * memory-mapped by the skeleton).
 *
 * The program is called for every sock_ops op of the sockets of its cgroup.
 * A socket belongs to the case when one of its ports is cfg.port (side 1:
 * the listener side, side 0: the connecting side).  An invocation has a
 * class from the TCP flags of its skb (HF_CL_*); for (op, class) the
 * configuration holds HF_NCALLS helper calls and the program's return value.
 * The first invocation of each (side, op, class) of a case fills its slot
 * (which of them occur does not depend on timing in the exchanges the case
 * runs; how often they occur may, so nothing counts them).
 */
#ifndef HDR_FUZZ_H
#define HDR_FUZZ_H

#define HF_NOPS		16	/* BPF_SOCK_OPS_* up to WRITE_HDR_OPT_CB (15) */
#define HF_NCLASS	8
#define HF_NCALLS	3
#define HF_BUF		64	/* a helper's buffer; lengths run 1..HF_BUF */
#define HF_HDR		40	/* option bytes of skb_data kept per slot */
#define HF_NSLOTS	(2 * HF_NOPS * HF_NCLASS)

/* classes, from skb_tcp_flags */
enum {
	HF_CL_NONE,	/* no skb (or no flags) */
	HF_CL_SYN,
	HF_CL_SYNACK,
	HF_CL_ACK,	/* ACK without PSH/FIN */
	HF_CL_DATA,	/* PSH */
	HF_CL_FIN,
	HF_CL_RST,
};

/* calls */
enum {
	HF_NONE,
	HF_LOAD,	/* bpf_load_hdr_opt(skops, buf, len, flags) */
	HF_STORE,	/* bpf_store_hdr_opt(skops, buf, len, flags) */
	HF_RESERVE,	/* bpf_reserve_hdr_opt(skops, arg, flags) */
	HF_GETSOCKOPT,	/* bpf_getsockopt(skops, SOL_TCP, arg, buf, len) */
	HF_SAVE_SYN,	/* bpf_setsockopt(skops, SOL_TCP, TCP_SAVE_SYN, &arg, 4) */
	HF_CB_FLAGS,	/* bpf_sock_ops_cb_flags_set(skops, arg) */
	HF_SETSOCKOPT,	/* bpf_setsockopt(skops, arg >> 16, arg & 0xffff, buf, len) */
	HF_GETSOCKOPT_ANY, /* bpf_getsockopt(skops, arg >> 16, arg & 0xffff, buf, len) */
	HF_NHELPERS,
};

struct hf_call {
	__u8 helper;
	__u8 len;	/* the length is len % HF_BUF + 1 */
	__u8 pad[2];
	__u32 arg;
	__u64 flags;
	__u8 buf[HF_BUF];
};

struct hf_cfg {
	__u32 port;	/* the case's listening port (host order) */
	__u32 pad;
	/* the program's return value for (op, class): 1 (ok) unless 0 here */
	__u8 ret[HF_NOPS][HF_NCLASS];
	struct hf_call calls[HF_NOPS][HF_NCLASS][HF_NCALLS];
};

struct hf_rec {
	__s64 ret;
	__u8 buf[HF_BUF];
};

struct hf_slot {
	__u32 seen;
	__u32 skb_len;
	__u32 tcp_flags;
	__u32 args0;
	__u32 cb_flags;		/* bpf_sock_ops_cb_flags after the calls */
	__u32 state;
	__u32 full;		/* is_fullsock */
	__u32 hdr;		/* skb_data_end - skb_data after the calls (0: < 20 or none) */
	__u8 opt[HF_HDR];	/* skb_data[20 .. hdr) */
	struct hf_rec r[HF_NCALLS];
};

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the group's BPF programs (progs/) and their user-space tests:
 * the server port, the records the programs keep in their .bss and the case
 * numbers of the helper-error battery (hdr_errs.bpf.c).
 */
#ifndef HDR_OPT_H
#define HDR_OPT_H

/* Every test runs in a network namespace of its own: one fixed server port. */
#define SRV_PORT 4242

#define SIDE_ACTIVE	0
#define SIDE_PASSIVE	1

/* packet classes of the write callbacks */
#define CL_SYN		0
#define CL_SYNACK	1
#define CL_OTHER	2
#define CL_NOSKB	3	/* HDR_OPT_LEN_CB from tcp_current_mss() */
#define NR_CL		4

#define TCPF_FIN	0x01
#define TCPF_SYN	0x02
#define TCPF_RST	0x04
#define TCPF_PSH	0x08
#define TCPF_ACK	0x10

#define KIND_EXP	254
#define EXP_MAGIC0	0xeb
#define EXP_MAGIC1	0x9f

/* One option a program found (bpf_load_hdr_opt()'s return and bytes). */
struct opt_rec {
	int ret;
	unsigned int n;		/* how many times it was recorded */
	unsigned char data[8];
};

/*
 * The helper-error battery: one slot per call, its return value.  The
 * expected values (stock 6.1, net/core/filter.c) are in hdr_opt_errs.c.
 */
enum err_case {
	/* active side, TCP_CONNECT_CB (no skb) */
	E_CONN_LOAD,
	E_CONN_STORE,
	E_CONN_RESERVE,
	E_CONN_FLAGS_SET,
	/* active side, HDR_OPT_LEN_CB of the SYN (20 bytes of option space left) */
	E_LEN_RES_1,
	E_LEN_RES_FLAGS,
	E_LEN_RES_21,
	E_LEN_RES_41,
	E_LEN_RES_12,
	E_LEN_RES_9,
	E_LEN_RES_8,
	E_LEN_RES_2,
	E_LEN_LOAD,
	E_LEN_LOAD_SYN,
	E_LEN_STORE,
	E_LEN_GETSOCKOPT_SYN,
	E_LEN_TCP_FLAGS,
	E_LEN_SKB_LEN,
	/* active side, WRITE_HDR_OPT_CB of the SYN */
	E_WR_DATA_LEN,		/* skb_data_end - skb_data before any store */
	E_WR_SKB_LEN,
	E_WR_TCP_FLAGS,
	E_WR_ST_FLAGS,
	E_WR_ST_LEN1,
	E_WR_ST_KINDLEN,
	E_WR_ST_NOP,
	E_WR_ST_EOL,
	E_WR_ST_EXP3,
	E_WR_ST_BIG,
	E_WR_ST_DUP_MSS,
	E_WR_ST_DUP_WS,
	E_WR_ST_OK,
	E_WR_ST_DUP,
	E_WR_ST_EXP_OK,
	E_WR_ST_EXP_DUP,
	E_WR_ST_EXP_OTHER,
	E_WR_ST_253,
	E_WR_ST_NOSPC,
	E_WR_ST_FILL,
	E_WR_ST_FULL,
	E_WR_DATA_LEN_AFTER,	/* skb_data_end - skb_data after the stores */
	E_WR_LD_FOUND,
	E_WR_LD_SHORT,
	E_WR_LD_SHORT_BYTES,	/* the two bytes a short load copied */
	E_WR_LD_REGLEN,
	E_WR_LD_LEN1,
	E_WR_LD_FLAGS,
	E_WR_LD_NOP,
	E_WR_LD_EOL,
	E_WR_LD_EXP3,
	E_WR_LD_EXP0,
	E_WR_LD_SEARCHLEN,
	E_WR_LD_EXP_FOUND,
	E_WR_LD_EXP_MAGIC4,
	E_WR_LD_EXP_MISS,
	E_WR_LD_MISSING,
	E_WR_LD_MSS,
	E_WR_LD_SYN,
	E_WR_RESERVE,
	/* active side, ACTIVE_ESTABLISHED_CB: skb_data is the SYN-ACK */
	E_AE_LD_MSS,
	E_AE_LD_SYN,
	E_AE_STORE,
	E_AE_RESERVE,
	E_AE_GETSOCKOPT_SYN,
	E_AE_TCP_FLAGS,
	E_AE_DATA_LEN,		/* skb_data_end - skb_data */
	E_AE_SKB_LEN,
	/* passive side, HDR_OPT_LEN_CB of the SYN-ACK (the SYN is at hand) */
	E_SA_LOAD,
	E_SA_LOAD_SYN,
	E_SA_LOAD_SYN_EXP,
	E_SA_GS_SYN,
	E_SA_GS_SYN_IP,
	E_SA_GS_SYN_MAC,
	E_SA_GS_SYN_SHORT,
	E_SA_GS_SYN_SHORT_BYTE,	/* first byte of the truncated copy (source port) */
	E_SA_GS_SYN_PAST,	/* the byte past a short copy: untouched */
	E_SA_TCP_FLAGS,
	/* passive side, WRITE_HDR_OPT_CB of the SYN-ACK */
	E_SAW_ST_TS_BIG,	/* 10 bytes where 4 are left */
	E_SAW_ST_DUP_TS,
	E_SAW_ST_OK,
	E_SAW_TCP_FLAGS,
	E_SAW_ARG0,
	/* passive side, PASSIVE_ESTABLISHED_CB: skb_data is the ACK */
	E_PE_LOAD,
	E_PE_LOAD_TS,
	E_PE_LOAD_SYN,
	E_PE_GS_SYN,
	E_PE_TCP_FLAGS,
	E_PE_STORE,
	E_PE_RESERVE,
	/* passive side, PARSE_HDR_OPT_CB (PARSE_ALL): the active side's data */
	E_PA_STORE,
	E_PA_RESERVE,
	E_PA_LOAD,
	E_PA_LOAD_MISSING,
	E_PA_LOAD_TS,
	E_PA_SKB_LEN_MINUS_HDR,
	E_PA_TCP_FLAGS,
	/* the "corner" run: an option whose kind-length is below 2 */
	E_CO_ST_LEN1,
	E_CO_ST_AFTER,
	E_CO_ST_LEN0,
	E_CO_SA_LOAD_SYN_MSS,
	E_CO_SA_LOAD_SYN_MISSING,
	NR_E
};

#define E_UNSET (-10000)

#endif

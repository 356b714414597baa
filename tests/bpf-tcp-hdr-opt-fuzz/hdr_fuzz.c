// SPDX-License-Identifier: GPL-2.0
/*
 * BPF TCP header options under seeded random cases, compared with stock by
 * scripts/matrix.py.  One sock_ops program (hdr_fuzz.bpf.c) is attached to
 * the cgroup of this process; for each case user space fills its
 * configuration: per (op, class of packet) three helper calls
 * (bpf_load_hdr_opt, bpf_store_hdr_opt, bpf_reserve_hdr_opt,
 * bpf_getsockopt(TCP_BPF_SYN*), bpf_setsockopt(TCP_SAVE_SYN),
 * bpf_sock_ops_cb_flags_set, and from every op bpf_setsockopt() and
 * bpf_getsockopt() with every level/option pair 6.1 lets a sock_ops program
 * use, and some it refuses) with random lengths, kinds, flags, values and
 * buffers, and the program's return value.  The callback flags come from the
 * TCP_CONNECT and TCP_LISTEN callbacks (and maybe again at ESTABLISHED).
 *
 * Option values are drawn so that nothing a case observes depends on timing:
 * no pacing rate (internal pacing runs on a timer), no receive low-water mark
 * above 1 (a read would wait), keepalive and user timeouts of an hour or
 * invalid ones, no binding to a device (an unbind or an invalid index).  TCP_NODELAY and
 * TCP_CONGESTION from BPF_SOCK_OPS_HDR_OPT_LEN_CB and
 * BPF_SOCK_OPS_WRITE_HDR_OPT_CB crash stock 6.1 (patches/fixes/0008), and so
 * do SO_MARK, IP_TOS, SO_BINDTODEVICE and SO_BINDTOIFINDEX from
 * BPF_SOCK_OPS_TIMEOUT_INIT, BPF_SOCK_OPS_RWND_INIT and
 * BPF_SOCK_OPS_NEEDS_ECN before a Fast Open
 * connect (they drop the route the cookie lookup then dereferences:
 * patches/fixes/0018, which this fuzz found).  On stock
 * (KTEST_FLAVOUR=stock) the program does not make those calls; on every other
 * kernel it does, and the first two must fail with EBUSY (a row of their
 * own); their results are left out of the observation lines on every kernel,
 * and so are, in a case with one of the others, the socket's mark, priority
 * and TOS as bpf_getsockopt() reads them (the calls set them on every kernel
 * but stock); the draws are the same, so that the cases stay comparable.
 *
 * Invariants of its own, on every kernel: no segment on the veth longer than
 * its MTU, and the EBUSY above.
 *
 * A case is one connection of one of these kinds:
 *   lo4, lo6  both ends are ours, over lo (SYN cookies, fast open without
 *             cookie or neither), a byte each way, the listener's end
 *             closing first; the options are read off lo with an AF_PACKET
 *             socket (as a set: which packets, not how many);
 *   r1-4/6    a raw peer (AF_PACKET on the far end of a veth pair) connects
 *             to our listener: SYN, ACK, data, ACKs of our data, FIN, each
 *             with random option bytes (NOP/EOL mixtures, truncated lists,
 *             bad option lengths, bad data offsets, bad checksums);
 *   r2-4/6    our socket connects to the raw peer, which answers with a
 *             random SYN-ACK, ACKs and FIN.
 * With the raw peer our end sends a byte or up to 4,000 (cut into segments
 * of the MSS less the reserved option space: one segment per skb and no
 * segmentation offload on the veth, so that how TCP groups them cannot
 * follow its RTT-based pacing rate), and the peer ACKs until all is acked.
 *
 * Nothing a case observes may depend on timing.  After every packet the raw
 * peer sends a probe (a SYN to a closed port) and reads up to the probe's
 * RST: the packets in between are exactly what the kernel answered.  All
 * routes have the quickack metric (no delayed ACK) and a minimum RTO of 5 s,
 * the program sets the SYN timeout to 10 s, tail loss probes, RACK and
 * autocorking are off, everything runs on CPU 0, a retransmission (a
 * timer's, should a case still run longer than an RTO) is left out of what
 * the peer saw, the peer echoes no timestamp of ours (they differ per boot; in
 * syncookie mode a wrong echo would even decode to random options), and
 * RTO/retransmission callbacks are not recorded.  Two boots of stock with
 * one seed print the same lines.
 *
 * Each case prints one line, "# obs c<n> ...": the case's kind, every step's
 * result (connect, accept, bytes read, errnos, socket state), the packets on
 * the wire (flags, relative seq/ack, payload length, options; timestamp,
 * SACK and fast open cookie values masked), and for each (side, op, class)
 * the program saw first: skb_len, skb_tcp_flags, args[0], the callback
 * flags, the state, skb_data's options and every helper's return value with
 * the bytes bpf_load_hdr_opt() and bpf_getsockopt(TCP_BPF_SYN) copied.
 *
 * Environment: KTEST_SEED (random if unset, always printed), KTEST_FUZZ_CASES,
 * KTEST_FUZZ_SECONDS (time bound), KTEST_CASE ("n" or "n-m": only those
 * cases of the seed, with the raw peer's packets and the TCP and IP counters
 * each changed as "# dbg" lines:
 * KTEST_SEED=<seed> KTEST_CASE=<n> scripts/run-group.sh bpf-tcp-hdr-opt-fuzz).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/types.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "hdr_fuzz.h"
#include "hdr_fuzz.skel.h"
#include "hdr_net.h"
#include "../fuzz_rng.h"
#include "kselftest.h"

#ifndef TCP_FASTOPEN_NO_COOKIE
#define TCP_FASTOPEN_NO_COOKIE 34
#endif
#ifndef TCP_SAVE_SYN
#define TCP_SAVE_SYN 27
#endif

#define WAIT_MS		2000	/* the longest any step waits */
#define CLOSED_PORT	1	/* nothing listens here: the probes' target */
#define PROBE_PORT	9	/* the raw peer's port for probes */
#define CGROUP		"/sys/fs/cgroup/hdr-fuzz"

static struct hdr_fuzz *skel;
static bool debug;
static struct hf_cfg *cfg;
static struct hf_slot *res;
/* calls refused by patches/fixes/0008 (not made on stock), their results hidden */
static unsigned char guarded[HF_NOPS][HF_NCLASS][HF_NCALLS];
static bool on_stock, route_guard;
static unsigned long guard_calls, guard_bad, oversize, max_frame;

static const unsigned char fake_mac[6] = { 0x02, 0, 0, 0, 0, 0x02 };
static unsigned char k_mac[6];
static int veth1_idx, lo_fd = -1, raw_fd = -1;
static const unsigned char k4[4] = { 10, 0, 0, 1 };
static const unsigned char k6[16] = { 0xfd, 0, [15] = 1 };

/* ------------------------------------------------------------------ */
/* the observation line */

static char obs[1 << 16];
static size_t olen;

static void add(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fuzz_obs_vappend(obs, sizeof(obs), &olen, fmt, ap);
	va_end(ap);
}

/* Options whose values differ from boot to boot: timestamps, SACK blocks, fast open cookies. */
static bool masked(const unsigned char *p, int n)
{
	if (p[0] == 8 || p[0] == 5 || p[0] == 34)
		return true;
	return (p[0] == 253 || p[0] == 254) && n >= 4 && p[2] == 0xf9 && p[3] == 0x89;
}

/*
 * Option bytes in hex; anything that looks like a timestamp option (08 0a)
 * has its value masked, also where a list stopped parsing: the kernel's
 * timestamps differ from boot to boot.
 */
static void add_hex_ts(const unsigned char *p, int n)
{
	for (int i = 0; i < n; i++) {
		if (p[i] == 8 && i + 1 < n && p[i + 1] == 10) {
			add("080a*");
			i += 9;
			continue;
		}
		add("%02x", p[i]);
	}
}

/* An option list; every option that does not parse ends it with '!' and the rest in hex. */
static void add_opts(const unsigned char *p, int n)
{
	int i = 0;

	add("{");
	while (i < n) {
		if (i)
			add(",");
		if (p[i] == 0) {		/* EOL: the rest is padding */
			add("00|");
			add_hex_ts(p + i + 1, n - i - 1);
			break;
		}
		if (p[i] == 1) {		/* a run of NOPs: 01x<count> */
			int k = i;

			while (k < n && p[k] == 1)
				k++;
			add(k - i > 1 ? "01x%d" : "01", k - i);
			i = k;
			continue;
		}
		if (n - i < 2 || p[i + 1] < 2 || p[i + 1] > n - i) {
			add("!");
			if (masked(p + i, n - i))
				add("%02x*", p[i]);
			else
				add_hex_ts(p + i, n - i);
			break;
		}
		if (masked(p + i, p[i + 1]))
			add("%02x%02x*", p[i], p[i + 1]);
		else
			add_hex_ts(p + i, p[i + 1]);
		i += p[i + 1];
	}
	add("}");
}

static void add_flags(unsigned int f)
{
	static const char l[] = "FSRPAUEC";

	for (int i = 0; i < 8; i++)
		if (f & (1 << i))
			add("%c", l[i]);
	if (!f)
		add("0");
}

static const char *errname(int e)
{
	static char b[16];

	switch (e) {
	case 0: return "0";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EINVAL: return "EINVAL";
	case ENOSPC: return "ENOSPC";
	case EEXIST: return "EEXIST";
	case EFAULT: return "EFAULT";
	case ENOMSG: return "ENOMSG";
	case EAGAIN: return "EAGAIN";
	case EINPROGRESS: return "EINPROGRESS";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ECONNRESET: return "ECONNRESET";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EPIPE: return "EPIPE";
	case ENOTCONN: return "ENOTCONN";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOPROTOOPT: return "ENOPROTOOPT";
	}
	snprintf(b, sizeof(b), "E%d", e);
	return b;
}

/* a syscall's result: the value, or the errno's name */
static void add_res(const char *what, long r)
{
	if (r < 0)
		add(" %s=%s", what, errname(errno));
	else
		add(" %s=%ld", what, r);
}

/* ------------------------------------------------------------------ */
/* the program's configuration */

static unsigned char pool[3], pool_magic[2][4];
static bool cookie_mode;

static unsigned int some_kind(void)
{
	static const unsigned char std[] = { 2, 3, 4, 5, 8, 34, 19, 30 };
	unsigned int r = pick(25);

	if (r < 15)
		return pool[pick(3)];
	if (r < 19)
		return std[pick(sizeof(std))];
	if (r < 21)
		return 253 + pick(2);
	if (r < 22)
		return pick(2);			/* EOL, NOP: refused */
	return pick(256);
}

static void fill(unsigned char *b, int n)
{
	for (int i = 0; i < n; i++)
		b[i] = next();
}

static uint64_t some_flags(void)
{
	switch (pick(12)) {
	case 0: return 1;		/* BPF_LOAD_HDR_OPT_TCP_SYN */
	case 1: return 1ULL << pick(64);
	case 2: return next();
	default: return 0;
	}
}

static void gen_store(struct hf_call *c)
{
	unsigned int k = some_kind(), klen, len;

	fill(c->buf, HF_BUF);
	switch (pick(10)) {
	case 0: klen = pick(2); break;		/* 0, 1 */
	case 1: klen = 2 + pick(39); break;
	case 2: klen = pick(256); break;
	default: klen = 2 + pick(11); break;
	}
	if ((k == 253 || k == 254) && pick(4)) {
		klen = pick(3) ? 4 : 4 + pick(8);
		memcpy(c->buf + 2, pool_magic[pick(2)], 4);
	}
	c->buf[0] = k;
	c->buf[1] = klen;
	switch (pick(8)) {
	case 0: len = 1 + pick(HF_BUF); break;
	case 1: len = klen + pick(9); break;
	case 2: len = klen > 1 ? klen - 1 : 1; break;
	default: len = klen; break;
	}
	if (len < 1)
		len = 1;
	if (len > HF_BUF)
		len = HF_BUF;
	c->helper = HF_STORE;
	c->len = len - 1;
	c->flags = pick(8) ? 0 : some_flags();
}

static void gen_load(struct hf_call *c)
{
	unsigned int k = some_kind(), len;

	fill(c->buf, HF_BUF);
	c->buf[0] = k;
	if (k == 253 || k == 254) {
		c->buf[1] = pick(6) ? (pick(2) ? 4 : 6) : pick(256);
		if (pick(4))
			memcpy(c->buf + 2, pool_magic[pick(2)], 4);
	} else {
		c->buf[1] = pick(6) ? 0 : pick(256);
	}
	switch (pick(6)) {
	case 0: case 1: len = HF_BUF; break;
	case 2: len = 40; break;
	case 3: len = 2 + pick(11); break;
	default: len = 1 + pick(HF_BUF); break;
	}
	c->helper = HF_LOAD;
	c->len = len - 1;
	c->flags = pick(4) ? 0 : pick(2) ? 1 : some_flags();
}

static void gen_reserve(struct hf_call *c)
{
	switch (pick(12)) {
	case 0: c->arg = 0; break;
	case 1: c->arg = pick(45); break;
	case 2: c->arg = 36 + pick(10); break;
	case 3: c->arg = next(); break;
	case 4: c->arg = -(int)pick(4); break;
	default: c->arg = 1 + pick(12); break;
	}
	c->helper = HF_RESERVE;
	c->flags = pick(10) ? 0 : some_flags();
}

static void gen_getsockopt(struct hf_call *c)
{
	static const unsigned int names[] = { 1005, 1006, 1007, 1005, 1006, 1007, 1004, 1008 };

	c->helper = HF_GETSOCKOPT;
	c->arg = names[pick(8)];
	c->len = pick(3) ? HF_BUF - 1 : pick(HF_BUF);
	fill(c->buf, HF_BUF);
}

/* sock_ops' levels and options in 6.1 (net/core/filter.c), and some it refuses */
#define HF_SOL_IP	0
#define HF_SOL_SOCKET	1
#define HF_SOL_TCP	6
#define HF_SOL_IPV6	41

static void put_int(struct hf_call *c, int v)
{
	memcpy(c->buf, &v, sizeof(v));
	/* the length is len % HF_BUF + 1: 4 bytes, or now and then another */
	c->len = pick(10) ? 3 : pick(HF_BUF);
}

static int one_of(const int *v, unsigned int n)
{
	return v[pick(n)];
}

#define ONE_OF(...) one_of((const int[]){ __VA_ARGS__ }, \
			   sizeof((const int[]){ __VA_ARGS__ }) / sizeof(int))

static void gen_setsockopt(struct hf_call *c)
{
	static const char *const cc[] = { "reno", "cubic", "bogus", "", "reno" };
	unsigned int level, opt;
	int v;

	fill(c->buf, HF_BUF);
	c->helper = HF_SETSOCKOPT;
	switch (pick(25)) {
	case 0: level = HF_SOL_SOCKET; opt = 2; v = pick(2); break;	/* SO_REUSEADDR */
	case 1: level = HF_SOL_SOCKET; opt = 7 + pick(2);		/* SO_SNDBUF, SO_RCVBUF */
		v = ONE_OF(0, 2048, 4608, 65536, 1 << 20, -1); break;
	case 2: level = HF_SOL_SOCKET; opt = 9; v = pick(2); break;	/* SO_KEEPALIVE */
	case 3: level = HF_SOL_SOCKET; opt = 12; v = ONE_OF(0, 6, 7, 100); break;	/* SO_PRIORITY */
	case 4: level = HF_SOL_SOCKET; opt = 15; v = pick(2); break;	/* SO_REUSEPORT */
	case 5: level = HF_SOL_SOCKET; opt = 18; v = pick(2); break;	/* SO_RCVLOWAT */
	case 6: level = HF_SOL_SOCKET; opt = 36; v = next(); break;	/* SO_MARK */
	case 7: level = HF_SOL_SOCKET; opt = 47; v = -1; break;		/* SO_MAX_PACING_RATE */
	/* SO_BINDTOIFINDEX: unbinding drops the route; binding anywhere would cut the case off */
	case 8: level = HF_SOL_SOCKET; opt = 62; v = ONE_OF(0, -1); break;
	case 9: level = HF_SOL_SOCKET; opt = 74; v = ONE_OF(-1, 0, 1, 5); break; /* SO_TXREHASH */
	case 10: level = HF_SOL_SOCKET; opt = 25;			/* SO_BINDTODEVICE */
		memset(c->buf, 0, 8);
		if (pick(2))
			memcpy(c->buf, "nodev0", 6);
		c->len = pick(2) ? 6 : pick(HF_BUF);
		c->arg = level << 16 | opt;
		return;
	case 11: level = HF_SOL_SOCKET; opt = ONE_OF(1, 6, 20, 99); v = 1; break; /* refused */
	case 12: level = HF_SOL_TCP; opt = 1; v = pick(2); break;	/* TCP_NODELAY */
	case 13: level = HF_SOL_TCP; opt = 2; v = ONE_OF(0, 88, 536, 1000, 1400, 70000); break;
	case 14: level = HF_SOL_TCP; opt = 4 + pick(2);		/* TCP_KEEPIDLE, _KEEPINTVL */
		v = ONE_OF(3600, 7200, 0, -1, 40000); break;
	case 15: level = HF_SOL_TCP; opt = ONE_OF(6, 7);		/* TCP_KEEPCNT, TCP_SYNCNT */
		v = ONE_OF(0, 1, 3, 200); break;
	case 16: level = HF_SOL_TCP; opt = 10; v = ONE_OF(0, 1000, 20000, 1 << 20, -1); break;
	case 17: level = HF_SOL_TCP; opt = 16; v = ONE_OF(0, 1, 2); break; /* THIN_LINEAR_TIMEOUTS */
	case 23: level = HF_SOL_TCP; opt = ONE_OF(18, 25);	/* USER_TIMEOUT, NOTSENT_LOWAT */
		v = ONE_OF(0, 3600000, 1 << 21, -1); break;
	case 18: level = HF_SOL_TCP; opt = 27; v = ONE_OF(0, 1, 2, 3); break; /* TCP_SAVE_SYN */
	case 19: level = HF_SOL_TCP; opt = 13;				/* TCP_CONGESTION */
		memset(c->buf, 0, 16);
		strcpy((char *)c->buf, cc[pick(5)]);
		c->len = pick(4) ? 15 : pick(HF_BUF);
		c->arg = level << 16 | opt;
		return;
	case 20: level = HF_SOL_TCP; opt = 1001 + pick(4);	/* TCP_BPF_IW .. TCP_BPF_RTO_MIN */
		v = ONE_OF(0, 1, 10, 40, 5000, 200000, 1000000000, -1); break;
	case 21: level = HF_SOL_TCP; opt = ONE_OF(3, 8, 12, 1005, 1006, 99); /* refused */
		v = 1; break;
	case 22: level = ONE_OF(HF_SOL_IP, HF_SOL_IPV6);		/* IP_TOS, IPV6_TCLASS, ... */
		opt = level == HF_SOL_IP ? ONE_OF(1, 1, 2) : ONE_OF(67, 70, 67, 26);
		v = ONE_OF(0, 1, 0x10, 0x28, 0xb8, 255, 256, -1); break;
	default: level = ONE_OF(17, 99, 255); opt = 1; v = 1; break;	/* other levels */
	}
	c->arg = level << 16 | opt;
	put_int(c, v);
}

static void gen_getsockopt_any(struct hf_call *c)
{
	unsigned int level, opt;

	fill(c->buf, HF_BUF);
	c->helper = HF_GETSOCKOPT_ANY;
	c->len = pick(8) ? 3 : pick(HF_BUF);
	switch (pick(6)) {
	case 0:
		level = HF_SOL_SOCKET;
		opt = ONE_OF(2, 7, 8, 9, 12, 15, 18, 36, 47, 62, 74, 25, 1);
		break;
	case 1: case 2:
		level = HF_SOL_TCP;
		opt = ONE_OF(1, 2, 4, 5, 6, 7, 10, 16, 18, 25, 27, 13, 28, 1001, 3);
		if (opt == 13 || opt == 28)	/* TCP_CONGESTION, TCP_SAVED_SYN */
			c->len = pick(3) ? 15 : pick(HF_BUF);
		break;
	case 3: level = HF_SOL_IP; opt = ONE_OF(1, 2); break;
	case 4: level = HF_SOL_IPV6; opt = ONE_OF(67, 70, 26); break;
	default: level = ONE_OF(17, 99); opt = 1; break;
	}
	c->arg = level << 16 | opt;
}

/*
 * Calls that stock 6.1 cannot survive: 1, TCP_NODELAY or TCP_CONGESTION from the
 * header option callbacks (fixes/0008: must fail with EBUSY elsewhere); 2, an
 * option that drops the route (SO_MARK, IP_TOS, IPV6_TCLASS, SO_BINDTODEVICE,
 * SO_BINDTOIFINDEX) from the callbacks tcp_connect() runs before a Fast Open
 * SYN looks its cookie up: TIMEOUT_INIT, RWND_INIT, NEEDS_ECN (fixes/0018).
 * 0: any other call.
 */
static int crashes_stock(const struct hf_call *c, unsigned int op)
{
	unsigned int level = c->arg >> 16, opt = c->arg & 0xffff;

	if (c->helper != HF_SETSOCKOPT)
		return 0;
	if (level == HF_SOL_TCP && (opt == 1 || opt == 13) &&
	    (op == BPF_SOCK_OPS_HDR_OPT_LEN_CB || op == BPF_SOCK_OPS_WRITE_HDR_OPT_CB))
		return 1;
	if (((level == HF_SOL_SOCKET && (opt == 36 || opt == 25 || opt == 62)) ||
	     (level == HF_SOL_IP && opt == 1) || (level == HF_SOL_IPV6 && opt == 67)) &&
	    (op == BPF_SOCK_OPS_TIMEOUT_INIT || op == BPF_SOCK_OPS_RWND_INIT ||
	     op == BPF_SOCK_OPS_NEEDS_ECN))
		return 2;
	return 0;
}

static unsigned int gen_cb_flags(void)
{
	unsigned int f = 0;

	if (pick(5))
		f |= BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG;
	if (pick(2))
		f |= BPF_SOCK_OPS_PARSE_ALL_HDR_OPT_CB_FLAG;
	if (pick(2))
		f |= BPF_SOCK_OPS_PARSE_UNKNOWN_HDR_OPT_CB_FLAG;
	if (!pick(5))
		f |= BPF_SOCK_OPS_STATE_CB_FLAG;
	if (!pick(5))
		f |= BPF_SOCK_OPS_RTT_CB_FLAG;
	if (!pick(10))
		f |= BPF_SOCK_OPS_RTO_CB_FLAG | BPF_SOCK_OPS_RETRANS_CB_FLAG;
	if (!pick(12))
		f |= 0x80u << pick(24);
	return f;
}

/* One call: the op's usual helper most of the time, any other now and then. */
static void gen_call(struct hf_call *c, unsigned int op)
{
	unsigned int r = pick(100);

	memset(c, 0, sizeof(*c));
	/* from every op: a socket option, set or read */
	switch (pick(100)) {
	case 0 ... 7:
		return gen_setsockopt(c);
	case 8 ... 11:
		return gen_getsockopt_any(c);
	}
	switch (op) {
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		if (r < 75)
			return gen_reserve(c);
		if (r < 85)
			return gen_store(c);
		if (r < 95)
			return gen_load(c);
		return;
	case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
		if (r < 65)
			return gen_store(c);
		if (r < 82)
			return gen_load(c);
		if (r < 90)
			return gen_reserve(c);
		if (r < 95)
			return gen_getsockopt(c);
		return;
	case BPF_SOCK_OPS_PARSE_HDR_OPT_CB:
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		if (r < 55)
			return gen_load(c);
		if (r < 72)
			return gen_getsockopt(c);
		if (r < 80)
			return gen_store(c);
		if (r < 87)
			return gen_reserve(c);
		if (r < 95 && op != BPF_SOCK_OPS_PARSE_HDR_OPT_CB) {
			c->helper = HF_CB_FLAGS;
			c->arg = gen_cb_flags();
		}
		return;
	default:
		switch (r % 6) {
		case 0: return gen_load(c);
		case 1: return gen_store(c);
		case 2: return gen_reserve(c);
		case 3: return gen_getsockopt(c);
		}
		return;
	}
}

static void gen_cfg(unsigned int port)
{
	unsigned int op, cl, i;

	memset(cfg, 0, sizeof(*cfg));
	cfg->port = port;
	for (i = 0; i < 3; i++)
		pool[i] = pick(4) ? 9 + pick(244) : pick(256);
	for (i = 0; i < 2; i++) {
		fill(pool_magic[i], 4);
		if (!pick(3))
			memcpy(pool_magic[i], (unsigned char[]){ 0xeb, 0x9f }, 2);
	}
	for (op = 0; op < HF_NOPS; op++) {
		bool hdr_op = op == BPF_SOCK_OPS_HDR_OPT_LEN_CB ||
			      op == BPF_SOCK_OPS_WRITE_HDR_OPT_CB ||
			      op == BPF_SOCK_OPS_PARSE_HDR_OPT_CB ||
			      op == BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB ||
			      op == BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB;

		for (cl = 0; cl < HF_NCLASS; cl++) {
			cfg->ret[op][cl] = pick(10) ? 1 : 0;
			if (!hdr_op && pick(4))
				continue;
			for (i = 0; i < HF_NCALLS; i++)
				gen_call(&cfg->calls[op][cl][i], op);
		}
	}
	/* where the callback flags are set: before the SYN, and on the listener */
	for (op = 0; op < 2; op++) {
		struct hf_call *c = cfg->calls[op ? BPF_SOCK_OPS_TCP_LISTEN_CB :
					       BPF_SOCK_OPS_TCP_CONNECT_CB][HF_CL_NONE];

		memset(&c[0], 0, sizeof(c[0]));
		c[0].helper = HF_CB_FLAGS;
		c[0].arg = gen_cb_flags();
		if (op && pick(5) < 3) {
			memset(&c[1], 0, sizeof(c[1]));
			c[1].helper = HF_SAVE_SYN;
			c[1].arg = pick(4) ? 1 : pick(3);
		}
	}
	route_guard = false;
	for (op = 0; op < HF_NOPS; op++)
		for (cl = 0; cl < HF_NCLASS; cl++)
			for (i = 0; i < HF_NCALLS; i++) {
				struct hf_call *c = &cfg->calls[op][cl][i];

				guarded[op][cl][i] = crashes_stock(c, op);
				route_guard |= guarded[op][cl][i] == 2;
				if (guarded[op][cl][i] && on_stock)
					c->helper = HF_NONE;
			}
}

static const char *const helper_name[HF_NHELPERS] = {
	"-", "ld", "st", "rs", "gs", "sv", "cb", "so", "go",
};

static void add_slots(void)
{
	for (unsigned int k = 0; k < HF_NSLOTS; k++) {
		struct hf_slot *s = &res[k];
		unsigned int side = k / (HF_NOPS * HF_NCLASS), op = k / HF_NCLASS % HF_NOPS;
		unsigned int cl = k % HF_NCLASS;

		if (!s->seen)
			continue;
		add(" %c%u.%u:l%u,f%x,a%u,cb%x,st%u,fs%u,h%u", side ? 's' : 'c', op, cl,
		    s->skb_len, s->tcp_flags, s->args0, s->cb_flags, s->state, s->full, s->hdr);
		if (s->hdr > 20)
			add_opts(s->opt, s->hdr - 20 > HF_HDR ? HF_HDR : s->hdr - 20);
		for (unsigned int i = 0; i < HF_NCALLS; i++) {
			struct hf_call *c = &cfg->calls[op][cl][i];
			struct hf_rec *r = &s->r[i];
			int len = c->len % HF_BUF + 1;

			if (guarded[op][cl][i]) {
				/* made on every kernel but stock; 0008's must be refused */
				if (!on_stock && guarded[op][cl][i] == 1) {
					guard_calls++;
					guard_bad += r->ret != -EBUSY;
				}
				add(",so%u.%u=*", c->arg >> 16, c->arg & 0xffff);
				continue;
			}
			if (c->helper == HF_NONE || c->helper >= HF_NHELPERS)
				continue;
			if (c->helper == HF_SETSOCKOPT || c->helper == HF_GETSOCKOPT_ANY)
				add(",%s%u.%u=", helper_name[c->helper], c->arg >> 16, c->arg & 0xffff);
			else
				add(",%s=", helper_name[c->helper]);
			if (r->ret < 0)
				add("%s", errname(-r->ret));
			else
				add("%lld", (long long)r->ret);
			if (c->helper == HF_LOAD && (r->ret > 0 || r->ret == -ENOSPC))
				add_opts(r->buf, r->ret > 0 ? (r->ret < len ? r->ret : len) : len);
			if (c->helper == HF_GETSOCKOPT && c->arg == 1005 &&
			    (r->ret > 0 || r->ret == -ENOSPC)) {
				int n = r->ret > 0 ? r->ret : len;

				if (n > 20)
					add_opts(r->buf + 20, n - 20);
				if (n > 13)
					add("d%x", r->buf[12] >> 4);
			}
			/*
			 * What bpf_getsockopt() read: an int, or a congestion
			 * control's name; not a saved SYN (its timestamps and
			 * sequence number differ per boot).
			 */
			if (c->helper == HF_GETSOCKOPT_ANY && r->ret == 0 &&
			    c->arg != (HF_SOL_TCP << 16 | 28)) {
				if (c->arg == (HF_SOL_TCP << 16 | 13))
					add("'%.*s'", (int)strnlen((char *)r->buf, len), r->buf);
				else if (route_guard &&
					 (c->arg == (HF_SOL_SOCKET << 16 | 36) ||
					  c->arg == (HF_SOL_SOCKET << 16 | 12) ||
					  c->arg == (HF_SOL_IP << 16 | 1) ||
					  c->arg == (HF_SOL_IPV6 << 16 | 67)))
					/* a mark or TOS the guarded call set, not on stock */
					add("v*");
				else if (len == 4 && (c->arg == (HF_SOL_IP << 16 | 1) ||
						      c->arg == (HF_SOL_IPV6 << 16 | 67)))
					/*
					 * IP_TOS, IPV6_TCLASS: TCP sets and clears the ECN
					 * field per segment it sends (INET_ECN_xmit()), so
					 * its value at a callback depends on timing (seen:
					 * 0 and 2 on one kernel for one seed); "e" marks it
					 * left out.
					 */
					add("v%de", *(int *)r->buf & ~3);
				else if (len == 4)
					add("v%d", *(int *)r->buf);
			}
		}
	}
}

/* ------------------------------------------------------------------ */
/* packets */

struct pkt {
	bool v6;
	uint16_t sport, dport;
	uint32_t seq, ack;
	unsigned int flags, doff, dlen, optlen;
	unsigned char opt[60];
};

static uint16_t csum_fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return ~s;
}

static uint32_t csum_add(uint32_t s, const unsigned char *p, int n)
{
	for (int i = 0; i + 1 < n; i += 2)
		s += p[i] << 8 | p[i + 1];
	if (n & 1)
		s += p[n - 1] << 8;
	return s;
}

/* the case's peer */
struct peer {
	bool v6;
	unsigned char addr[16];		/* the raw peer's */
	const unsigned char *kaddr;	/* ours */
	uint16_t kport, pport;		/* our port, the peer's */
	uint32_t kisn, piss;		/* the two initial sequence numbers */
	uint32_t k_high;		/* the end of what we sent (what a peer would ACK) */
	uint32_t last_ack;		/* the ACK field of the peer's last segment */
	bool resyn;			/* our SYN (or SYN-ACK) was seen again */
	bool kisn_known;
	bool badsum;
};

/* Send one TCP segment from the raw peer: options as given, @doff as given (0: fitting). */
static int raw_send(struct peer *pe, uint16_t sport, uint16_t dport, uint32_t seq, uint32_t ack,
		    unsigned int flags, const unsigned char *opt, unsigned int optlen,
		    unsigned int doff, const unsigned char *data, unsigned int dlen, uint16_t win,
		    bool badsum)
{
	unsigned char f[14 + 40 + 60 + 64] = {};
	unsigned char *ip = f + 14, *th;
	unsigned int iphl = pe->v6 ? 40 : 20, tlen = 20 + optlen + dlen;
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_ifindex = veth1_idx,
				   .sll_halen = 6 };
	uint32_t s = 0;

	memcpy(f, k_mac, 6);
	memcpy(f + 6, fake_mac, 6);
	f[12] = pe->v6 ? 0x86 : 0x08;
	f[13] = pe->v6 ? 0xdd : 0x00;
	if (pe->v6) {
		ip[0] = 0x60;
		ip[4] = tlen >> 8;
		ip[5] = tlen;
		ip[6] = IPPROTO_TCP;
		ip[7] = 64;
		memcpy(ip + 8, pe->addr, 16);
		memcpy(ip + 24, pe->kaddr, 16);
	} else {
		ip[0] = 0x45;
		ip[2] = (20 + tlen) >> 8;
		ip[3] = 20 + tlen;
		ip[6] = 0x40;		/* DF */
		ip[8] = 64;
		ip[9] = IPPROTO_TCP;
		memcpy(ip + 12, pe->addr, 4);
		memcpy(ip + 16, pe->kaddr, 4);
		s = csum_fold(csum_add(0, ip, 20));
		ip[10] = s >> 8;
		ip[11] = s;
	}
	th = ip + iphl;
	th[0] = sport >> 8;
	th[1] = sport;
	th[2] = dport >> 8;
	th[3] = dport;
	for (int i = 0; i < 4; i++) {
		th[4 + i] = seq >> (24 - 8 * i);
		th[8 + i] = ack >> (24 - 8 * i);
	}
	th[12] = (doff ? doff : (20 + optlen) / 4) << 4;
	th[13] = flags;
	th[14] = win >> 8;
	th[15] = win;
	memcpy(th + 20, opt, optlen);
	memcpy(th + 20 + optlen, data, dlen);
	/* pseudo header */
	s = pe->v6 ? csum_add(0, ip + 8, 32) : csum_add(0, ip + 12, 8);
	s += IPPROTO_TCP + tlen;
	s = csum_fold(csum_add(s, th, tlen));
	if (badsum)
		s ^= 0x5a5a;
	th[16] = s >> 8;
	th[17] = s;
	memcpy(sll.sll_addr, k_mac, 6);
	if (sport != PROBE_PORT)
		pe->last_ack = ack;
	if (debug && sport != PROBE_PORT)
	{
		printf("# dbg tx flags %x seq %d ack %d win %u doff %u dlen %u sum %d opts ",
		       flags, (int)(seq - pe->piss), (int)(ack - pe->kisn), win, doff, dlen,
		       !badsum);
		for (unsigned int i = 0; i < optlen; i++)
			printf("%02x", opt[i]);
		printf("\n");
	}
	return sendto(raw_fd, f, 14 + iphl + tlen, 0, (struct sockaddr *)&sll, sizeof(sll));
}

/* Parse a frame the kernel sent to the peer; false if it is not TCP between the two. */
static bool parse_frame(const unsigned char *f, int n, struct peer *pe, struct pkt *p)
{
	const unsigned char *ip = f + 14, *th;
	unsigned int iphl, tlen;

	if (n < 14 + 20)
		return false;
	if (pe->v6) {
		if (f[12] != 0x86 || f[13] != 0xdd || n < 14 + 40 + 20 || ip[6] != IPPROTO_TCP ||
		    memcmp(ip + 8, pe->kaddr, 16) || memcmp(ip + 24, pe->addr, 16))
			return false;
		iphl = 40;
		tlen = ip[4] << 8 | ip[5];
	} else {
		if (f[12] != 0x08 || f[13] != 0 || ip[9] != IPPROTO_TCP ||
		    memcmp(ip + 12, pe->kaddr, 4) || memcmp(ip + 16, pe->addr, 4))
			return false;
		iphl = (ip[0] & 15) * 4;
		tlen = (ip[2] << 8 | ip[3]) - iphl;
	}
	th = ip + iphl;
	if (14 + iphl + tlen > (unsigned int)n || tlen < 20)
		return false;
	memset(p, 0, sizeof(*p));
	p->v6 = pe->v6;
	p->sport = th[0] << 8 | th[1];
	p->dport = th[2] << 8 | th[3];
	p->seq = (uint32_t)th[4] << 24 | th[5] << 16 | th[6] << 8 | th[7];
	p->ack = (uint32_t)th[8] << 24 | th[9] << 16 | th[10] << 8 | th[11];
	p->doff = th[12] >> 4;
	p->flags = th[13];
	if (p->doff * 4 > tlen || p->doff < 5)
		return false;
	p->optlen = p->doff * 4 - 20;
	memcpy(p->opt, th + 20, p->optlen);
	p->dlen = tlen - p->doff * 4;
	return true;
}

/*
 * After the raw peer's packet (or our socket's, sent already): the probe, a
 * SYN to a closed port, and every packet the kernel sent to the peer until
 * the probe's RST.  Packets between the case's two ports go to @out.
 */
static int collect(struct peer *pe, struct pkt *out, int max)
{
	unsigned char f[2048];
	struct pkt p;
	int n = 0;

	if (raw_send(pe, PROBE_PORT, CLOSED_PORT, 0x50000000, 0, 0x02, NULL, 0, 0, NULL, 0,
		     65535, false) < 0)
		return -errno;
	for (;;) {
		struct pollfd pfd = { .fd = raw_fd, .events = POLLIN };
		struct sockaddr_ll sll;
		socklen_t sl = sizeof(sll);
		int len;

		if (poll(&pfd, 1, WAIT_MS) <= 0)
			return -ETIMEDOUT;
		len = recvfrom(raw_fd, f, sizeof(f), MSG_DONTWAIT | MSG_TRUNC,
			       (struct sockaddr *)&sll, &sl);
		if (len < 0 || sll.sll_pkttype == PACKET_OUTGOING)
			continue;
		/* what the kernel sent on the veth: never beyond its MTU (1500) */
		if ((unsigned long)len > max_frame)
			max_frame = len;
		if (len > 14 + 1500)
			oversize++;
		if (len > (int)sizeof(f) || !parse_frame(f, len, pe, &p))
			continue;
		if (p.sport == CLOSED_PORT && p.dport == PROBE_PORT)
			return n;
		if (p.dport != pe->pport || (pe->kport && p.sport != pe->kport))
			continue;
		/* our SYN (r2) or SYN-ACK (r1) gives our port and initial sequence number */
		if ((p.flags & 0x06) == 0x02 && !pe->kisn_known) {
			pe->kport = p.sport;
			pe->kisn = p.seq;
			pe->kisn_known = true;
			pe->k_high = p.seq;
		}
		if (!(p.flags & 0x04) && pe->kisn_known) {
			uint32_t end = p.seq + p.dlen + !!(p.flags & 0x02) + (p.flags & 0x01);

			/*
			 * A retransmission (a timer's: the case ran too long,
			 * not something it observes) is left out.
			 */
			if (end != p.seq && (int32_t)(end - pe->k_high) <= 0 &&
			    !(p.seq == pe->kisn && end == pe->kisn + 1 && pe->k_high == pe->kisn)) {
				pe->resyn |= !!(p.flags & 0x02);
				continue;
			}
			if ((int32_t)(end - pe->k_high) > 0)
				pe->k_high = end;
		}
		if (n < max)
			out[n++] = p;
	}
}

static void add_pkt(struct peer *pe, const struct pkt *p)
{
	add(" ");
	add_flags(p->flags);
	/*
	 * seq relative to our initial one; a RST answers an ACK with that ACK
	 * (s=ack: it may be a bad one, drawn from the seed) and other segments
	 * with 0
	 */
	if (pe && (p->flags & 0x04) && p->seq == pe->last_ack)
		add(":s=ack");
	else if (pe && (p->flags & 0x04) && !p->seq)
		add(":S0");
	else if (pe && pe->kisn_known)
		add(":s%d", (int)(p->seq - pe->kisn));
	if (pe && (p->flags & 0x10))
		add(":a%d", (int)(p->ack - pe->piss));
	if (p->dlen)
		add(":d%u", p->dlen);
	add_opts(p->opt, p->optlen);
}

/* Whether two packets' options print the same (timestamps masked). */
static int masked_memcmp(const struct pkt *a, const struct pkt *b)
{
	size_t save = olen;
	char x[400];
	int r;

	add_opts(a->opt, a->optlen);
	snprintf(x, sizeof(x), "%s", obs + save);
	olen = save;
	add_opts(b->opt, b->optlen);
	r = strcmp(x, obs + save);
	olen = save;
	obs[olen] = 0;
	return r;
}

/*
 * Wait until our socket @fd has sent what it may: nothing unsent, a full
 * congestion window, or no progress for 3 ms (a segment the stack cannot
 * send: see below).  TCP small queues hold segments back while earlier ones
 * are still queued on the veth, which happens when the receive work went to
 * ksoftirqd (a slow or busy guest); a tasklet sends them a moment later.
 *
 * A segment that cannot be sent: a program that reserves more option space
 * for a packet than it did when tcp_current_mss() asked (no skb,
 * BPF_WRITE_HDR_TCP_CURRENT_MSS) makes a full segment longer than the MTU;
 * IP refuses it (EMSGSIZE, FragFails) and the "fragmentation needed" it
 * sends itself names the same MTU, so the data never leaves (stock 6.1 too).
 */
static unsigned long settle_waits;

static void settle(int fd)
{
	int last = -1, same = 0;

	for (int i = 0; i < 50 && same < 3; i++) {
		struct tcp_info ti;
		socklen_t l = sizeof(ti);
		int unsent = 0;

		if (ioctl(fd, SIOCOUTQNSD, &unsent) < 0 || unsent <= 0 ||
		    getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &l) < 0 ||
		    ti.tcpi_unacked >= ti.tcpi_snd_cwnd ||
		    /* where it may send: established, close wait, FIN wait 1, last ACK, closing */
		    !((1 << ti.tcpi_state) & (1 << 1 | 1 << 8 | 1 << 4 | 1 << 9 | 1 << 11)))
			return;
		same = unsent == last ? same + 1 : 0;
		last = unsent;
		settle_waits++;
		usleep(1000);
	}
}

/*
 * Collect what the kernel sent since the last step and print it as step
 * @name.  With our socket @fd (or -1): a second probe after it settled, for
 * what TCP small queues held back past the first.
 */
static int step(const char *name, struct peer *pe, struct pkt *out, int max, int fd)
{
	int n = collect(pe, out, max);

	if (n >= 0 && fd >= 0) {
		int m;

		settle(fd);
		m = collect(pe, out + n, max - n);
		n = m < 0 ? m : n + m;
	}

	add(" %s[", name);
	if (n < 0)
		add("%s", errname(-n));
	for (int i = 0; i < n; i++) {
		int k = i + 1;

		add_pkt(pe, &out[i]);
		/* a train of like segments, each where the last ended: x<count> */
		while (k < n && out[k].flags == out[k - 1].flags && out[k].dlen == out[k - 1].dlen &&
		       out[k].seq == out[k - 1].seq + out[k - 1].dlen && out[k].ack == out[k - 1].ack &&
		       out[k].optlen == out[k - 1].optlen &&
		       !masked_memcmp(&out[k], &out[k - 1]))
			k++;
		if (k - i > 1)
			add("x%d", k - i);
		i = k - 1;
	}
	add(" ]");
	return n;
}

/* Random option bytes as a peer might send them: up to @max, the bytes used in *@len. */
static void gen_raw_opts(unsigned char *o, unsigned int *len, unsigned int max, bool syn,
			 uint32_t *tsval, bool clean)
{
	unsigned int n = 0, items = pick(8), l;

	while (items-- && n < max) {
		unsigned int room = max - n;

		switch (pick(syn ? 15 : 13)) {
		case 0:
			o[n++] = 1;
			break;
		case 1:
			o[n++] = 0;
			break;
		case 2:		/* timestamps, usually increasing */
			if (room < 10)
				break;
			o[n] = 8;
			o[n + 1] = 10;
			*tsval += clean || pick(8) ? 1 : next();
			/*
			 * The echo is 0 or drawn from the seed, never the kernel's own
			 * value (which differs from boot to boot and would show
			 * wherever the options are dumped), and always 0 under
			 * syncookies: there the kernel subtracts its per-boot offset
			 * from a non-zero echo and decodes options from what remains.
			 */
			l = cookie_mode || pick(3) ? 0 : next();
			for (int i = 0; i < 4; i++) {
				o[n + 2 + i] = *tsval >> (24 - 8 * i);
				o[n + 6 + i] = l >> (24 - 8 * i);
			}
			n += 10;
			break;
		case 3:		/* SACK blocks */
			l = 2 + 8 * pick(5);
			if (room < l)
				break;
			o[n] = 5;
			o[n + 1] = l;
			fill(o + n + 2, l - 2);
			n += l;
			break;
		case 4:		/* experimental, with a magic */
			l = 4 + pick(6);
			if (room < l)
				break;
			o[n] = 253 + pick(2);
			o[n + 1] = l;
			fill(o + n + 2, l - 2);
			if (pick(2))
				memcpy(o + n + 2, pool_magic[pick(2)], 2);
			n += l;
			break;
		case 5: case 6:	/* an unknown kind, maybe the one the program looks for */
			l = 2 + pick(9);
			if (room < l)
				break;
			o[n] = pick(2) ? pool[pick(3)] : pick(256);
			o[n + 1] = l;
			fill(o + n + 2, l - 2);
			n += l;
			break;
		case 7:		/* a length of 0 or 1 */
			if (room < 2)
				break;
			o[n] = 2 + pick(250);
			o[n + 1] = pick(2);
			n += 2;
			break;
		case 8:		/* a length past the end */
			if (room < 2)
				break;
			o[n] = pick(256);
			o[n + 1] = room + 1 + pick(10);
			n += 2;
			break;
		case 9:		/* a kind without its length */
			o[n++] = 2 + pick(250);
			break;
		case 10:
			o[n++] = next();
			break;
		case 11:	/* fast open cookie */
			l = 2 + (pick(3) ? 4 + 2 * pick(7) : pick(6));
			if (room < l)
				break;
			o[n] = 34;
			o[n + 1] = l;
			fill(o + n + 2, l - 2);
			n += l;
			break;
		case 12:	/* MSS outside a SYN, or in one */
		case 13:
			if (room < 4)
				break;
			o[n] = 2;
			o[n + 1] = pick(8) ? 4 : pick(8);
			l = pick(4) ? 1460 - pick(4) * 200 : pick(65536);
			o[n + 2] = l >> 8;
			o[n + 3] = l;
			n += 4;
			break;
		case 14:
			if (room < 3)
				break;
			o[n] = pick(2) ? 3 : 4;
			o[n + 1] = o[n] == 3 ? 3 : 2;
			if (o[n] == 3)
				o[n + 2] = pick(16);
			n += o[n + 1];
			break;
		}
	}
	/* pad to a multiple of 4 */
	l = pick(3);
	while (n % 4)
		o[n++] = l == 0 ? 1 : l == 1 ? 0 : next();
	*len = n;
}

/* A header length that lies now and then. */
static unsigned int gen_doff(unsigned int optlen)
{
	switch (pick(40)) {
	case 0: return pick(5);				/* < 5 */
	case 1: return 15;
	case 2: return (20 + optlen) / 4 + 1 + pick(3);	/* past the end */
	case 3: return optlen ? (20 + optlen) / 4 - 1 : 6;
	default: return 0;
	}
}

static unsigned int gen_syn_flags(void)
{
	unsigned int f = 0x02;

	if (!pick(8))
		f |= 0xc0;	/* ECE, CWR */
	if (!pick(20))
		f |= 1u << pick(8);
	return f;
}

/* ------------------------------------------------------------------ */
/* sockets */

static int wait_fd(int fd, short ev)
{
	struct pollfd pfd = { .fd = fd, .events = ev };
	int r = poll(&pfd, 1, WAIT_MS);

	return r > 0 ? 0 : r == 0 ? -ETIMEDOUT : -errno;
}

static int sock_err(int fd)
{
	int e = 0;
	socklen_t l = sizeof(e);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l) < 0)
		return errno;
	return e;
}

static int tcp_state(int fd)
{
	struct tcp_info ti;
	socklen_t l = sizeof(ti);

	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &l) < 0)
		return -1;
	return ti.tcpi_state;
}

static void abort_close(int fd)
{
	struct linger lg = { 1, 0 };

	if (fd < 0)
		return;
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
}

static socklen_t mkaddr(struct sockaddr_storage *ss, bool v6, const void *a, uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (v6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		memcpy(&s6->sin6_addr, a, 16);
		return sizeof(*s6);
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	s4->sin_family = AF_INET;
	s4->sin_port = htons(port);
	memcpy(&s4->sin_addr, a, 4);
	return sizeof(*s4);
}

static int listener(bool v6, const void *a, uint16_t port, bool tfo)
{
	struct sockaddr_storage ss;
	socklen_t sl = mkaddr(&ss, v6, a, port);
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1, q = 8;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (tfo) {
		setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN, &q, sizeof(q));
		setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN_NO_COOKIE, &one, sizeof(one));
	}
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, 8) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Start a connection: connect(), or sendto(MSG_FASTOPEN) of one byte. */
static int start_connect(bool v6, const void *a, uint16_t port, bool tfo, bool nodelay,
			 long *r)
{
	struct sockaddr_storage ss;
	socklen_t sl = mkaddr(&ss, v6, a, port);
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;

	if (fd < 0)
		return -1;
	if (nodelay)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (tfo) {
		setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN_NO_COOKIE, &one, sizeof(one));
		*r = sendto(fd, "f", 1, MSG_FASTOPEN, (struct sockaddr *)&ss, sl);
	} else {
		*r = connect(fd, (struct sockaddr *)&ss, sl);
	}
	return fd;
}

static long recv1(int fd)
{
	char b[16];

	return recv(fd, b, sizeof(b), MSG_DONTWAIT);
}

/* ------------------------------------------------------------------ */
/* the cases */

/* lo capture: what went out on lo between the case's ports, as a sorted set */
static void add_lo_capture(uint16_t port)
{
	char set[64][400];
	int n = 0;

	for (;;) {
		unsigned char f[2048];
		struct sockaddr_ll sll;
		socklen_t sl = sizeof(sll);
		struct pkt p;
		struct peer pe = {};
		size_t save;
		int len, i;

		len = recvfrom(lo_fd, f, sizeof(f), MSG_DONTWAIT, (struct sockaddr *)&sll, &sl);
		if (len < 0)
			break;
		if (sll.sll_pkttype != PACKET_OUTGOING || len < 14)
			continue;
		pe.v6 = f[12] == 0x86;
		if (pe.v6) {
			if (len < 14 + 40)
				continue;
			memcpy(pe.addr, f + 14 + 24, 16);
			pe.kaddr = f + 14 + 8;
		} else {
			memcpy(pe.addr, f + 14 + 16, 4);
			pe.kaddr = f + 14 + 12;
		}
		if (!parse_frame(f, len, &pe, &p) || (p.sport != port && p.dport != port))
			continue;
		save = olen;
		add("%c", p.sport == port ? 's' : 'c');
		add_pkt(NULL, &p);
		if (n < 64) {
			snprintf(set[n], sizeof(set[n]), "%s", obs + save);
			for (i = 0; i < n && strcmp(set[i], set[n]); i++)
				;
			if (i == n)
				n++;
		}
		olen = save;
		obs[olen] = 0;
	}
	qsort(set, n, sizeof(set[0]), (int (*)(const void *, const void *))strcmp);
	add(" wire[");
	for (int i = 0; i < n; i++)
		add(" %s", set[i]);
	add(" ]");
}

/*
 * KTEST_CASE="n" or "n-m" runs only those cases (a replay of one case of the
 * seed) and prints, as "# dbg" lines, the raw peer's packets and the TCP and
 * IP counters each case changed.
 */
static char netstat_before[16384];

static void read_netstat(char *b, size_t n)
{
	size_t l = 0;

	for (int i = 0; i < 2; i++) {
		int fd = open(i ? "/proc/net/snmp" : "/proc/net/netstat", O_RDONLY | O_CLOEXEC);
		ssize_t r;

		while (fd >= 0 && l < n - 1 && (r = read(fd, b + l, n - 1 - l)) > 0)
			l += r;
		if (fd >= 0)
			close(fd);
	}
	b[l] = 0;
}

static void print_netstat_diff(unsigned long c)
{
	static char after[16384];
	char *a1, *a2, *b1, *b2, *sa, *sb, *na, *va, *vb;

	read_netstat(after, sizeof(after));
	/* lines come in pairs: names, values */
	for (a1 = strtok_r(netstat_before, "\n", &sa), b1 = strtok_r(after, "\n", &sb); a1 && b1;
	     a1 = strtok_r(NULL, "\n", &sa), b1 = strtok_r(NULL, "\n", &sb)) {
		char *x, *y, *z;

		a2 = strtok_r(NULL, "\n", &sa);
		b2 = strtok_r(NULL, "\n", &sb);
		if (!a2 || !b2)
			break;
		na = strtok_r(b1, " ", &x);
		va = strtok_r(a2, " ", &y);
		vb = strtok_r(b2, " ", &z);
		while ((na = strtok_r(NULL, " ", &x)) && (va = strtok_r(NULL, " ", &y)) &&
		       (vb = strtok_r(NULL, " ", &z)))
			if (strcmp(va, vb))
				printf("# dbg c%lu %s %lld\n", c, na, atoll(vb) - atoll(va));
	}
}

static void drain(int fd)
{
	unsigned char f[2048];

	while (recv(fd, f, sizeof(f), MSG_DONTWAIT) >= 0)
		;
}

/* Both ends ours, over lo. */
static void case_lo(bool v6, uint16_t port, bool tfo)
{
	static const unsigned char l4[4] = { 127, 0, 0, 1 }, l6[16] = { [15] = 1 };
	const void *a = v6 ? (const void *)l6 : (const void *)l4;
	int l, c = -1, s = -1, b;
	long r = -1;

	drain(lo_fd);
	l = listener(v6, a, port, tfo);
	add_res("lst", l < 0 ? -1 : 0);
	if (l < 0)
		return;
	c = start_connect(v6, a, port, tfo, false, &r);
	add_res("con", r);
	if (c < 0)
		goto out;
	r = wait_fd(c, POLLOUT);
	add(" cerr=%s", r ? errname(-r) : errname(sock_err(c)));
	r = wait_fd(l, POLLIN);
	s = r ? -1 : accept4(l, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	add_res("acc", s < 0 ? -1 : 0);
	if (!tfo)
		add_res("cs", send(c, "a", 1, MSG_NOSIGNAL));
	if (s >= 0) {
		wait_fd(s, POLLIN);
		add_res("sr", recv1(s));
		add_res("ss", send(s, "b", 1, MSG_NOSIGNAL));
	}
	wait_fd(c, POLLIN);
	add_res("cr", recv1(c));
	/* the listener's side closes first */
	if (s >= 0) {
		add_res("sc", shutdown(s, SHUT_WR));
		wait_fd(c, POLLIN);
		add_res("ceof", recv1(c));
		add_res("cc", shutdown(c, SHUT_WR));
		wait_fd(s, POLLIN);
		add_res("seof", recv1(s));
	}
	add(" cst=%d", tcp_state(c));
	if (s >= 0)
		add(" sst=%d", tcp_state(s));
out:
	/* barrier: a connection refused by a closed port, after everything before it */
	b = start_connect(v6, a, CLOSED_PORT, false, false, &r);
	if (b >= 0) {
		wait_fd(b, POLLOUT);
		close(b);
	}
	add_lo_capture(port);
	add_slots();
	abort_close(s);
	abort_close(c);
	close(l);
}

static void peer_setup(struct peer *pe, bool v6, unsigned long c, uint16_t port)
{
	memset(pe, 0, sizeof(*pe));
	pe->v6 = v6;
	if (v6) {
		pe->addr[0] = 0xfd;
		pe->addr[11] = 2;
		pe->addr[12] = c >> 24;
		pe->addr[13] = c >> 16;
		pe->addr[14] = c >> 8;
		pe->addr[15] = c;
		pe->kaddr = k6;
	} else {
		pe->addr[0] = 10;
		pe->addr[1] = 1 + (c >> 16) % 250;
		pe->addr[2] = c >> 8;
		pe->addr[3] = c;
		pe->kaddr = k4;
	}
	pe->kport = port;
	pe->pport = 1024 + pick(60000);
	pe->piss = next();
	net_neigh("veth0", v6 ? AF_INET6 : AF_INET, pe->addr, fake_mac, false);
	drain(raw_fd);
}

static void peer_done(struct peer *pe)
{
	net_neigh("veth0", pe->v6 ? AF_INET6 : AF_INET, pe->addr, NULL, true);
}

/* A window: 65535 when the kernel has more than a byte to send (no persist timer). */
static uint16_t gen_win(bool big)
{
	return big || pick(6) ? 65535 : 1 + pick(65535);
}

static char bulk[4096];

/* How much our socket sends at once: a byte mostly, up to 4000 (segments of the MSS) else. */
static unsigned int gen_size(void)
{
	return pick(5) < 3 ? 1 : 1 + pick(sizeof(bulk) - 96);
}

/*
 * After our socket sent data: the peer ACKs what it got, with random options
 * (the first ACK maybe with a bad data offset or checksum, later ones clean),
 * until the kernel has nothing more to send (at most 12 rounds).
 */
static void ack_rounds(struct peer *pe, uint16_t sport, uint16_t dport, uint32_t seq,
		       uint32_t *tsval, struct pkt *rx, bool big, int fd)
{
	unsigned char o[40];
	unsigned int ol;
	char name[8];

	for (int r = 0; r < 12; r++) {
		uint32_t high = pe->k_high;

		gen_raw_opts(o, &ol, 40, false, tsval, r > 0);
		raw_send(pe, sport, dport, seq, high, 0x10, o, ol, r ? 0 : gen_doff(ol), NULL, 0,
			 gen_win(big), !r && !pick(40));
		snprintf(name, sizeof(name), "a%d", r);
		if (step(name, pe, rx, 64, fd) < 0 || (pe->k_high == high && r))
			break;
	}
}

/* The raw peer connects to our listener. */
static void case_r1(bool v6, unsigned long cn, uint16_t port, bool tfo)
{
	unsigned char o[40], data[4];
	struct pkt rx[64], *sa = NULL;
	struct peer pe;
	uint32_t tsval = next(), seq;
	unsigned int ol, fl, dl, size = gen_size();
	bool big = size > 1;
	int l, s = -1, n, one = 1;

	peer_setup(&pe, v6, cn, port);
	add(" size=%u", size);
	l = listener(v6, pe.kaddr, port, tfo);
	add_res("lst", l < 0 ? -1 : 0);
	if (l < 0)
		goto out;

	/* SYN */
	gen_raw_opts(o, &ol, 40, true, &tsval, false);
	dl = tfo && pick(2) ? 1 + pick(3) : 0;
	fill(data, sizeof(data));
	raw_send(&pe, pe.pport, port, pe.piss, pick(10) ? 0 : next(), gen_syn_flags(), o, ol,
		 gen_doff(ol), data, dl, gen_win(big), !pick(40));
	n = step("syn", &pe, rx, 64, -1);
	for (int i = 0; i < n; i++)
		if ((rx[i].flags & 0x12) == 0x12)
			sa = &rx[i];
	if (!sa)
		goto socks;
	seq = sa->ack - pe.piss == 1 + dl ? sa->ack : pe.piss + 1;

	/* ACK */
	gen_raw_opts(o, &ol, 40, false, &tsval, false);
	dl = pick(5) ? 0 : 1;
	fl = dl ? 0x18 : 0x10;
	raw_send(&pe, pe.pport, port, seq, pick(10) ? pe.k_high : next(), fl, o, ol,
		 gen_doff(ol), data, dl, gen_win(big), !pick(40));
	step("ack", &pe, rx, 64, -1);
	s = accept4(l, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	add_res("acc", s < 0 ? -1 : 0);
	if (s >= 0)
		setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (s < 0 && !pick(3))
		goto socks;

	/* data */
	seq += dl;
	gen_raw_opts(o, &ol, 40, false, &tsval, false);
	dl = 1 + pick(2);
	raw_send(&pe, pe.pport, port, seq, pe.k_high, pick(6) ? 0x18 : 0x10 | pick(256),
		 o, ol, gen_doff(ol), data, dl, gen_win(big), !pick(40));
	step("data", &pe, rx, 64, s);
	if (s < 0)
		goto socks;
	add_res("sr", recv1(s));
	seq += dl;

	/* our data, the peer's ACKs of it */
	add_res("ss", send(s, bulk, size, MSG_NOSIGNAL));
	step("out", &pe, rx, 64, s);
	ack_rounds(&pe, pe.pport, port, seq, &tsval, rx, big, s);

	/* our FIN, the peer's FIN */
	add_res("sc", shutdown(s, SHUT_WR));
	step("fin", &pe, rx, 64, s);
	gen_raw_opts(o, &ol, 40, false, &tsval, false);
	raw_send(&pe, pe.pport, port, seq, pe.k_high, 0x11, o, ol, gen_doff(ol), NULL, 0,
		 gen_win(big), !pick(40));
	step("fin2", &pe, rx, 64, s);
	add_res("seof", recv1(s));
socks:
	if (s >= 0)
		add(" sst=%d", tcp_state(s));
	add_slots();
out:
	abort_close(s);
	if (l >= 0)
		close(l);
	peer_done(&pe);
}

/*
 * Wait (up to 2 s) for our SYN sent again.  A SYN-ACK with an ACK out of
 * range makes the kernel answer with a RST and restart its retransmission
 * timer at TCP_TIMEOUT_MIN (8 ms): whether that fired before the case ended
 * would show in the program's records (tcp_current_mss() asks it), so the
 * case waits for it.
 */
static bool wait_resyn(struct peer *pe)
{
	unsigned char f[2048];
	struct pkt p;

	while (!pe->resyn) {
		struct pollfd pfd = { .fd = raw_fd, .events = POLLIN };
		struct sockaddr_ll sll;
		socklen_t sl = sizeof(sll);
		int len;

		if (poll(&pfd, 1, WAIT_MS) <= 0)
			return false;
		len = recvfrom(raw_fd, f, sizeof(f), MSG_DONTWAIT, (struct sockaddr *)&sll, &sl);
		if (len >= 0 && sll.sll_pkttype != PACKET_OUTGOING && parse_frame(f, len, pe, &p) &&
		    p.sport == pe->kport && p.dport == pe->pport && (p.flags & 0x12) == 0x02)
			return true;
	}
	return true;
}

/* Our socket connects to the raw peer. */
static void case_r2(bool v6, unsigned long cn, uint16_t port, bool tfo)
{
	unsigned char o[40], data[4];
	struct pkt rx[64], *syn = NULL;
	struct peer pe;
	uint32_t tsval = next(), seq, ack;
	unsigned int ol, dl, fl, size = gen_size();
	bool big = size > 1;
	int c, n, st;
	long r;

	peer_setup(&pe, v6, cn, port);
	add(" size=%u", size);
	/* the peer listens on cfg->port; ours is ephemeral, learnt from the SYN */
	pe.pport = port;
	pe.kport = 0;
	c = start_connect(v6, pe.addr, port, tfo, true, &r);
	add_res("con", r);
	if (c < 0)
		goto out;
	n = step("syn", &pe, rx, 64, c);
	for (int i = 0; i < n; i++)
		if ((rx[i].flags & 0x17) == 0x02)
			syn = &rx[i];
	if (!syn)
		goto socks;
	dl = syn->dlen;

	/* SYN-ACK */
	gen_raw_opts(o, &ol, 40, true, &tsval, false);
	ack = pick(8) ? pe.kisn + 1 + (pick(3) ? dl : 0) : next();
	fl = pick(15) ? 0x12 : 0x12 | (1u << pick(8));
	if (!pick(10))
		fl |= 0x40;
	fill(data, sizeof(data));
	raw_send(&pe, port, pe.kport, pe.piss, ack, fl, o, ol, gen_doff(ol), data,
		 pick(10) ? 0 : 1, gen_win(big), !pick(40));
	n = step("synack", &pe, rx, 64, c);
	st = tcp_state(c);
	add(" cst=%d cerr=%s", st, errname(sock_err(c)));
	/* answered with a RST for an ACK out of (our ISN, what we sent] */
	if (st == 2 /* TCP_SYN_SENT */ && (ack - pe.kisn - 1) > dl) {
		for (int i = 0; i < n; i++)
			if (rx[i].flags & 0x04) {
				add(" resyn=%d", wait_resyn(&pe));
				break;
			}
	}
	if (st != 1 /* TCP_ESTABLISHED */)
		goto socks;
	seq = pe.piss + 1;

	/* our data, the peer's ACKs of it (the first with data now and then) */
	add_res("cs", send(c, bulk, size, MSG_NOSIGNAL));
	step("out", &pe, rx, 64, c);
	gen_raw_opts(o, &ol, 40, false, &tsval, false);
	dl = pick(3) ? 0 : 1;
	raw_send(&pe, port, pe.kport, seq, pe.k_high, dl ? 0x18 : 0x10, o, ol,
		 gen_doff(ol), data, dl, gen_win(big), !pick(40));
	step("ack", &pe, rx, 64, c);
	seq += dl;
	ack_rounds(&pe, port, pe.kport, seq, &tsval, rx, big, c);
	add_res("cr", recv1(c));

	/* our FIN, the peer's FIN */
	add_res("cc", shutdown(c, SHUT_WR));
	step("fin", &pe, rx, 64, c);
	gen_raw_opts(o, &ol, 40, false, &tsval, false);
	raw_send(&pe, port, pe.kport, seq, pe.k_high, 0x11, o, ol, gen_doff(ol), NULL,
		 0, gen_win(big), !pick(40));
	step("fin2", &pe, rx, 64, c);
	add_res("ceof", recv1(c));
socks:
	if (c >= 0)
		add(" cst=%d", tcp_state(c));
	add_slots();
out:
	abort_close(c);
	peer_done(&pe);
}

/* ------------------------------------------------------------------ */
/* set-up */

static int setup_net(void)
{
	static const unsigned char l4[4] = { 127, 0, 0, 1 }, l6[16] = { [15] = 1 };
	static const unsigned char n4[4] = { 10 }, n6[16] = { 0xfd };
	static const char *const sysctls[][2] = {
		{ "/proc/sys/net/ipv4/tcp_no_metrics_save", "1" },
		{ "/proc/sys/net/ipv4/tcp_fastopen", "3" },
		{ "/proc/sys/net/ipv4/tcp_fastopen_blackhole_timeout_sec", "0" },
		{ "/proc/sys/net/ipv4/tcp_invalid_ratelimit", "0" },
		{ "/proc/sys/net/ipv4/tcp_challenge_ack_limit", "2147483647" },
		{ "/proc/sys/net/ipv4/tcp_syn_retries", "2" },
		/* no timer-driven sends between the steps: tail loss probes, RACK, corking */
		{ "/proc/sys/net/ipv4/tcp_early_retrans", "0" },
		{ "/proc/sys/net/ipv4/tcp_recovery", "0" },
		{ "/proc/sys/net/ipv4/tcp_autocorking", "0" },
		{ "/proc/sys/net/ipv4/tcp_synack_retries", "1" },
		{ "/proc/sys/net/ipv6/conf/default/accept_ra", "0" },
		{ "/proc/sys/net/ipv6/conf/default/router_solicitations", "0" },
		{ "/proc/sys/net/ipv6/conf/default/accept_dad", "0" },
	};
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	int err, big = 1 << 20;

	if (unshare(CLONE_NEWNET) < 0)
		return ksft_print_msg("unshare(CLONE_NEWNET): %s\n", strerror(errno)), -1;
	for (unsigned int i = 0; i < sizeof(sysctls) / sizeof(sysctls[0]); i++) {
		err = net_sysctl(sysctls[i][0], sysctls[i][1]);
		if (err)
			return ksft_print_msg("%s: %s\n", sysctls[i][0], strerror(-err)), -1;
	}
	static const char *what;
#define NET(call) (what = #call, err = (call))
	if (NET(net_link_up("lo")) || NET(net_veth_add("veth0", "veth1", -1)) ||
	    NET(net_sysctl("/proc/sys/net/ipv6/conf/veth1/disable_ipv6", "1")) ||
	    /*
	     * One segment per skb, segmentation offloads off: how TCP groups
	     * segments into skbs would follow its pacing rate (RTT, timing)
	     */
	    NET(net_offload_off("veth0")) || NET(net_gso_max_segs("veth0", 1)) ||
	    NET(net_link_up("veth0")) || NET(net_link_up("veth1")) || NET(net_mac("veth0", k_mac)) ||
	    NET(net_addr_add("veth0", AF_INET, k4, 32)) ||
	    NET(net_addr_add("veth0", AF_INET6, k6, 128)) ||
	    /* quick ACKs everywhere: no delayed ACK, no timer in what a case sees */
	    NET(net_route(AF_INET, RT_TABLE_MAIN, RTN_UNICAST, n4, 8, "veth0", k4, true, false)) ||
	    NET(net_route(AF_INET6, RT_TABLE_MAIN, RTN_UNICAST, n6, 64, "veth0", NULL, true,
			  false)) ||
	    NET(net_route(AF_INET, RT_TABLE_LOCAL, RTN_LOCAL, l4, 32, "lo", l4, true, false)) ||
	    NET(net_route(AF_INET6, RT_TABLE_LOCAL, RTN_LOCAL, l6, 128, "lo", NULL, false, true)) ||
	    NET(net_route(AF_INET6, RT_TABLE_LOCAL, RTN_LOCAL, l6, 128, "lo", NULL, true, false)))
		return ksft_print_msg("network set-up: %s: %s\n", what, strerror(-err)), -1;
#undef NET
	veth1_idx = if_nametoindex("veth1");
	raw_fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	lo_fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (raw_fd < 0 || lo_fd < 0)
		return ksft_print_msg("AF_PACKET: %s\n", strerror(errno)), -1;
	sll.sll_ifindex = veth1_idx;
	if (bind(raw_fd, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		return ksft_print_msg("bind veth1: %s\n", strerror(errno)), -1;
	sll.sll_ifindex = if_nametoindex("lo");
	if (bind(lo_fd, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		return ksft_print_msg("bind lo: %s\n", strerror(errno)), -1;
	setsockopt(raw_fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	setsockopt(lo_fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	return 0;
}

static int setup_bpf(void)
{
	int cg, err;
	char pid[16];

	if (access("/sys/fs/cgroup/cgroup.procs", F_OK) &&
	    mount("cgroup2", "/sys/fs/cgroup", "cgroup2", 0, NULL) < 0)
		return ksft_print_msg("mount cgroup2: %s\n", strerror(errno)), -1;
	mkdir(CGROUP, 0755);
	snprintf(pid, sizeof(pid), "%d", getpid());
	if ((err = net_sysctl(CGROUP "/cgroup.procs", pid)))
		return ksft_print_msg("join %s: %s\n", CGROUP, strerror(-err)), -1;
	cg = open(CGROUP, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg < 0)
		return ksft_print_msg("%s: %s\n", CGROUP, strerror(errno)), -1;
	skel = hdr_fuzz__open_and_load();
	if (!skel)
		return ksft_print_msg("loading the sock_ops program failed: %s\n",
				      strerror(errno)), -1;
	cfg = &skel->bss->cfg;
	res = skel->bss->res;
	if (bpf_prog_attach(bpf_program__fd(skel->progs.hdr_fuzz), cg, BPF_CGROUP_SOCK_OPS, 0))
		return ksft_print_msg("attach: %s\n", strerror(errno)), -1;
	close(cg);
	return 0;
}

/* libbpf's warnings; of a verifier log, the last lines (where it says why) */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	static char text[1 << 20];
	char *lines[40], *p;
	int n = 0;

	if (level > LIBBPF_WARN)
		return 0;
	vsnprintf(text, sizeof(text), fmt, ap);
	for (p = strtok(text, "\n"); p; p = strtok(NULL, "\n"))
		lines[n++ % 40] = p;
	for (int i = n > 40 ? n - 40 : 0; i < n; i++)
		printf("# libbpf: %s\n", lines[i % 40]);
	return 0;
}

static long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* KTEST_CASE: the case's calls, before it runs (a case that crashes prints no "# obs") */
static void print_cfg(unsigned long c)
{
	for (unsigned int op = 0; op < HF_NOPS; op++)
		for (unsigned int cl = 0; cl < HF_NCLASS; cl++)
			for (unsigned int i = 0; i < HF_NCALLS; i++) {
				const struct hf_call *k = &cfg->calls[op][cl][i];

				if (k->helper == HF_NONE || k->helper >= HF_NHELPERS)
					continue;
				printf("# dbg c%lu cfg op%u.cl%u.%u %s arg %u.%u len %u int %d\n",
				       c, op, cl, i, helper_name[k->helper], k->arg >> 16,
				       k->arg & 0xffff, k->len % HF_BUF + 1, *(const int *)k->buf);
			}
}

int main(void)
{
	const struct fuzz_env env = fuzz_env();
	const unsigned long cases = env.cases, limit = env.limit;
	const uint64_t seed = env.seed;
	unsigned long c, done = 0, kinds[6] = {};
	unsigned long st_ok = 0, ld_ok = 0, first = 0, last = ~0UL;
	time_t start = time(NULL);
	cpu_set_t cpus;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ksft_print_header();
	on_stock = getenv("KTEST_FLAVOUR") && !strcmp(getenv("KTEST_FLAVOUR"), "stock");
	ksft_set_plan(5);
	ksft_print_msg("seed %llu, %lu cases (KTEST_SEED=%llu replays them)\n",
		       (unsigned long long)seed, cases, (unsigned long long)seed);
	libbpf_set_print(libbpf_print);
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);

	ksft_test_result(setup_net() == 0, "network namespace: lo, veth pair (one segment per skb), quickack routes\n");
	if (setup_bpf()) {
		ksft_test_result_fail("sock_ops program with bpf_{load,store,reserve}_hdr_opt loads and attaches\n");
		ksft_test_result_skip("fuzz cases\n");
		ksft_test_result_skip("no segment longer than the MTU\n");
		ksft_test_result_skip("TCP_NODELAY and TCP_CONGESTION refused from the header option callbacks\n");
		ksft_finished();
	}
	ksft_test_result_pass("sock_ops program with bpf_{load,store,reserve}_hdr_opt loads and attaches\n");

	if (getenv("KTEST_CASE") && *getenv("KTEST_CASE")) {
		char *e;

		first = strtoul(getenv("KTEST_CASE"), &e, 0);
		last = *e == '-' ? strtoul(e + 1, NULL, 0) : first;
		debug = true;
	}
	for (c = first; c < cases && c <= last; c++) {
		static const char *const names[] = { "lo4", "lo6", "r1-4", "r1-6", "r2-4", "r2-6" };
		unsigned int kind, cookies;
		uint16_t port = 10000 + c % 20000;
		long t0;
		bool tfo;

		if ((unsigned long)(time(NULL) - start) > limit)
			break;
		t0 = mono_ms();
		fuzz_seed_case(seed, c);
		kind = pick(6);
		cookies = pick(4) ? 0 : 2;
		cookie_mode = cookies;
		tfo = !pick(5);
		gen_cfg(port);
		if (debug)
			print_cfg(c);
		memset(res, 0, sizeof(*res) * HF_NSLOTS);
		net_sysctl("/proc/sys/net/ipv4/tcp_syncookies", cookies ? "2" : "1");
		olen = 0;
		obs[0] = 0;
		if (debug)
			read_netstat(netstat_before, sizeof(netstat_before));
		add("%s%s%s", names[kind], cookies ? " cookies" : "", tfo ? " tfo" : "");
		switch (kind) {
		case 0: case 1:
			case_lo(kind, port, tfo);
			break;
		case 2: case 3:
			case_r1(kind == 3, c, port, tfo);
			break;
		default:
			case_r2(kind == 5, c, port, tfo);
			break;
		}
		printf("# obs c%lu %s\n", c, obs);
		if (mono_ms() - t0 > 500)
			printf("# slow c%lu: %ld ms\n", c, mono_ms() - t0);
		if (debug)
			print_netstat_diff(c);
		kinds[kind]++;
		for (unsigned int k = 0; k < HF_NSLOTS; k++) {
			unsigned int op = k / HF_NCLASS % HF_NOPS, cl = k % HF_NCLASS;

			if (!res[k].seen)
				continue;
			for (unsigned int i = 0; i < HF_NCALLS; i++) {
				unsigned int h = cfg->calls[op][cl][i].helper;

				st_ok += h == HF_STORE && res[k].r[i].ret == 0;
				ld_ok += h == HF_LOAD && res[k].r[i].ret > 0;
			}
		}
		done++;
	}
	ksft_print_msg("cases: lo4 %lu, lo6 %lu, r1-4 %lu, r1-6 %lu, r2-4 %lu, r2-6 %lu; %lu stores written, %lu options loaded; %lu waits for held-back segments\n",
		       kinds[0], kinds[1], kinds[2], kinds[3], kinds[4], kinds[5], st_ok, ld_ok,
		       settle_waits);
	ksft_test_result(done > 0 && (done < 50 || (st_ok && ld_ok)),
			 "%lu of %lu cases in %ld s\n", done, cases, (long)(time(NULL) - start));
	ksft_test_result(done > 0 && !oversize,
			 "no segment longer than the MTU: %lu frames beyond 1514 bytes on the veth (longest %lu)\n",
			 oversize, max_frame);
	if (on_stock)
		ksft_test_result_skip("TCP_NODELAY and TCP_CONGESTION refused from the header option callbacks: not made on stock 6.1, which crashes (patches/fixes/0008)\n");
	else
		ksft_test_result(!guard_bad,
				 "TCP_NODELAY and TCP_CONGESTION refused from the header option callbacks: %lu calls, %lu not refused with EBUSY\n",
				 guard_calls, guard_bad);
	ksft_finished();
}

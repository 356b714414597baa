/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the CAN ISO-TP test group and its fuzz group.
 *
 * - vcan interfaces through rtnetlink (the busybox guest's ip(8) does not know
 *   the vcan link type): create, set MTU and state, delete;
 * - CAN_RAW sockets that send classic and CAN FD frames and receive them with
 *   their kernel timestamps and the queue's drop counter;
 * - CAN_ISOTP sockets opened, configured and bound in one call;
 * - a wire-level ISO-TP peer on a CAN_RAW socket, both ways:
 *   peer_recv_pdu() receives a PDU the socket under test sends, answers its
 *   first frame and its blocks with flow control frames (or misbehaves on
 *   purpose) and checks every frame byte for byte; peer_send_pdu() sends a PDU
 *   to the socket under test and checks the flow control frames it answers.
 *   Both record the first broken rule as text in .err (empty: all held).
 *
 * The rules checked are those of ISO 15765-2:2016 as 6.1's CAN_ISOTP applies
 * them: PCI nibbles, SF_DL (and its escape for frames longer than 8 bytes),
 * 12-bit and 32-bit FF_DL, sequence numbers 1..15, 0, 1 ..., no frame longer
 * than tx_dl, padding (TX_PADDING: the configured byte; CAN FD frames longer
 * than 8 bytes: 0xCC up to the next valid CAN FD length), the flow control's
 * block size and separation time, and no frame at all while the peer's flow
 * control says WAIT or OVERFLOW.
 */
#ifndef ISOTP_UTIL_H
#define ISOTP_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <linux/can.h>
#include <linux/can/isotp.h>
#include <linux/can/raw.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#define ISOTP_MAX_PDU	66000
#define PAD_DEFAULT	0xCC	/* CAN_ISOTP_DEFAULT_PAD_CONTENT */

/* struct sockaddr_can up to and including can_addr.tp: what bind() needs at least */
#define ISOTP_ADDR_LEN	(offsetof(struct sockaddr_can, can_addr.tp) + \
			 sizeof(((struct sockaddr_can *)0)->can_addr.tp))

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static inline void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * ISO-TP's timers are 1 s; a guest that QEMU cannot run for that long (a host
 * busy with other guests and builds) sees them fire in the middle of a good
 * transfer.  A thread that sleeps 10 ms at a time measures the longest stall,
 * so that a failure can say whether one happened under it.
 */
static uint64_t stall_max_ns;

static inline void *stall_watch(void *arg)
{
	struct timespec ts = { 0, 10000000 };

	for (;;) {
		struct timespec a, b;
		uint64_t d;

		clock_gettime(CLOCK_MONOTONIC, &a);
		nanosleep(&ts, NULL);
		clock_gettime(CLOCK_MONOTONIC, &b);
		d = (b.tv_sec - a.tv_sec) * 1000000000ULL + b.tv_nsec - a.tv_nsec;
		if (d > 10000000 &&
		    d - 10000000 > __atomic_load_n(&stall_max_ns, __ATOMIC_RELAXED))
			__atomic_store_n(&stall_max_ns, d - 10000000, __ATOMIC_RELAXED);
	}
	return arg;
}

static inline void stall_watch_start(void)
{
	pthread_t t;

	if (!pthread_create(&t, NULL, stall_watch, NULL))
		pthread_detach(t);
}

/* The longest stall since the last call, in ms. */
static inline unsigned int stall_take_ms(void)
{
	return __atomic_exchange_n(&stall_max_ns, 0, __ATOMIC_RELAXED) / 1000000;
}

/*
 * A PDU of 66000 bytes is 11001 frames that a CAN_RAW peer writes faster than
 * a stalled guest's softirqs take them off the backlog (1000 by default):
 * room for all of them, where root may say so.
 */
static inline void backlog_raise(void)
{
	int fd = open("/proc/sys/net/core/netdev_max_backlog", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (write(fd, "20000", 5) != 5)
		;
	close(fd);
}

/* The CAN FD data length a payload of @len bytes is carried in (8 at least). */
static inline int dl_pad(int len)
{
	static const int dls[] = { 8, 12, 16, 20, 24, 32, 48, 64 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(dls); i++)
		if (len <= dls[i])
			return dls[i];
	return -1;
}

/* A valid CAN FD data length (0..8, 12, 16, 20, 24, 32, 48, 64)? */
static inline int dl_valid(int len)
{
	return len >= 0 && (len <= 8 || dl_pad(len) == len);
}

/* ---- rtnetlink: vcan interfaces ---- */

struct nl_req {
	struct nlmsghdr n;
	struct ifinfomsg i;
	char attrs[256];
};

static inline struct rtattr *nl_attr(struct nl_req *r, int type, const void *data, int len)
{
	struct rtattr *rta = (struct rtattr *)((char *)&r->n + NLMSG_ALIGN(r->n.nlmsg_len));

	rta->rta_type = type;
	rta->rta_len = RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(rta), data, len);
	r->n.nlmsg_len = NLMSG_ALIGN(r->n.nlmsg_len) + RTA_ALIGN(rta->rta_len);
	return rta;
}

/* Send one request, return the kernel's answer: 0 or -errno. */
static inline int nl_talk(struct nl_req *r)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	char buf[4096];
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	int fd, err;
	ssize_t n;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	r->n.nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	r->n.nlmsg_seq = 1;
	if (sendto(fd, r, r->n.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	n = recv(fd, buf, sizeof(buf), 0);
	err = n < 0 ? -errno : -EIO;
	if (n >= (ssize_t)NLMSG_LENGTH(sizeof(struct nlmsgerr)) && h->nlmsg_type == NLMSG_ERROR)
		err = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
	close(fd);
	return err;
}

/*
 * Set the MTU (0: leave it) and the state (up: 1, down: 0, leave: -1) of an
 * interface: 0 or -errno.  The MTU goes first, as vcan refuses to change it
 * while the interface is up.
 */
static inline int link_set(int ifindex, unsigned int mtu, int up)
{
	struct nl_req r = { 0 };

	r.n.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg));
	r.n.nlmsg_type = RTM_NEWLINK;
	r.i.ifi_family = AF_UNSPEC;
	r.i.ifi_index = ifindex;
	if (up >= 0) {
		r.i.ifi_flags = up ? IFF_UP : 0;
		r.i.ifi_change = IFF_UP;
	}
	if (mtu)
		nl_attr(&r, IFLA_MTU, &mtu, sizeof(mtu));
	return nl_talk(&r);
}

/* Create vcan @name (down, default MTU): 0 or -errno. */
static inline int vcan_add(const char *name)
{
	struct nl_req r = { 0 };
	struct rtattr *li;

	r.n.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg));
	r.n.nlmsg_type = RTM_NEWLINK;
	r.n.nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
	r.i.ifi_family = AF_UNSPEC;
	nl_attr(&r, IFLA_IFNAME, name, strlen(name) + 1);
	li = nl_attr(&r, IFLA_LINKINFO, NULL, 0);
	nl_attr(&r, IFLA_INFO_KIND, "vcan", 4);
	li->rta_len = (char *)&r.n + r.n.nlmsg_len - (char *)li;
	return nl_talk(&r);
}

static inline int link_del(int ifindex)
{
	struct nl_req r = { 0 };

	r.n.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg));
	r.n.nlmsg_type = RTM_DELLINK;
	r.i.ifi_family = AF_UNSPEC;
	r.i.ifi_index = ifindex;
	return nl_talk(&r);
}

/*
 * A fresh vcan @name with @mtu (CAN_MTU or CANFD_MTU), up: its ifindex, or
 * -errno.  An interface of that name left by an earlier test is deleted first.
 */
static inline int vcan_fresh(const char *name, unsigned int mtu)
{
	int idx = if_nametoindex(name), err;

	if (idx > 0)
		link_del(idx);
	err = vcan_add(name);
	if (err)
		return err;
	idx = if_nametoindex(name);
	if (idx <= 0)
		return -ENODEV;
	err = link_set(idx, mtu, 1);
	return err ? err : idx;
}

/* ---- CAN_RAW ---- */

struct frame {
	canid_t id;
	int fd;			/* a CAN FD frame (CANFD_MTU bytes read) */
	uint8_t len;
	uint8_t flags;
	uint8_t data[CANFD_MAX_DLEN];
	uint64_t ns;		/* the kernel's receive timestamp (CLOCK_REALTIME) */
	uint32_t drops;		/* SO_RXQ_OVFL: frames the queue dropped so far */
};

static inline canid_t id_mask(canid_t id)
{
	return CAN_EFF_FLAG | CAN_RTR_FLAG | ((id & CAN_EFF_FLAG) ? CAN_EFF_MASK : CAN_SFF_MASK);
}

/*
 * A CAN_RAW socket on @ifindex that receives the frames with id @id only
 * (classic and CAN FD), with timestamps and the drop counter, and a receive
 * queue large enough for the 9429 frames of a 66000-byte PDU where the caller
 * may raise it (SO_RCVBUFFORCE).  -errno on failure.
 */
static inline int raw_open(int ifindex, canid_t id)
{
	struct sockaddr_can a = { .can_family = AF_CAN, .can_ifindex = ifindex };
	struct can_filter f = { .can_id = id, .can_mask = id_mask(id) };
	int one = 1, big = 16 << 20, s, err;

	s = socket(PF_CAN, SOCK_RAW | SOCK_CLOEXEC, CAN_RAW);
	if (s < 0)
		return -errno;
	if (setsockopt(s, SOL_CAN_RAW, CAN_RAW_FILTER, &f, sizeof(f)) ||
	    setsockopt(s, SOL_CAN_RAW, CAN_RAW_FD_FRAMES, &one, sizeof(one)) ||
	    setsockopt(s, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) ||
	    setsockopt(s, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one)))
		goto fail;
	if (setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)))
		setsockopt(s, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	if (bind(s, (struct sockaddr *)&a, sizeof(a)))
		goto fail;
	return s;
fail:
	err = -errno;
	close(s);
	return err;
}

/*
 * Send one frame: a CAN FD frame (CANFD_MTU bytes) when @fd, else a classic
 * one (@len <= 8).  0 or -errno.
 */
static inline int raw_send(int s, canid_t id, int fd, uint8_t flags, const uint8_t *data, int len)
{
	struct canfd_frame cf = { .can_id = id, .len = len, .flags = fd ? flags : 0 };
	size_t sz = fd ? CANFD_MTU : CAN_MTU;

	memcpy(cf.data, data, len);
	if (write(s, &cf, sz) != (ssize_t)sz)
		return -errno;
	return 0;
}

/* Wait up to @ms for a frame: 1 (in *f), 0 on timeout, -errno on error. */
static inline int raw_recv(int s, struct frame *f, int ms)
{
	struct canfd_frame cf;
	char ctrl[256];
	struct iovec iov = { &cf, sizeof(cf) };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctrl, .msg_controllen = sizeof(ctrl),
	};
	struct pollfd p = { .fd = s, .events = POLLIN };
	struct cmsghdr *c;
	ssize_t n;
	int r;

	r = poll(&p, 1, ms);
	if (r < 0)
		return -errno;
	if (r == 0)
		return 0;
	n = recvmsg(s, &m, MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN ? 0 : -errno;
	memset(f, 0, sizeof(*f));
	f->id = cf.can_id;
	f->fd = n == CANFD_MTU;
	f->len = cf.len;
	f->flags = f->fd ? cf.flags : 0;
	memcpy(f->data, cf.data, f->len <= CANFD_MAX_DLEN ? f->len : CANFD_MAX_DLEN);
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET)
			continue;
		if (c->cmsg_type == SO_TIMESTAMPNS) {
			struct timespec ts;

			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			f->ns = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
		} else if (c->cmsg_type == SO_RXQ_OVFL) {
			memcpy(&f->drops, CMSG_DATA(c), sizeof(f->drops));
		}
	}
	return 1;
}

/* Frames waiting in the queue of @s, read and dropped: how many. */
static inline int raw_drain(int s)
{
	struct frame f;
	int n = 0;

	while (raw_recv(s, &f, 0) > 0)
		n++;
	return n;
}

/* ---- CAN_ISOTP ---- */

struct isotp_cfg {
	canid_t tx, rx;
	const struct can_isotp_options *opt;
	const struct can_isotp_fc_options *fc;
	const struct can_isotp_ll_options *ll;
	const uint32_t *tx_stmin, *rx_stmin;
};

static inline int isotp_bind(int s, int ifindex, canid_t tx, canid_t rx)
{
	struct sockaddr_can a = { .can_family = AF_CAN, .can_ifindex = ifindex };

	a.can_addr.tp.tx_id = tx;
	a.can_addr.tp.rx_id = rx;
	return bind(s, (struct sockaddr *)&a, sizeof(a)) ? -errno : 0;
}

/*
 * A CAN_ISOTP socket with the options of @c that are set, bound to @ifindex:
 * the socket, or -errno of the first call that failed.
 */
static inline int isotp_open(int ifindex, const struct isotp_cfg *c)
{
	int s = socket(PF_CAN, SOCK_DGRAM | SOCK_CLOEXEC, CAN_ISOTP), err = 0;

	if (s < 0)
		return -errno;
	if (c->opt && setsockopt(s, SOL_CAN_ISOTP, CAN_ISOTP_OPTS, c->opt, sizeof(*c->opt)))
		goto fail;
	if (c->fc && setsockopt(s, SOL_CAN_ISOTP, CAN_ISOTP_RECV_FC, c->fc, sizeof(*c->fc)))
		goto fail;
	if (c->ll && setsockopt(s, SOL_CAN_ISOTP, CAN_ISOTP_LL_OPTS, c->ll, sizeof(*c->ll)))
		goto fail;
	if (c->tx_stmin &&
	    setsockopt(s, SOL_CAN_ISOTP, CAN_ISOTP_TX_STMIN, c->tx_stmin, sizeof(uint32_t)))
		goto fail;
	if (c->rx_stmin &&
	    setsockopt(s, SOL_CAN_ISOTP, CAN_ISOTP_RX_STMIN, c->rx_stmin, sizeof(uint32_t)))
		goto fail;
	err = isotp_bind(s, ifindex, c->tx, c->rx);
	if (err) {
		close(s);
		return err;
	}
	return s;
fail:
	err = -errno;
	close(s);
	return err;
}

/* SO_ERROR of @s (and so cleared): 0 or an errno value. */
static inline int sock_err(int s)
{
	int e = 0;
	socklen_t l = sizeof(e);

	if (getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &l))
		return errno;
	return e;
}

/*
 * Wait up to @ms for the transfer of @s to end (POLLOUT: CAN_ISOTP sets it only
 * while no transfer runs) or for an error (POLLERR): the poll revents, 0 on
 * timeout.
 */
static inline int isotp_wait_idle(int s, int ms)
{
	struct pollfd p = { .fd = s, .events = POLLOUT };
	uint64_t end = now_ns() + ms * 1000000ULL;

	for (;;) {
		int left = (int)((int64_t)(end - now_ns()) / 1000000);

		if (poll(&p, 1, left > 0 ? left : 0) < 0 && errno != EINTR)
			return 0;
		if (p.revents & (POLLOUT | POLLERR | POLLHUP))
			return p.revents;
		if (left <= 0)
			return 0;
	}
}

/* Deterministic PDU contents, different for each @seed. */
static inline void pdu_fill(uint8_t *buf, size_t len, unsigned int seed)
{
	uint32_t x = seed * 2654435761u + 12345;
	size_t i;

	for (i = 0; i < len; i++) {
		x = x * 1103515245u + 12345;
		buf[i] = x >> 16;
	}
}

/* ---- the wire-level peer ---- */

/* What the peer knows of the socket under test (its options). */
struct sock_cfg {
	canid_t txid, rxid;	/* the socket's ids: it sends on txid, listens on rxid */
	int fdmode;		/* ll.mtu == CANFD_MTU */
	int tx_dl;		/* ll.tx_dl */
	uint8_t tx_flags;	/* ll.tx_flags */
	uint32_t flags;		/* CAN_ISOTP_OPTS flags */
	uint8_t ext, rx_ext;	/* ext_address, rx_ext_address */
	uint8_t txpad;		/* txpad_content */
	uint8_t bs, stmin;	/* CAN_ISOTP_RECV_FC: what its FC frames say */
};

static inline struct sock_cfg sock_cfg_default(canid_t txid, canid_t rxid)
{
	struct sock_cfg s = {
		.txid = txid, .rxid = rxid, .tx_dl = CAN_MAX_DLEN, .txpad = PAD_DEFAULT,
	};

	return s;
}

static inline int sc_ae(const struct sock_cfg *s)
{
	return !!(s->flags & CAN_ISOTP_EXTEND_ADDR);
}

/* The largest PDU the socket sends in a single frame. */
static inline int sf_max(const struct sock_cfg *s)
{
	return s->tx_dl - 1 - sc_ae(s) - (s->tx_dl > CAN_MAX_DLEN);
}

enum peer_fc_mode {
	FC_CTS,		/* answer the FF and every block with CTS */
	FC_NONE,	/* never answer: the socket times out (ECOMM) */
	FC_NONE_LATER,	/* answer the FF, then nothing after the first block */
	FC_OVFLW,	/* answer the FF with OVFLW (EMSGSIZE) */
	FC_WAIT,	/* answer the FF with .waits WAIT frames, then CTS */
	FC_WAIT_NONE,	/* answer the FF with .waits WAIT frames, then nothing */
	FC_BAD_FS,	/* answer the FF with the reserved flow status .bad_fs (EBADMSG) */
	FC_SHORT,	/* answer the FF with an FC of two bytes (EBADMSG) */
};

struct peer {
	int raw;		/* CAN_RAW on the interface, receiving the socket's tx id */
	struct sock_cfg s;
	/* how the peer answers */
	enum peer_fc_mode mode;
	uint8_t bs, stmin;	/* its CTS frames' BS and STmin (WAIT frames carry them too) */
	uint8_t bad_fs;
	int waits;		/* FC_WAIT(_NONE): WAIT frames */
	int wait_ms;		/* pause after each WAIT frame, in which no frame may come */
	int fc_len;		/* its FC frames' length (0: ae + 3); bytes beyond padded */
	uint8_t fc_padc;	/* with fc_padc */
	int fc_ext_set;
	uint8_t fc_ext;		/* first byte of its FC frames (default: socket's rx_ext) */
	int quiet_ms;		/* after a full block, OVFLW ...: no frame for this long */
	int quiet_blocks;	/* only for the first quiet_blocks blocks (0: every block) */
	uint64_t min_gap_ns;	/* least spacing of two CFs of a block (timestamps, 2% slack) */
	int timeout_ms;		/* longest wait for an expected frame (0: 3000) */
	/* what happened */
	uint8_t *buf;		/* the PDU as reassembled (ISOTP_MAX_PDU bytes, caller's) */
	size_t got;		/* bytes reassembled */
	int frames, cfs, blocks, fcs;
	uint64_t min_gap_seen;	/* smallest spacing of two CFs of a block (0: none) */
	uint64_t first_cf_ns, last_cf_ns;	/* timestamps of the first and last CF */
	uint32_t drops;
	char err[320];
};

static inline void peer_fail(char *err, const char *fmt, ...)
{
	va_list ap;

	if (err[0])
		return;
	va_start(ap, fmt);
	vsnprintf(err, 320, fmt, ap);
	va_end(ap);
}

/* Send an FC frame with flow status @fs; @len: its length (0: .fc_len or ae + 3). */
static inline int peer_send_fc(struct peer *p, uint8_t fs, int len)
{
	int ae = sc_ae(&p->s);
	uint8_t d[CANFD_MAX_DLEN];
	int err;

	memset(d, p->fc_padc, sizeof(d));
	if (ae)
		d[0] = p->fc_ext_set ? p->fc_ext : p->s.rx_ext;
	d[ae] = 0x30 | fs;
	d[ae + 1] = p->bs;
	d[ae + 2] = p->stmin;
	if (!len)
		len = p->fc_len ? p->fc_len : ae + 3;
	err = raw_send(p->raw, p->s.rxid, p->s.fdmode, 0, d, len);
	if (err)
		peer_fail(p->err, "sending an FC frame: %s", strerror(-err));
	p->fcs++;
	return err;
}

/* No frame of the socket may come for @ms (0: the queue must be empty now). */
static inline int peer_quiet(struct peer *p, int ms, const char *what)
{
	struct frame f;
	int r = raw_recv(p->raw, &f, ms);

	if (r > 0)
		peer_fail(p->err, "a frame (PCI %02x, len %d) came %s", f.data[sc_ae(&p->s)],
			  f.len, what);
	return r > 0 ? -1 : 0;
}

/* The checks every frame of the socket passes: size, flags, length, address. */
static inline int peer_frame_common(struct peer *p, const struct frame *f)
{
	const struct sock_cfg *s = &p->s;

	if (f->drops != p->drops) {
		peer_fail(p->err, "the peer's raw socket dropped %u frames", f->drops);
		return -1;
	}
	if (f->fd != s->fdmode) {
		peer_fail(p->err, "a %s frame on a %s channel", f->fd ? "CAN FD" : "classic",
			  s->fdmode ? "CAN FD" : "classic");
		return -1;
	}
	if (f->id != s->txid) {
		peer_fail(p->err, "frame id %x, not %x", f->id, s->txid);
		return -1;
	}
	if (s->fdmode && (f->flags & ~CANFD_FDF) != s->tx_flags) {
		peer_fail(p->err, "CAN FD flags %02x, ll.tx_flags %02x", f->flags, s->tx_flags);
		return -1;
	}
	if (f->len > s->tx_dl || !dl_valid(f->len) || f->len < 1 + sc_ae(s)) {
		peer_fail(p->err, "frame length %d with tx_dl %d", f->len, s->tx_dl);
		return -1;
	}
	if (sc_ae(s) && f->data[0] != s->ext) {
		peer_fail(p->err, "extended address %02x, not %02x", f->data[0], s->ext);
		return -1;
	}
	return 0;
}

/*
 * The length of the frame that carries @used bytes (PCI and data) as the last
 * or only frame, and the byte its padding must hold; -1 for "no padding".
 */
static inline int peer_last_len(const struct sock_cfg *s, int used, int *padc)
{
	if (s->flags & CAN_ISOTP_TX_PADDING) {
		*padc = s->txpad;
		return dl_pad(used);
	}
	*padc = PAD_DEFAULT;
	if (used > CAN_MAX_DLEN)
		return dl_pad(used);
	*padc = -1;
	return used;
}

static inline int peer_check_pad(struct peer *p, const struct frame *f, int used,
				 const char *what)
{
	int padc, want = peer_last_len(&p->s, used, &padc), i;

	if (f->len != want) {
		peer_fail(p->err, "%s: length %d for %d bytes of PCI and data, not %d", what,
			  f->len, used, want);
		return -1;
	}
	for (i = used; i < f->len; i++) {
		if (f->data[i] != padc) {
			peer_fail(p->err, "%s: padding byte %d is %02x, not %02x", what, i,
				  f->data[i], padc);
			return -1;
		}
	}
	return 0;
}

static inline int peer_next(struct peer *p, struct frame *f, const char *what)
{
	int r = raw_recv(p->raw, f, p->timeout_ms ? p->timeout_ms : 3000);

	if (r < 0)
		peer_fail(p->err, "receiving %s: %s", what, strerror(-r));
	else if (r == 0)
		peer_fail(p->err, "no %s came", what);
	else
		p->frames++;
	return r > 0 ? 0 : -1;
}

/*
 * Receive the PDU @exp of @len bytes that the socket sends, as @p says: 0 if
 * every frame was as the rules say and the PDU arrived whole (or, for the
 * modes that stop it, as far as the mode lets it), else -1 with p->err.
 */
static inline int peer_recv_pdu(struct peer *p, const uint8_t *exp, size_t len)
{
	const struct sock_cfg *s = &p->s;
	int ae = sc_ae(s), dl = s->tx_dl, i, n, inblock = 0;
	uint8_t sn = 1;
	uint64_t last_cf = 0;
	size_t left;
	struct frame f;

	p->got = 0;
	p->err[0] = '\0';
	p->frames = p->cfs = p->blocks = p->fcs = 0;
	p->min_gap_seen = p->first_cf_ns = p->last_cf_ns = 0;
	if (peer_next(p, &f, "first frame") || peer_frame_common(p, &f))
		return -1;
	if ((int)len <= sf_max(s)) {
		int esc = (int)len > CAN_MAX_DLEN - 1 - ae, pci = 1 + ae + esc;

		if (f.data[ae] != (esc ? 0x00 : len)) {
			peer_fail(p->err, "SF of %zu bytes: PCI byte %02x", len, f.data[ae]);
			return -1;
		}
		if (esc && f.data[ae + 1] != len) {
			peer_fail(p->err, "SF of %zu bytes: escaped SF_DL %d", len, f.data[ae + 1]);
			return -1;
		}
		if (peer_check_pad(p, &f, pci + len, "SF"))
			return -1;
		memcpy(p->buf, f.data + pci, len);
		p->got = len;
		if (memcmp(p->buf, exp, len)) {
			peer_fail(p->err, "SF data differs from the PDU sent");
			return -1;
		}
		return 0;
	}

	/* FF: always the full tx_dl */
	if (f.len != dl) {
		peer_fail(p->err, "FF length %d, tx_dl %d", f.len, dl);
		return -1;
	}
	if (len <= 4095) {
		if (f.data[ae] != (0x10 | len >> 8) || f.data[ae + 1] != (len & 0xff)) {
			peer_fail(p->err, "FF of %zu bytes: PCI %02x %02x", len, f.data[ae],
				  f.data[ae + 1]);
			return -1;
		}
		n = ae + 2;
	} else {
		uint32_t l32 = (uint32_t)f.data[ae + 2] << 24 | f.data[ae + 3] << 16 |
			       f.data[ae + 4] << 8 | f.data[ae + 5];

		if (f.data[ae] != 0x10 || f.data[ae + 1] != 0 || l32 != len) {
			peer_fail(p->err, "FF of %zu bytes: PCI %02x %02x, 32-bit FF_DL %u", len,
				  f.data[ae], f.data[ae + 1], l32);
			return -1;
		}
		n = ae + 6;
	}
	memcpy(p->buf, f.data + n, dl - n);
	p->got = dl - n;

	switch (p->mode) {
	case FC_NONE:
		return 0;
	case FC_OVFLW:
		if (peer_send_fc(p, 2, 0))
			return -1;
		return peer_quiet(p, p->quiet_ms, "after an OVFLW flow control");
	case FC_BAD_FS:
	case FC_SHORT:
		if (peer_send_fc(p, p->bad_fs, p->mode == FC_SHORT ? ae + 2 : 0))
			return -1;
		return peer_quiet(p, p->quiet_ms, "after a malformed flow control");
	case FC_WAIT:
	case FC_WAIT_NONE:
		for (i = 0; i < p->waits; i++) {
			if (peer_send_fc(p, 1, 0) || peer_quiet(p, p->wait_ms, "after a WAIT"))
				return -1;
		}
		if (p->mode == FC_WAIT_NONE)
			return 0;
		break;
	default:
		break;
	}
	if (peer_send_fc(p, 0, 0))
		return -1;

	while (p->got < len) {
		if (peer_next(p, &f, "consecutive frame") || peer_frame_common(p, &f))
			return -1;
		if (f.data[ae] != (0x20 | sn)) {
			uint8_t pci = f.data[ae];
			char next[40] = "";
			int k, o = 0;

			/* the PCIs that follow: a frame lost, or out of order */
			for (k = 0; k < 4 && raw_recv(p->raw, &f, 20) > 0; k++)
				o += snprintf(next + o, sizeof(next) - o, " %02x", f.data[ae]);
			peer_fail(p->err, "CF %d: PCI %02x, expected %02x (then%s)", p->cfs + 1,
				  pci, 0x20 | sn, o ? next : " nothing");
			return -1;
		}
		if (inblock && p->min_gap_ns) {
			uint64_t gap = f.ns - last_cf;

			if (!p->min_gap_seen || gap < p->min_gap_seen)
				p->min_gap_seen = gap;
			/*
			 * The timestamps are taken as each frame is looped back:
			 * a little slack for where an implementation starts its
			 * timer.
			 */
			if (gap < p->min_gap_ns - p->min_gap_ns / 50) {
				peer_fail(p->err,
					  "CF %d came %llu us after the one before, STmin %llu us",
					  p->cfs + 1, (unsigned long long)gap / 1000,
					  (unsigned long long)p->min_gap_ns / 1000);
				return -1;
			}
		}
		last_cf = f.ns;
		if (!p->cfs)
			p->first_cf_ns = f.ns;
		p->last_cf_ns = f.ns;
		sn = (sn + 1) & 0x0f;
		p->cfs++;
		inblock++;
		left = len - p->got;
		if (left > (size_t)(dl - 1 - ae)) {
			if (f.len != dl) {
				peer_fail(p->err, "CF %d (not the last) has length %d, tx_dl %d",
					  p->cfs, f.len, dl);
				return -1;
			}
			memcpy(p->buf + p->got, f.data + ae + 1, dl - 1 - ae);
			p->got += dl - 1 - ae;
		} else {
			if (peer_check_pad(p, &f, ae + 1 + left, "last CF"))
				return -1;
			memcpy(p->buf + p->got, f.data + ae + 1, left);
			p->got += left;
		}
		if (p->got < len && p->bs && inblock == p->bs) {
			p->blocks++;
			inblock = 0;
			if (!p->quiet_blocks || p->blocks <= p->quiet_blocks) {
				if (peer_quiet(p, p->quiet_ms, "after a full block"))
					return -1;
			}
			if (p->mode == FC_NONE_LATER)
				return 0;
			if (peer_send_fc(p, 0, 0))
				return -1;
		}
	}
	if (memcmp(p->buf, exp, len)) {
		for (i = 0; i < (int)len && p->buf[i] == exp[i]; i++)
			;
		peer_fail(p->err, "the PDU differs from the one sent at byte %d", i);
		return -1;
	}
	return 0;
}

/* ---- the peer as sender ---- */

enum peer_tx_fault {
	TXF_NONE,
	TXF_WRONG_SN,	/* CF number .fault_at (1: the first) has a wrong sequence number */
	TXF_STOP,	/* CF number .fault_at and those after it are never sent */
	TXF_BAD_PAD,	/* the last frame's padding holds .padc ^ 0xff */
};

struct peer_tx {
	int raw;		/* CAN_RAW on the interface, receiving the socket's tx id */
	struct sock_cfg s;
	int dl;			/* the peer's frame data length (its tx_dl) */
	int pad;		/* pad the last frame to 8 / the next valid CAN FD length */
	uint8_t padc;
	int ext_set;
	uint8_t ext;		/* first byte with EXTEND_ADDR (default: the socket's rx_ext) */
	int listen;		/* the socket sends no FC: send all CFs without waiting */
	enum peer_tx_fault fault;
	int fault_at;
	int timeout_ms;		/* longest wait for an FC (0: 3000) */
	int fcs, frames;
	char err[320];
};

static inline int ptx_send(struct peer_tx *t, uint8_t *d, int used, int last)
{
	int len = used, i, err;

	if (last && (t->pad || used > CAN_MAX_DLEN))
		len = dl_pad(used);
	for (i = used; i < len; i++)
		d[i] = t->padc ^ (t->fault == TXF_BAD_PAD ? 0xff : 0);
	err = raw_send(t->raw, t->s.rxid, t->s.fdmode, t->s.fdmode ? CANFD_BRS : 0, d, len);
	if (err)
		peer_fail(t->err, "sending a frame: %s", strerror(-err));
	t->frames++;
	return err;
}

/* Receive and check one FC frame of the socket; its BS in *bs. */
static inline int ptx_fc(struct peer_tx *t, int *bs)
{
	const struct sock_cfg *s = &t->s;
	int ae = sc_ae(s), r, i;
	struct frame f;

	r = raw_recv(t->raw, &f, t->timeout_ms ? t->timeout_ms : 3000);
	if (r <= 0) {
		peer_fail(t->err, "no flow control frame came (%s)", r ? strerror(-r) : "timeout");
		return -1;
	}
	t->fcs++;
	if (f.fd != s->fdmode || f.id != s->txid) {
		peer_fail(t->err, "FC: %s frame with id %x", f.fd ? "CAN FD" : "classic", f.id);
		return -1;
	}
	if (s->fdmode && (f.flags & ~CANFD_FDF) != s->tx_flags) {
		peer_fail(t->err, "FC: CAN FD flags %02x, ll.tx_flags %02x", f.flags, s->tx_flags);
		return -1;
	}
	if (s->flags & CAN_ISOTP_TX_PADDING) {
		if (f.len != CAN_MAX_DLEN) {
			peer_fail(t->err, "FC with TX_PADDING: length %d", f.len);
			return -1;
		}
		for (i = ae + 3; i < f.len; i++) {
			if (f.data[i] != s->txpad) {
				peer_fail(t->err, "FC padding byte %d: %02x", i, f.data[i]);
				return -1;
			}
		}
	} else if (f.len != ae + 3) {
		peer_fail(t->err, "FC length %d", f.len);
		return -1;
	}
	if (ae && f.data[0] != s->ext) {
		peer_fail(t->err, "FC extended address %02x, not %02x", f.data[0], s->ext);
		return -1;
	}
	if (f.data[ae] != 0x30 || f.data[ae + 1] != s->bs || f.data[ae + 2] != s->stmin) {
		peer_fail(t->err, "FC %02x %02x %02x, expected 30 %02x %02x", f.data[ae],
			  f.data[ae + 1], f.data[ae + 2], s->bs, s->stmin);
		return -1;
	}
	*bs = f.data[ae + 1];
	return 0;
}

/*
 * Send @data (@len bytes) to the socket as @t says, checking its FC frames:
 * 0, or -1 with t->err.
 */
static inline int peer_send_pdu(struct peer_tx *t, const uint8_t *data, size_t len)
{
	const struct sock_cfg *s = &t->s;
	int ae = sc_ae(s), dl = t->dl, bs = 0, inblock = 0, cf = 0, n;
	uint8_t d[CANFD_MAX_DLEN], sn = 1;
	size_t off;

	t->fcs = t->frames = 0;
	t->err[0] = '\0';
	memset(d, 0, sizeof(d));
	if (ae)
		d[0] = t->ext_set ? t->ext : s->rx_ext;
	n = dl - 1 - ae - (dl > CAN_MAX_DLEN);
	if ((int)len <= n) {
		int esc = (int)len > CAN_MAX_DLEN - 1 - ae;

		if (esc) {
			d[ae] = 0;
			d[ae + 1] = len;
		} else {
			d[ae] = len;
		}
		memcpy(d + ae + 1 + esc, data, len);
		return ptx_send(t, d, ae + 1 + esc + len, 1);
	}
	if (len <= 4095) {
		d[ae] = 0x10 | len >> 8;
		d[ae + 1] = len;
		n = ae + 2;
	} else {
		d[ae] = 0x10;
		d[ae + 1] = 0;
		d[ae + 2] = len >> 24;
		d[ae + 3] = len >> 16;
		d[ae + 4] = len >> 8;
		d[ae + 5] = len;
		n = ae + 6;
	}
	memcpy(d + n, data, dl - n);
	off = dl - n;
	if (ptx_send(t, d, dl, 0))
		return -1;
	if (!t->listen && ptx_fc(t, &bs))
		return -1;
	while (off < len) {
		size_t chunk = len - off;
		int last = chunk <= (size_t)(dl - 1 - ae);

		if (!last)
			chunk = dl - 1 - ae;
		cf++;
		if (t->fault == TXF_STOP && cf >= t->fault_at)
			return 0;
		d[ae] = 0x20 | ((t->fault == TXF_WRONG_SN && cf == t->fault_at) ?
				(sn + 1) & 0x0f : sn);
		memcpy(d + ae + 1, data + off, chunk);
		if (ptx_send(t, d, ae + 1 + chunk, last))
			return -1;
		off += chunk;
		sn = (sn + 1) & 0x0f;
		if (t->fault == TXF_WRONG_SN && cf == t->fault_at)
			return 0;
		if (off < len && bs && ++inblock == bs) {
			inblock = 0;
			if (ptx_fc(t, &bs))
				return -1;
		}
	}
	return 0;
}

#endif

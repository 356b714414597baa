// SPDX-License-Identifier: GPL-2.0
/*
 * Seeded fuzzing of CAN ISO-TP sockets on vcan.  Each case draws, from the
 * run's seed and its number, a channel (classic or CAN FD with a random tx_dl
 * and BRS), options (padding and its bytes, extended addressing with a
 * separate rx address, padding checks, frame_txtime, forced STmin, flow
 * control BS/STmin, WAIT_TX_DONE), a PDU length from 1 to 66000 (now and then
 * 0 or 66001), and one of three set-ups:
 *
 * tx    the socket sends, a CAN_RAW peer receives and answers with flow
 *       control frames of a random BS and small STmin, or misbehaves: no FC
 *       (at first or after a block), OVFLW, WAIT(s) then CTS or nothing, a
 *       reserved flow status, an FC too short or padded against the socket's
 *       checks;
 * rx    a CAN_RAW peer sends (random data length, padding), the socket
 *       receives and answers with flow control, or the peer misbehaves: a
 *       wrong sequence number, missing CFs, bad padding, an FF over 66000
 *       bytes; some sockets listen only;
 * pair  two CAN_ISOTP sockets of matching configurations, a CAN_RAW socket
 *       watching the sender's frames.
 *
 * Every case checks the invariants: every PDU received equals the one sent,
 * byte for byte; no frame is longer than tx_dl or of the other link layer;
 * CF sequence numbers run 1, 2, ..., 15, 0, 1 ...; no frame comes while the
 * peer's flow control says WAIT or after OVFLW or an error; CFs of a block
 * are no closer than STmin (frame timestamps); and the errno the transfer
 * ends with is the one the protocol's rules name (ECOMM, EMSGSIZE, EBADMSG,
 * EILSEQ, ETIMEDOUT, EINVAL).  A broken invariant fails the case, named with
 * the seed and its number.  Each case also prints one line "# obs c<n> ..."
 * of what user space saw (results and frame counts, nothing timed) that the
 * three-kernel check compares with stock.
 *
 * Environment: KTEST_SEED (random if unset, always printed), KTEST_FUZZ_CASES
 * (default 1000), KTEST_FUZZ_SECONDS (a bound on the run time, default 420),
 * KTEST_CASE=<n> (replay that case alone).
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/wait.h>

#include "../fuzz_rng.h"
#include "kselftest.h"
#include "../can-isotp/isotp_util.h"

#define IFNAME	"kfz0"
#define OBS_LEN	512
#define MS	1000000ULL

static const int fd_dls[] = { 8, 12, 16, 20, 24, 32, 48, 64 };

static char obs[OBS_LEN];
static size_t off;
static char why[400];
static uint8_t *txbuf, *rxbuf;
static int ifindex;

static void add(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fuzz_obs_vappend(obs, OBS_LEN, &off, fmt, ap);
	va_end(ap);
}

static int bad(const char *fmt, ...)
{
	va_list ap;

	if (why[0])
		return 1;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return 1;
}

static const char *ename(int e)
{
	static char b[16];

	switch (e) {
	case 0: return "0";
	case ECOMM: return "ECOMM";
	case EMSGSIZE: return "EMSGSIZE";
	case EBADMSG: return "EBADMSG";
	case EILSEQ: return "EILSEQ";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EINVAL: return "EINVAL";
	case EAGAIN: return "EAGAIN";
	case ETIME: return "none";
	case -1: return "0|EBADMSG";
	}
	snprintf(b, sizeof(b), "e%d", e);
	return b;
}

/* One socket's configuration. */
struct cfg {
	canid_t tx, rx;
	int fd, tx_dl;
	uint8_t tx_flags;
	uint32_t flags;
	uint8_t ext, rx_ext, txpad, rxpad;
	uint32_t frame_txtime, tx_stmin;
	uint8_t bs, stmin;
};

static int cfg_ae(const struct cfg *c)
{
	return !!(c->flags & CAN_ISOTP_EXTEND_ADDR);
}

/* The rx address in effect (without RX_EXT_ADDR, the tx one). */
static uint8_t cfg_rx_ext(const struct cfg *c)
{
	return (c->flags & CAN_ISOTP_RX_EXT_ADDR) ? c->rx_ext : c->ext;
}

static struct sock_cfg cfg_sc(const struct cfg *c)
{
	struct sock_cfg s = sock_cfg_default(c->tx, c->rx);

	s.fdmode = c->fd;
	s.tx_dl = c->tx_dl;
	s.tx_flags = c->tx_flags;
	s.flags = c->flags;
	s.ext = c->ext;
	s.rx_ext = cfg_rx_ext(c);
	s.txpad = c->txpad;
	s.bs = c->bs;
	s.stmin = c->stmin;
	return s;
}

/* A random channel: ids, link layer, padding, addressing, pacing. */
static struct cfg random_cfg(int fd)
{
	struct cfg c = { .fd = fd, .tx_dl = 8, .txpad = PAD_DEFAULT, .rxpad = PAD_DEFAULT };

	if (pick(10)) {
		c.tx = 0x600 + pick(0x100);
		c.rx = 0x700 + pick(0x100);
	} else {
		c.tx = CAN_EFF_FLAG | (0x18da0000 + pick(0x10000));
		c.rx = CAN_EFF_FLAG | (0x18db0000 + pick(0x10000));
	}
	if (fd) {
		c.tx_dl = fd_dls[pick(8)];
		c.tx_flags = pick(2) ? CANFD_BRS : 0;
	}
	if (!pick(3)) {
		c.flags |= CAN_ISOTP_TX_PADDING;
		c.txpad = pick(256);
	}
	if (!pick(3)) {
		c.flags |= CAN_ISOTP_EXTEND_ADDR;
		c.ext = pick(256);
		c.rx_ext = c.ext;
		if (!pick(3)) {
			c.flags |= CAN_ISOTP_RX_EXT_ADDR;
			c.rx_ext = pick(256);
		}
	}
	/* pacing: the default N_As (50 us), none, or a little */
	switch (pick(4)) {
	case 0:
		c.frame_txtime = CAN_ISOTP_FRAME_TXTIME_ZERO;
		break;
	case 1:
		c.frame_txtime = 1000 * (1 + pick(100));
		break;
	}
	return c;
}

static int cfg_open(const struct cfg *c, int *err)
{
	struct can_isotp_options o = {
		.flags = c->flags, .frame_txtime = c->frame_txtime, .ext_address = c->ext,
		.txpad_content = c->txpad, .rxpad_content = c->rxpad, .rx_ext_address = c->rx_ext,
	};
	struct can_isotp_ll_options ll = { c->fd ? CANFD_MTU : CAN_MTU, c->tx_dl, c->tx_flags };
	struct can_isotp_fc_options fc = { c->bs, c->stmin, 0 };
	struct isotp_cfg ic = { .tx = c->tx, .rx = c->rx, .opt = &o, .ll = &ll, .fc = &fc,
				.tx_stmin = &c->tx_stmin };
	int s = isotp_open(ifindex, &ic);

	*err = s < 0 ? -s : 0;
	return s;
}

/*
 * The CAN_RAW peer on @c's tx id and the CAN_ISOTP socket of @c; 0, or the case's
 * failure (recorded with bad()) with nothing left open.
 */
static int open_peer_and_socket(const struct cfg *c, int *raw, int *s)
{
	int e;

	*raw = raw_open(ifindex, c->tx);
	if (*raw < 0)
		return bad("raw socket: %s", strerror(-*raw));
	*s = cfg_open(c, &e);
	if (*s < 0) {
		close(*raw);
		return bad("socket: %s", strerror(e));
	}
	return 0;
}

static int random_len(void)
{
	switch (pick(40)) {
	case 0:
		return ISOTP_MAX_PDU;
	case 1:
		return ISOTP_MAX_PDU - pick(10000);
	case 2:
		return 4090 + pick(12);
	case 3:
	case 4:
		return 1 + pick(5000);
	case 5:
		return pick(2) ? 0 : ISOTP_MAX_PDU + 1;
	}
	if (pick(2))
		return 1 + pick(80);
	return 1 + pick(400);
}

/* PCI and data bytes of the last or only frame of a PDU of @len bytes sent as @c says. */
static int last_used(const struct cfg *c, int len)
{
	int ae = cfg_ae(c), sfm = c->tx_dl - 1 - ae - (c->tx_dl > 8), ffd, cfd, rem;

	if (len <= sfm)
		return 1 + ae + (len > 7 - ae) + len;
	ffd = c->tx_dl - ae - (len > 4095 ? 6 : 2);
	cfd = c->tx_dl - 1 - ae;
	rem = (len - ffd) % cfd;
	return 1 + ae + (rem ? rem : cfd);
}

static int cf_count(const struct cfg *c, int len)
{
	int ae = cfg_ae(c), sfm = c->tx_dl - 1 - ae - (c->tx_dl > 8);
	int ffd = c->tx_dl - ae - (len > 4095 ? 6 : 2), cfd = c->tx_dl - 1 - ae;

	if (len <= sfm)
		return 0;
	return (len - ffd + cfd - 1) / cfd;
}

/*
 * Does a received frame of @len bytes whose PCI and data end at @used, padded
 * with @padc, pass the padding checks of a socket with @flags and @rxpad?
 * 1 yes, 0 no, -1 no rule says: CHK_PAD_DATA without RX_PADDING has no
 * padding byte to compare with (6.1 refuses every frame then; the spec is
 * silent, so either answer passes here, and the comparison with stock shows
 * which one a kernel gives).
 */
static int pad_ok(uint32_t flags, uint8_t rxpad, int len, int used, int padc)
{
	if (!(flags & (CAN_ISOTP_CHK_PAD_LEN | CAN_ISOTP_CHK_PAD_DATA)))
		return 1;
	if (!(flags & CAN_ISOTP_RX_PADDING)) {
		if (!(flags & CAN_ISOTP_CHK_PAD_LEN))
			return -1;
		return len == (used <= 8 ? used : dl_pad(used));
	}
	if ((flags & CAN_ISOTP_CHK_PAD_LEN) && len != dl_pad(len))
		return 0;
	if ((flags & CAN_ISOTP_CHK_PAD_DATA) && len > used && padc != rxpad)
		return 0;
	return 1;
}

/*
 * Padding checks for a receiver, now and then (@rule_only: none that
 * pad_ok() has no rule for).
 */
static void random_checks(struct cfg *c, uint8_t likely_pad, int rule_only)
{
	static const uint32_t chk[] = {
		CAN_ISOTP_RX_PADDING,
		CAN_ISOTP_RX_PADDING | CAN_ISOTP_CHK_PAD_DATA,
		CAN_ISOTP_RX_PADDING | CAN_ISOTP_CHK_PAD_LEN,
		CAN_ISOTP_RX_PADDING | CAN_ISOTP_CHK_PAD_LEN | CAN_ISOTP_CHK_PAD_DATA,
		CAN_ISOTP_CHK_PAD_LEN,
		CAN_ISOTP_CHK_PAD_DATA,
	};

	if (pick(4))
		return;
	c->flags |= chk[pick(6)];
	if (rule_only && !(c->flags & (CAN_ISOTP_RX_PADDING | CAN_ISOTP_CHK_PAD_LEN)))
		c->flags |= CAN_ISOTP_RX_PADDING;
	c->rxpad = pick(3) ? likely_pad : pick(256);
}

/* The errno a pad_ok() verdict names: 0, EBADMSG, or -1 for either. */
static int either_badmsg(int ok)
{
	return ok > 0 ? 0 : ok == 0 ? EBADMSG : -1;
}

static int ended_as(int e, int want)
{
	return want < 0 ? (e == 0 || e == EBADMSG) : e == want;
}

static void drain_close(int s)
{
	if (s < 0)
		return;
	isotp_wait_idle(s, 3000);
	close(s);
}

/*
 * The CAN_RAW watcher of a sender's frames: after the transfer, every frame
 * it saw is checked against the rules that hold whatever the peer did.
 */
static int watch_check(int raw, const struct cfg *c, int len, int expect_whole)
{
	int ae = cfg_ae(c), n = 0, cfs = 0, sn = 1;
	struct frame f;

	while (raw_recv(raw, &f, n ? 20 : 1000) > 0) {
		n++;
		if (f.fd != c->fd || f.len > c->tx_dl || !dl_valid(f.len))
			return bad("watch: frame %d: %s, length %d, tx_dl %d", n,
				   f.fd ? "CAN FD" : "classic", f.len, c->tx_dl);
		if (f.drops)
			return bad("watch: %u frames dropped", f.drops);
		if (ae && f.data[0] != c->ext)
			return bad("watch: frame %d: address %02x", n, f.data[0]);
		if (n == 1) {
			if ((f.data[ae] & 0xf0) != (cf_count(c, len) ? 0x10 : 0x00))
				return bad("watch: first frame PCI %02x", f.data[ae]);
			continue;
		}
		if (f.data[ae] != (0x20 | sn))
			return bad("watch: CF %d PCI %02x", cfs + 1, f.data[ae]);
		sn = (sn + 1) & 15;
		cfs++;
	}
	if (expect_whole && cfs != cf_count(c, len))
		return bad("watch: %d CFs for %d bytes, expected %d", cfs, len, cf_count(c, len));
	add(" w=%d", n);
	return 0;
}

/* Read one PDU from @s, waiting up to @ms: its length, or -errno (-ETIME: nothing came). */
static ssize_t read_pdu_wait(int s, int ms)
{
	struct pollfd p = { .fd = s, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, ms) <= 0)
		return -ETIME;
	n = recv(s, rxbuf, ISOTP_MAX_PDU + 1, MSG_DONTWAIT);
	return n < 0 ? -errno : n;
}

/* ---- tx: the socket sends, the raw peer receives ---- */

static int case_tx(void)
{
	struct cfg c = random_cfg(pick(2));
	struct peer p = { .buf = rxbuf, .quiet_ms = 5, .quiet_blocks = 3, .wait_ms = 20 };
	int len = random_len(), s, raw, e, cfs, want = 0, r, fcpad = 0, wait_done = !pick(3);
	uint64_t t0;
	ssize_t n;

	if (!pick(5)) {
		c.flags |= CAN_ISOTP_FORCE_TXSTMIN;
		c.tx_stmin = pick(3) ? 0 : 1000 * pick(300);
	}
	if (wait_done)
		c.flags |= CAN_ISOTP_WAIT_TX_DONE;
	cfs = cf_count(&c, len);
	p.s = cfg_sc(&c);
	p.bs = pick(2) ? 0 : 1 + pick(16);
	if (cfs <= 60 && !pick(3))
		p.stmin = pick(2) ? 0xf1 + pick(3) : 1 + pick(2);
	/* the mode, and the errno the socket must end with */
	switch (pick(20)) {
	case 0:
		p.mode = FC_NONE;
		break;
	case 1:
		p.mode = FC_NONE_LATER;
		if (!p.bs)
			p.bs = 1 + pick(4);
		break;
	case 2:
		p.mode = FC_OVFLW;
		break;
	case 3:
	case 4:
		p.mode = FC_WAIT;
		p.waits = 1 + pick(3);
		break;
	case 5:
		p.mode = FC_WAIT_NONE;
		p.waits = 1 + pick(2);
		break;
	case 6:
		p.mode = FC_BAD_FS;
		p.bad_fs = 3 + pick(13);
		break;
	case 7:
		p.mode = FC_SHORT;
		break;
	case 8:
	case 9:
		fcpad = 1;
		break;
	}
	if (fcpad) {
		/* the socket checks the padding of the FC frames it gets */
		random_checks(&c, pick(2) ? 0xaa : PAD_DEFAULT, 1);
		p.s.flags = c.flags;
		if (pick(2)) {
			p.fc_len = 8;
			p.fc_padc = pick(2) ? c.rxpad : pick(256);
		}
		if (pad_ok(c.flags, c.rxpad, p.fc_len ? p.fc_len : cfg_ae(&c) + 3, cfg_ae(&c) + 3,
			   p.fc_padc) == 0) {
			p.mode = FC_BAD_FS;	/* the CTS is refused: */
			p.bad_fs = 0;
		}
	}
	if (!cfs || len > ISOTP_MAX_PDU || len < 1)
		want = 0;
	else if (p.mode == FC_NONE || p.mode == FC_WAIT_NONE)
		want = ECOMM;
	else if (p.mode == FC_NONE_LATER)
		want = cfs > p.bs ? ECOMM : 0;
	else if (p.mode == FC_OVFLW)
		want = EMSGSIZE;
	else if (p.mode == FC_BAD_FS || p.mode == FC_SHORT)
		want = EBADMSG;
	if (len < 1 || len > ISOTP_MAX_PDU)
		want = EINVAL;
	add("tx fd=%d dl=%d fl=%x ae=%d len=%d bs=%d st=%02x mode=%d wd=%d", c.fd, c.tx_dl,
	    c.flags, cfg_ae(&c), len, p.bs, p.stmin, p.mode, wait_done);
	/* the separation the CFs of a block keep */
	if (c.flags & CAN_ISOTP_FORCE_TXSTMIN)
		p.min_gap_ns = c.tx_stmin;
	else if (p.stmin >= 0xf1)
		p.min_gap_ns = (p.stmin - 0xf0) * 100000ULL;
	else
		p.min_gap_ns = p.stmin * MS;

	if (open_peer_and_socket(&c, &raw, &s))
		return 1;
	p.raw = raw;
	pdu_fill(txbuf, len > 0 && len <= ISOTP_MAX_PDU ? len : 1, next());
	t0 = now_ns();
	if (wait_done && want != EINVAL) {
		/* write() blocks: the peer runs in a child */
		char *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			peer_recv_pdu(&p, txbuf, len);
			snprintf(shared, 4096, "%s", p.err);
			memcpy(shared + 3000, &p.frames, sizeof(int));
			memcpy(shared + 3010, &p.fcs, sizeof(int));
			_exit(0);
		}
		n = write(s, txbuf, len);
		e = n < 0 ? errno : 0;
		waitpid(pid, &st, 0);
		snprintf(p.err, sizeof(p.err), "%s", shared);
		memcpy(&p.frames, shared + 3000, sizeof(int));
		memcpy(&p.fcs, shared + 3010, sizeof(int));
		munmap(shared, 4096);
		if (n >= 0 && n != len)
			bad("write() returned %zd of %d", n, len);
	} else {
		n = write(s, txbuf, len > 0 ? len : 0);
		e = n < 0 ? errno : 0;
		if (!e) {
			peer_recv_pdu(&p, txbuf, len);
			r = isotp_wait_idle(s, 3000);
			if (!r)
				bad("the transfer never ended");
			e = sock_err(s);
		}
	}
	add(" r=%s f=%d fc=%d", ename(e), p.frames, p.fcs);
	if (p.err[0])
		bad("peer: %s", p.err);
	if (e != want)
		bad("the transfer ended with %s, expected %s", ename(e), ename(want));
	if (want == ECOMM && now_ns() - t0 < 800 * MS)
		bad("ECOMM after %llu ms", (unsigned long long)(now_ns() - t0) / MS);
	/* after the end, nothing more */
	if (raw_drain(raw))
		bad("frames after the transfer ended");
	drain_close(s);
	close(raw);
	return why[0] != 0;
}

/* ---- rx: the raw peer sends, the socket receives ---- */

static int case_rx(void)
{
	struct cfg c = random_cfg(pick(2));
	struct peer_tx t = { .padc = PAD_DEFAULT };
	int len = random_len(), s, raw, e, want = 0, cfs, listen = !pick(12), used, flen, pc;
	uint64_t t0;
	ssize_t n;

	if (len < 1)
		len = 1;
	if (len > ISOTP_MAX_PDU)
		len = ISOTP_MAX_PDU;
	if (listen) {
		c.flags |= CAN_ISOTP_LISTEN_MODE;
	} else if (pick(2)) {
		c.bs = 1 + pick(8);
		c.stmin = pick(256);	/* copied into its FC frames as is */
	}
	t.dl = c.fd ? fd_dls[pick(8)] : 8;
	t.pad = pick(2);
	if (pick(2))
		t.padc = pick(256);
	random_checks(&c, pick(2) ? t.padc : PAD_DEFAULT, 0);
	t.s = cfg_sc(&c);
	t.listen = listen;
	/* the peer's view of the PDU's frames */
	{
		struct cfg peerc = c;

		peerc.tx_dl = t.dl;
		peerc.flags = c.flags & CAN_ISOTP_EXTEND_ADDR;
		cfs = cf_count(&peerc, len);
		used = last_used(&peerc, len);
	}
	switch (pick(16)) {
	case 0:
		if (cfs) {
			t.fault = TXF_WRONG_SN;
			t.fault_at = 1 + pick(cfs);
			want = EILSEQ;
		}
		break;
	case 1:
		/* listening sockets time out only once a CF came (6.1) */
		if (cfs > 1 + listen) {
			t.fault = TXF_STOP;
			t.fault_at = 1 + listen + pick(cfs - listen);
			want = ETIMEDOUT;
		}
		break;
	case 2:
	case 3:
		t.fault = TXF_BAD_PAD;
		break;
	}
	/* the last frame's padding against the socket's checks */
	flen = (t.pad || used > 8) ? dl_pad(used) : used;
	pc = t.padc ^ (t.fault == TXF_BAD_PAD ? 0xff : 0);
	if (!want)
		want = either_badmsg(pad_ok(c.flags, c.rxpad, flen, used, pc));
	add("rx fd=%d dl=%d pdl=%d pad=%d fl=%x ae=%d len=%d bs=%d fault=%d@%d", c.fd, c.tx_dl,
	    t.dl, t.pad, c.flags, cfg_ae(&c), len, c.bs, t.fault, t.fault_at);

	if (open_peer_and_socket(&c, &raw, &s))
		return 1;
	t.raw = raw;
	pdu_fill(txbuf, len, next());
	t0 = now_ns();
	if (!pick(25) && !listen) {
		/* an FF announcing too much: OVFLW, nothing received */
		uint32_t big = ISOTP_MAX_PDU + 1;
		uint8_t d[8] = { c.ext, 0 }, fc[8];
		int ae = cfg_ae(&c), k;
		struct frame f;

		if (pick(3))
			big += pick(1000000);
		d[0] = cfg_rx_ext(&c);
		d[ae] = 0x10;
		d[ae + 1] = 0;
		d[ae + 2] = big >> 24;
		d[ae + 3] = big >> 16;
		d[ae + 4] = big >> 8;
		d[ae + 5] = big;
		raw_send(raw, c.rx, c.fd, 0, d, 8);
		memset(fc, c.txpad, sizeof(fc));
		fc[0] = c.ext;
		fc[ae] = 0x32;
		fc[ae + 1] = c.bs;
		fc[ae + 2] = c.stmin;
		k = (c.flags & CAN_ISOTP_TX_PADDING) ? 8 : ae + 3;
		if (raw_recv(raw, &f, 2000) != 1)
			bad("no answer to an FF of %u bytes", big);
		else if (f.len != k || memcmp(f.data, fc, k))
			bad("answer to an FF of %u bytes: len %d PCI %02x", big, f.len, f.data[ae]);
		n = read_pdu_wait(s, 50);
		add(" big=%u r=%s", big, ename(n < 0 ? -n : 0));
		if (n != -ETIME)
			bad("after an OVFLW answer: %zd", n);
		drain_close(s);
		close(raw);
		return why[0] != 0;
	}
	peer_send_pdu(&t, txbuf, len);
	n = read_pdu_wait(s, want == ETIMEDOUT ? 3000 : 2000);
	e = n < 0 ? -n : 0;
	add(" r=%s f=%d fc=%d", ename(e), t.frames, t.fcs);
	if (t.err[0])
		bad("peer: %s", t.err);
	if (!ended_as(e, want))
		bad("the reception ended with %s (%zd), expected %s", ename(e), n, ename(want));
	if (!e && n >= 0 && memcmp(rxbuf, txbuf, len))
		bad("the PDU read differs from the one sent");
	if (want == ETIMEDOUT && now_ns() - t0 < 800 * MS)
		bad("ETIMEDOUT after %llu ms", (unsigned long long)(now_ns() - t0) / MS);
	if (raw_drain(raw))
		bad("%s sent frames after the last", listen ? "a listening socket" : "the socket");
	close(s);
	close(raw);
	return why[0] != 0;
}

/* ---- pair: two CAN_ISOTP sockets ---- */

static int case_pair(void)
{
	int fd = pick(2), s1, s2, raw, e1, e2, len = random_len(), want1 = 0, want2 = 0, ae;
	struct cfg a = random_cfg(fd), b = random_cfg(fd);
	uint64_t t0;
	ssize_t n;

	if (len < 1)
		len = 1;
	if (len > ISOTP_MAX_PDU)
		len = ISOTP_MAX_PDU;
	/* b is a's peer: swapped ids and addresses */
	b.tx = a.rx;
	b.rx = a.tx;
	b.flags &= ~(CAN_ISOTP_EXTEND_ADDR | CAN_ISOTP_RX_EXT_ADDR);
	b.flags |= a.flags & (CAN_ISOTP_EXTEND_ADDR | CAN_ISOTP_RX_EXT_ADDR);
	b.ext = cfg_rx_ext(&a);
	b.rx_ext = a.ext;
	ae = cfg_ae(&a);
	b.bs = pick(2) ? 0 : 1 + pick(16);
	b.stmin = pick(4) ? 0 : 0xf1 + pick(2);
	if (cf_count(&a, len) > 2000)
		b.stmin = 0;
	if (!pick(4))
		a.flags |= CAN_ISOTP_WAIT_TX_DONE;
	/* now and then the receiver checks the padding of the last frame */
	random_checks(&b, (a.flags & CAN_ISOTP_TX_PADDING) ? a.txpad : PAD_DEFAULT, 0);
	{
		int used = last_used(&a, len), pad = (a.flags & CAN_ISOTP_TX_PADDING);
		int flen = (pad || used > 8) ? dl_pad(used) : used;

		want2 = either_badmsg(pad_ok(b.flags, b.rxpad, flen, used,
					     pad ? a.txpad : PAD_DEFAULT));
	}
	add("pair fd=%d dl=%d/%d fl=%x/%x ae=%d len=%d bs=%d st=%02x", fd, a.tx_dl, b.tx_dl,
	    a.flags, b.flags, ae, len, b.bs, b.stmin);
	raw = raw_open(ifindex, a.tx);
	if (raw < 0)
		return bad("raw socket: %s", strerror(-raw));
	s1 = cfg_open(&a, &e1);
	s2 = cfg_open(&b, &e2);
	if (s1 < 0 || s2 < 0) {
		drain_close(s1);
		drain_close(s2);
		close(raw);
		return bad("sockets: %s %s", strerror(e1), strerror(e2));
	}
	pdu_fill(txbuf, len, next());
	t0 = now_ns();
	n = write(s1, txbuf, len);
	e1 = n < 0 ? errno : 0;
	if (n >= 0 && n != len)
		bad("write() returned %zd of %d", n, len);
	n = read_pdu_wait(s2, 5000);
	e2 = n < 0 ? -n : 0;
	if (!(a.flags & CAN_ISOTP_WAIT_TX_DONE)) {
		if (!isotp_wait_idle(s1, 3000))
			bad("the transfer never ended");
		e1 = sock_err(s1);
	}
	add(" r=%s/%s", ename(e1), ename(e2));
	if (e1 != want1 || !ended_as(e2, want2))
		bad("ended with %s/%s, expected %s/%s", ename(e1), ename(e2), ename(want1),
		    ename(want2));
	if (!e2 && n >= 0 && memcmp(rxbuf, txbuf, len))
		bad("the PDU received differs from the one sent");
	watch_check(raw, &a, len, 1);
	if (now_ns() - t0 > 20000 * MS)
		bad("%d bytes took %llu ms", len, (unsigned long long)(now_ns() - t0) / MS);
	drain_close(s1);
	close(s2);
	close(raw);
	return why[0] != 0;
}

/*
 * Frames the network stack dropped before any socket saw them (the per-CPU
 * backlog full: /proc/net/softnet_stat's second column, summed).
 */
static unsigned long softnet_drops(void)
{
	FILE *f = fopen("/proc/net/softnet_stat", "r");
	unsigned long total = 0, processed, dropped;
	char line[256];

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx %lx", &processed, &dropped) == 2)
			total += dropped;
	fclose(f);
	return total;
}

static int one_case(void)
{
	switch (pick(10)) {
	case 0: case 1: case 2: case 3:
		return case_tx();
	case 4: case 5: case 6: case 7:
		return case_rx();
	default:
		return case_pair();
	}
}

int main(void)
{
	const struct fuzz_env env = fuzz_env();
	unsigned long cases = env.cases, limit = env.limit, i, first = 0, done = 0, failed = 0;
	unsigned long drops;
	unsigned int stall;
	int try;
	const char *only = getenv("KTEST_CASE");
	uint64_t seed = env.seed;
	time_t start = time(NULL);
	int s;

	ksft_print_header();
	ksft_set_plan(2);
	ksft_print_msg("seed %llu, %lu cases (KTEST_SEED=%llu replays them, KTEST_CASE=<n> one)\n",
		       (unsigned long long)seed, cases, (unsigned long long)seed);
	backlog_raise();
	stall_watch_start();
	txbuf = malloc(ISOTP_MAX_PDU + 16);
	rxbuf = malloc(ISOTP_MAX_PDU + 16);
	ifindex = vcan_fresh(IFNAME, CANFD_MTU);
	s = socket(PF_CAN, SOCK_DGRAM, CAN_ISOTP);
	ksft_test_result(ifindex > 0 && s >= 0 && txbuf && rxbuf,
			 "a vcan (%s) and a CAN_ISOTP socket (%s)\n",
			 ifindex > 0 ? "ok" : strerror(-ifindex), s >= 0 ? "ok" : strerror(errno));
	if (ifindex <= 0 || s < 0)
		ksft_exit_fail_msg("no CAN ISO-TP here\n");
	close(s);
	if (only && *only) {
		first = strtoul(only, NULL, 0);
		cases = first + 1;
	}
	for (i = first; i < cases; i++) {
		if ((unsigned long)(time(NULL) - start) > limit)
			break;
		/* each case draws from its own stream, so that a case replays alone as well */
		for (try = 1;; try++) {
			int r;

			off = 0;
			obs[0] = '\0';
			why[0] = '\0';
			fuzz_seed_case(seed, i);
			drops = softnet_drops();
			stall_take_ms();
			r = one_case();
			drops = softnet_drops() - drops;
			stall = stall_take_ms();
			if (!r || try == 3 || (stall < 300 && !drops))
				break;
			/* not the kernel under test: the guest or the stack lost time or frames */
			printf("# c%lu: %s (stalled %u ms, %lu frames dropped by the stack);"
			       " again\n", i, why, stall, drops);
		}
		if (why[0]) {
			failed++;
			printf("# FAIL c%lu (KTEST_SEED=%llu KTEST_CASE=%lu): %s (stalled %u ms)\n",
			       i, (unsigned long long)seed, i, why, stall);
		}
		printf("# obs c%lu %s%s\n", i, obs, why[0] ? " INVARIANT" : "");
		fflush(stdout);
		done++;
	}
	ksft_test_result(done > 0 && !failed,
			 "%lu of %lu cases in %ld s, %lu broke an invariant\n", done,
			 cases - first, (long)(time(NULL) - start), failed);
	ksft_finished();
}

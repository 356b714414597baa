// SPDX-License-Identifier: GPL-2.0
/*
 * A sock_ops program's TCP header option on the wire, for the group's demo:
 * the wire program of progs/hdr_wire.bpf.c, attached to a cgroup of our own
 * in a network namespace of our own, reserves and writes an experimental
 * option (kind 254, magic eb9f) on every segment of both ends of one
 * connection over lo, and loads it from the segments it receives.  The
 * segments are captured with an AF_PACKET socket on lo and printed with the
 * kernel's own options named and the program's in hex; then what each
 * receiving end's program loaded, which must be the bytes on the wire.
 * Anything else prints "UNEXPECTED: ..." and exits 1.
 */
#include "hdr_util.h"
#include <stdarg.h>
#include <linux/compiler.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "hdr_wire.skel.h"

#define OPT_LEN 8

static char libbpf_msgs[1 << 16];

static void __printf(1, 2) unexpected(const char *fmt, ...)
{
	va_list ap;

	printf("UNEXPECTED: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	exit(1);
}

/* libbpf's warnings are kept, not printed: a failed load names its reason. */
static int keep_msgs(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	size_t n = strlen(libbpf_msgs);

	if (level <= LIBBPF_WARN && n < sizeof(libbpf_msgs) - 1)
		vsnprintf(libbpf_msgs + n, sizeof(libbpf_msgs) - n, fmt, ap);
	return 0;
}

/* The verifier's reason for a rejected program, or "" */
static const char *load_reason(void)
{
	static const char * const keys[] = { "unknown func", "invalid bpf_context access", NULL };
	unsigned int i;
	char *p, *e;

	for (i = 0; keys[i]; i++) {
		p = strstr(libbpf_msgs, keys[i]);
		if (!p)
			continue;
		e = strchr(p, '\n');
		if (e)
			*e = 0;
		return p;
	}
	return "";
}

static const char *flags_str(unsigned char f, char *s, size_t n)
{
	static const struct { unsigned char bit; const char *name; } names[] = {
		{ TCPF_SYN, "SYN" }, { TCPF_FIN, "FIN" }, { TCPF_RST, "RST" },
		{ TCPF_PSH, "PSH" }, { TCPF_ACK, "ACK" }, { 0, NULL },
	};
	unsigned int i;
	size_t o = 0;

	s[0] = 0;
	for (i = 0; names[i].name; i++)
		if (f & names[i].bit)
			o += snprintf(s + o, n - o, "%s%s", o ? "," : "", names[i].name);
	return s;
}

static const char *hex(const unsigned char *b, int len, char *s)
{
	int i;

	s[0] = 0;
	for (i = 0; i < len; i++)
		sprintf(s + 3 * i, "%02x%s", b[i], i < len - 1 ? " " : "");
	return s;
}

/* The kernel's options of @p, those before offset @end, named. */
static const char *kernel_opts(const struct pkt *p, int end, char *s, size_t n)
{
	size_t o = 0;
	int i = 0, k;

	s[0] = 0;
	while (i < end && o < n) {
		k = p->opts[i];
		if (k == 0)
			break;
		if (k == 1) {
			o += snprintf(s + o, n - o, "%snop", o ? "," : "");
			i++;
			continue;
		}
		if (i + 1 >= end || p->opts[i + 1] < 2)
			break;
		if (k == 2)
			o += snprintf(s + o, n - o, "%smss %d", o ? "," : "",
				      p->opts[i + 2] << 8 | p->opts[i + 3]);
		else if (k == 3)
			o += snprintf(s + o, n - o, "%swscale %d", o ? "," : "", p->opts[i + 2]);
		else if (k == 4)
			o += snprintf(s + o, n - o, "%ssackOK", o ? "," : "");
		else if (k == 8)
			o += snprintf(s + o, n - o, "%sTS", o ? "," : "");
		else
			o += snprintf(s + o, n - o, "%skind %d", o ? "," : "", k);
		i += p->opts[i + 1];
	}
	return s;
}

static struct pkt pk[MAX_PKTS];

/* What a receiving end's program loaded, against segment @i on the wire. */
static void show_load(const char *who, const struct opt_rec *r, int i)
{
	char s[64];
	int off;

	if (i < 0)
		unexpected("%s: no such segment captured", who);
	if (r->ret != OPT_LEN)
		unexpected("%s: bpf_load_hdr_opt() returned %d (called %u times)", who, r->ret,
			   r->n);
	printf("  %-47s %s\n", who, hex(r->data, OPT_LEN, s));
	off = opt_find(&pk[i], KIND_EXP, EXP_MAGIC0 << 8 | EXP_MAGIC1);
	if (memcmp(r->data, pk[i].opts + off, OPT_LEN))
		unexpected("%s: not the bytes on the wire", who);
}

int main(void)
{
	int syn = -1, synack = -1, ack = -1, cdata = -1, sdata = -1, cfin = -1, sfin = -1;
	int cg, cap, srv, cli, acc, n, i, off, cport;
	struct hdr_wire__bss *b;
	struct bpf_link *link;
	struct hdr_wire *skel;
	char cgname[64], buf[16], s1[32], s2[160], s3[64];

	setvbuf(stdout, NULL, _IOLBF, 0);
	libbpf_set_print(keep_msgs);
	if (netns_new())
		unexpected("a network namespace: %s", strerror(errno));
	snprintf(cgname, sizeof(cgname), "demo-%d", getpid());
	cg = cg_make(cgname);
	if (cg < 0 || cg_enter(cgname))
		unexpected("cgroup %s/%s: %s", CG_ROOT, cgname, strerror(cg < 0 ? -cg : errno));
	skel = hdr_wire__open_and_load();
	if (!skel)
		unexpected("the sock_ops program did not load (%s) %s", strerror(errno),
			   load_reason());
	skel->data->w_kind = KIND_EXP;
	skel->data->w_len = OPT_LEN;
	skel->data->w_reserve = OPT_LEN;
	link = bpf_program__attach_cgroup(skel->progs.wire, cg);
	if (!link)
		unexpected("attaching the sock_ops program: %s", strerror(errno));
	cap = cap_open("lo");
	if (cap < 0)
		unexpected("AF_PACKET socket on lo: %s", strerror(-cap));

	srv = tcp_listen(AF_INET, "127.0.0.1");
	if (srv < 0)
		unexpected("listen: %s", strerror(-srv));
	cli = tcp_connect(AF_INET, "127.0.0.1");
	if (cli < 0)
		unexpected("connect: %s", strerror(-cli));
	acc = tcp_accept(srv);
	if (acc < 0)
		unexpected("accept: %s", strerror(-acc));
	cport = local_port(cli);
	if (send(cli, "hello", 5, 0) != 5 || read_full(acc, buf, 5) ||
	    send(acc, "world!", 6, 0) != 6 || read_full(cli, buf, 6) ||
	    shutdown(cli, SHUT_WR) || read(acc, buf, 1) || shutdown(acc, SHUT_WR) ||
	    read(cli, buf, 1))
		unexpected("the exchange failed: %s", strerror(errno));
	close(cli);
	close(acc);
	close(srv);
	msleep(50);
	n = cap_read(cap, pk, MAX_PKTS, 1);

	printf("a connection 127.0.0.1:%d > 127.0.0.1:%d over lo; the sock_ops program\n",
	       cport, SRV_PORT);
	printf("of both ends' cgroup writes option 254 into every segment: eb9f (magic),\n");
	printf("the tcp_flags it was called with to write and to reserve, a0 + sender\n");
	printf("(0 client, 1 server), a5.  %d segments captured on lo (AF_PACKET),\n", n);
	printf("the kernel's options + the program's:\n");
	for (i = 0; i < n; i++) {
		struct pkt *p = &pk[i];
		int from_srv = p->sport == SRV_PORT;

		off = opt_find(p, KIND_EXP, EXP_MAGIC0 << 8 | EXP_MAGIC1);
		printf("  %s %-7s len %d  %s + %s\n", from_srv ? "server > client" :
		       "client > server", flags_str(p->flags, s1, sizeof(s1)), p->payload,
		       kernel_opts(p, off < 0 ? p->optlen : off, s2, sizeof(s2)),
		       off < 0 ? "(none)" : hex(p->opts + off, OPT_LEN, s3));
		if (off < 0 || off + OPT_LEN != p->optlen || p->opts[off + 1] != OPT_LEN)
			unexpected("the segment does not end with the program's option");
		if (p->opts[off + 4] != p->flags || p->opts[off + 6] != (0xa0 | from_srv))
			unexpected("the option does not name this segment's flags and sender");
		if (p->flags == TCPF_SYN && syn < 0)
			syn = i;
		else if (p->flags == (TCPF_SYN | TCPF_ACK) && synack < 0)
			synack = i;
		else if (p->flags == TCPF_ACK && !from_srv && !p->payload && ack < 0)
			ack = i;
		else if (p->payload && !from_srv && cdata < 0)
			cdata = i;
		else if (p->payload && from_srv && sdata < 0)
			sdata = i;
		else if ((p->flags & TCPF_FIN) && !from_srv && cfin < 0)
			cfin = i;
		else if ((p->flags & TCPF_FIN) && from_srv && sfin < 0)
			sfin = i;
	}

	b = skel->bss;
	if (b->bad_line)
		unexpected("the program saw something unexpected (progs/hdr_wire.bpf.c line %u)",
			   b->bad_line);
	printf("the receiving end's program, bpf_load_hdr_opt(kind 254, magic eb9f):\n");
	show_load("server, HDR_OPT_LEN_CB of the SYN-ACK, the SYN:", &b->syn_in, syn);
	show_load("client, ACTIVE_ESTABLISHED_CB, the SYN-ACK:", &b->synack_in, synack);
	show_load("server, PASSIVE_ESTABLISHED_CB, the ACK:", &b->ack_in, ack);
	show_load("server, PARSE_HDR_OPT_CB, the client's data:", &b->data_in[SIDE_PASSIVE],
		  cdata);
	show_load("client, PARSE_HDR_OPT_CB, the server's data:", &b->data_in[SIDE_ACTIVE],
		  sdata);
	show_load("server, PARSE_HDR_OPT_CB, the client's FIN:", &b->fin_in[SIDE_PASSIVE], cfin);
	show_load("client, PARSE_HDR_OPT_CB, the server's FIN:", &b->fin_in[SIDE_ACTIVE], sfin);
	bpf_link__destroy(link);
	hdr_wire__destroy(skel);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_setsockopt() from the TCP header option callbacks (patches/fixes/0008).
 *
 * In stock 6.1 a sock_ops program that sets TCP_NODELAY from
 * BPF_SOCK_OPS_HDR_OPT_LEN_CB recurses (the push sizes the options again,
 * which runs the program again) until the stack overflows, and from
 * BPF_SOCK_OPS_WRITE_HDR_OPT_CB it sends the segment under construction from
 * a nested tcp_write_xmit(), which the outer one then handles again (a NULL
 * pointer dereference).  With the fix both callbacks get -EBUSY for
 * TCP_NODELAY and TCP_CONGESTION (whose new congestion control's init may set
 * TCP_NODELAY itself); every other option, and both options from every other
 * callback, behave as before.
 *
 * Each variant attaches progs/hdr_sockopt.bpf.c with the callback and option
 * it names, moves 256 KiB over lo in small and large writes with the option
 * written on every packet, and checks: the header callbacks ran (they do not
 * exist on the baseline kernel), the calls returned what the variant says
 * (every call, not only the first), every byte arrived once and in order.
 * On stock the first two variants crash the kernel: the group runs alone in
 * its boot so that the crash fails only its own rows (STOCK_FAILS).
 */
#include "../bpf-tcp-hdr-opt/hdr_util.h"
#include <pthread.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "hdr_sockopt.skel.h"
#include "kselftest_harness.h"

#define TOTAL		(256 * 1024)
#define SMALL_WRITES	200
#define SMALL		97

FIXTURE(sockopt) {
	struct hdr_sockopt *skel;
	struct bpf_link *link;
	int cg;
};

FIXTURE_VARIANT(sockopt) {
	int op;			/* the callback that calls bpf_setsockopt() */
	int level;
	int optname;
	int optval;
	int expect;		/* what every call returns */
};

/* The fix: refused from the header option callbacks. */
FIXTURE_VARIANT_ADD(sockopt, len_nodelay) {
	.op = BPF_SOCK_OPS_HDR_OPT_LEN_CB, .level = SOL_TCP,
	.optname = TCP_NODELAY, .optval = 1, .expect = -EBUSY,
};

FIXTURE_VARIANT_ADD(sockopt, write_nodelay) {
	.op = BPF_SOCK_OPS_WRITE_HDR_OPT_CB, .level = SOL_TCP,
	.optname = TCP_NODELAY, .optval = 1, .expect = -EBUSY,
};

FIXTURE_VARIANT_ADD(sockopt, len_congestion) {
	.op = BPF_SOCK_OPS_HDR_OPT_LEN_CB, .level = SOL_TCP,
	.optname = TCP_CONGESTION, .expect = -EBUSY,
};

FIXTURE_VARIANT_ADD(sockopt, write_congestion) {
	.op = BPF_SOCK_OPS_WRITE_HDR_OPT_CB, .level = SOL_TCP,
	.optname = TCP_CONGESTION, .expect = -EBUSY,
};

/* Not refused: other options from those callbacks, and the two elsewhere. */
FIXTURE_VARIANT_ADD(sockopt, len_mark) {
	.op = BPF_SOCK_OPS_HDR_OPT_LEN_CB, .level = SOL_SOCKET,
	.optname = SO_MARK, .optval = 7, .expect = 0,
};

FIXTURE_VARIANT_ADD(sockopt, write_keepidle) {
	.op = BPF_SOCK_OPS_WRITE_HDR_OPT_CB, .level = SOL_TCP,
	.optname = TCP_KEEPIDLE, .optval = 100, .expect = 0,
};

FIXTURE_VARIANT_ADD(sockopt, estab_nodelay) {
	.op = BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB, .level = SOL_TCP,
	.optname = TCP_NODELAY, .optval = 1, .expect = 0,
};

FIXTURE_VARIANT_ADD(sockopt, estab_congestion) {
	.op = BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB, .level = SOL_TCP,
	.optname = TCP_CONGESTION, .expect = 0,
};

FIXTURE_SETUP(sockopt)
{
	char name[64];

	self->link = NULL;
	self->skel = NULL;
	self->cg = -1;
	ASSERT_EQ(0, netns_new());
	snprintf(name, sizeof(name), "sockopt-%d", getpid());
	/* cg_make() gives the cgroup's directory, the attach target */
	self->cg = cg_make(name);
	ASSERT_LE(0, self->cg) TH_LOG("cgroup %s: %s", name, strerror(-self->cg));
	ASSERT_EQ(0, cg_enter(name));
	self->skel = hdr_sockopt__open();
	ASSERT_NE(NULL, self->skel);
	self->skel->bss->op_of_call = variant->op;
	self->skel->bss->level = variant->level;
	self->skel->bss->optname = variant->optname;
	self->skel->bss->optval = variant->optval;
	ASSERT_EQ(0, hdr_sockopt__load(self->skel)) TH_LOG("load: %s", strerror(errno));
	self->link = bpf_program__attach_cgroup(self->skel->progs.sockopt, self->cg);
	ASSERT_NE(NULL, self->link) TH_LOG("attach: %s", strerror(errno));
}

FIXTURE_TEARDOWN(sockopt)
{
	if (self->link)
		bpf_link__destroy(self->link);
	if (self->skel)
		hdr_sockopt__destroy(self->skel);
	if (self->cg >= 0)
		close(self->cg);
}

struct reader {
	pthread_t th;
	int fd;
	int err;
	unsigned char buf[TOTAL];
};

static void *read_all(void *arg)
{
	struct reader *r = arg;

	r->err = read_full(r->fd, r->buf, TOTAL);
	return NULL;
}

static unsigned char byte_at(size_t i)
{
	return (unsigned char)(i * 7 + i / 251);
}

TEST_F_TIMEOUT(sockopt, transfer, 120)
{
	static unsigned char out[TOTAL];
	struct hdr_sockopt__bss *b = self->skel->bss;
	struct reader *r = calloc(1, sizeof(*r));
	int srv, cli, i;
	size_t off = 0;

	ASSERT_NE(NULL, r);
	for (i = 0; i < TOTAL; i++)
		out[i] = byte_at(i);
	srv = tcp_listen(AF_INET, "127.0.0.1");
	ASSERT_LE(0, srv) TH_LOG("listen: %s", strerror(-srv));
	cli = tcp_connect(AF_INET, "127.0.0.1");
	ASSERT_LE(0, cli) TH_LOG("connect: %s", strerror(-cli));
	r->fd = tcp_accept(srv);
	ASSERT_LE(0, r->fd) TH_LOG("accept: %s", strerror(-r->fd));
	ASSERT_EQ(0, pthread_create(&r->th, NULL, read_all, r));
	/* small writes leave partial frames queued (Nagle), then one bulk send */
	for (i = 0; i < SMALL_WRITES; i++, off += SMALL) {
		ASSERT_EQ(0, send_full(cli, out + off, SMALL));
	}
	ASSERT_EQ(0, send_full(cli, out + off, TOTAL - off));
	pthread_join(r->th, NULL);
	EXPECT_EQ(0, r->err) TH_LOG("reading: %s", strerror(-r->err));
	EXPECT_EQ(0, memcmp(out, r->buf, TOTAL)) TH_LOG("the bytes received differ");

	TH_LOG("header callbacks: %llu length, %llu write; bpf_setsockopt(): first %d, "
	       "%llu returned 0, %llu failed", b->n_len, b->n_write, self->skel->data->first_ret,
	       b->n_ok, b->n_err);
	/* the header option callbacks ran (absent without the feature) */
	EXPECT_LT(0, b->n_len);
	EXPECT_LT(0, b->n_write);
	EXPECT_EQ(variant->expect, self->skel->data->first_ret);
	if (variant->expect) {
		EXPECT_EQ(0, b->n_ok);
	} else {
		EXPECT_EQ(0, b->n_err);
		EXPECT_LT(0, b->n_ok);
	}
	close(cli);
	close(r->fd);
	close(srv);
	free(r);
}

TEST_HARNESS_MAIN

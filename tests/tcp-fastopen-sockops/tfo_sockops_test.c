// SPDX-License-Identifier: GPL-2.0
/*
 * TCP Fast Open connects while a sock_ops program drops the socket's route
 * (patches/fixes/0018).
 *
 * tcp_connect() looks the route up, then runs BPF_SOCK_OPS_RWND_INIT,
 * BPF_SOCK_OPS_TIMEOUT_INIT and BPF_SOCK_OPS_NEEDS_ECN.  A program may call
 * bpf_setsockopt() there, and SO_MARK or IP_TOS (when the value changes) and
 * SO_BINDTOIFINDEX drop the route (sk_dst_reset()).  tcp_send_syn_data() then looks the Fast Open
 * cookie up with no route: stock 6.1 dereferences it in tcp_get_metrics()
 * and crashes.  With the fix the connect goes on.  The update of the cookie
 * cache after the SYN-ACK already checks for a route: SO_MARK from
 * BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB, just before it, passes on stock too.
 *
 * Each variant attaches progs/tfo_sockops.bpf.c with the callback and option
 * it names and makes three Fast Open connects (sendto(MSG_FASTOPEN) with
 * data) over lo, IPv4 or IPv6, to a Fast Open listener: the data arrives,
 * the answer comes back, every bpf_setsockopt() call returned 0 (the option
 * really changed, so the route really went), and the kernel is still there.
 * The first variant sets an option that keeps the route (SO_KEEPALIVE): it
 * must pass on every kernel, stock included.  On stock the next one crashes
 * the kernel: the group runs alone in its boot (STOCK_FAILS: every row but
 * the first); to see one variant crash stock,
 * KTEST_CASE=<variant> FLAVOUR=stock scripts/run-group.sh tcp-fastopen-sockops.
 */
#include "../bpf-tcp-hdr-opt/hdr_util.h"
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "tfo_sockops.skel.h"
#include "kselftest_harness.h"

#ifndef SO_BINDTOIFINDEX
#define SO_BINDTOIFINDEX 62
#endif

#define CONNECTS	3

FIXTURE(tfo) {
	struct tfo_sockops *skel;
	struct bpf_link *link;
	int cg;
};

FIXTURE_VARIANT(tfo) {
	const char *name;	/* KTEST_CASE=<name> runs only this variant (the others skip) */
	int op;			/* the callback that calls bpf_setsockopt() */
	int level, optname, value, toggle;
	int fam;
};

/* control: an option that leaves the route alone */
FIXTURE_VARIANT_ADD(tfo, timeout_init_keepalive_v4) {
	.name = "timeout_init_keepalive_v4",
	.op = BPF_SOCK_OPS_TIMEOUT_INIT, .level = SOL_SOCKET, .optname = SO_KEEPALIVE,
	.value = 1, .fam = AF_INET,
};

FIXTURE_VARIANT_ADD(tfo, timeout_init_mark_v4) {
	.name = "timeout_init_mark_v4",
	.op = BPF_SOCK_OPS_TIMEOUT_INIT, .level = SOL_SOCKET, .optname = SO_MARK,
	.value = 7, .toggle = 1, .fam = AF_INET,
};

FIXTURE_VARIANT_ADD(tfo, timeout_init_mark_v6) {
	.name = "timeout_init_mark_v6",
	.op = BPF_SOCK_OPS_TIMEOUT_INIT, .level = SOL_SOCKET, .optname = SO_MARK,
	.value = 7, .toggle = 1, .fam = AF_INET6,
};

FIXTURE_VARIANT_ADD(tfo, rwnd_init_tos_v4) {
	.name = "rwnd_init_tos_v4",
	.op = BPF_SOCK_OPS_RWND_INIT, .level = SOL_IP, .optname = IP_TOS,
	.value = 0x10, .toggle = 0x18, .fam = AF_INET,
};

FIXTURE_VARIANT_ADD(tfo, needs_ecn_mark_v4) {
	.name = "needs_ecn_mark_v4",
	.op = BPF_SOCK_OPS_NEEDS_ECN, .level = SOL_SOCKET, .optname = SO_MARK,
	.value = 7, .toggle = 1, .fam = AF_INET,
};

FIXTURE_VARIANT_ADD(tfo, timeout_init_bindtoifindex_v6) {
	.name = "timeout_init_bindtoifindex_v6",
	.op = BPF_SOCK_OPS_TIMEOUT_INIT, .level = SOL_SOCKET, .optname = SO_BINDTOIFINDEX,
	.value = 1, .fam = AF_INET6,	/* lo */
};

FIXTURE_VARIANT_ADD(tfo, active_established_mark_v4) {
	.name = "active_established_mark_v4",
	.op = BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB, .level = SOL_SOCKET, .optname = SO_MARK,
	.value = 7, .toggle = 1, .fam = AF_INET,
};

FIXTURE_VARIANT_ADD(tfo, active_established_mark_v6) {
	.name = "active_established_mark_v6",
	.op = BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB, .level = SOL_SOCKET, .optname = SO_MARK,
	.value = 7, .toggle = 1, .fam = AF_INET6,
};

FIXTURE_SETUP(tfo)
{
	char name[64];

	self->link = NULL;
	self->skel = NULL;
	self->cg = -1;
	if (getenv("KTEST_CASE") && *getenv("KTEST_CASE") &&
	    strcmp(getenv("KTEST_CASE"), variant->name))
		SKIP(return, "KTEST_CASE=%s", getenv("KTEST_CASE"));
	ASSERT_EQ(0, netns_new());
	netns_no_dad();
	/* Fast Open on both sides, with and without a cookie; no blackhole back-off */
	ASSERT_EQ(0, ktest_write_str("/proc/sys/net/ipv4/tcp_fastopen", "3"));
	ktest_write_str("/proc/sys/net/ipv4/tcp_fastopen_blackhole_timeout_sec", "0");
	snprintf(name, sizeof(name), "tfo-%d", getpid());
	/* cg_make() gives the cgroup's directory, the attach target */
	self->cg = cg_make(name);
	ASSERT_LE(0, self->cg) TH_LOG("cgroup %s: %s", name, strerror(-self->cg));
	ASSERT_EQ(0, cg_enter(name));
	self->skel = tfo_sockops__open();
	ASSERT_NE(NULL, self->skel);
	self->skel->bss->op_of_call = variant->op;
	self->skel->bss->level = variant->level;
	self->skel->bss->optname = variant->optname;
	self->skel->bss->value = variant->value;
	self->skel->bss->toggle = variant->toggle;
	ASSERT_EQ(0, tfo_sockops__load(self->skel)) TH_LOG("load: %s", strerror(errno));
	self->link = bpf_program__attach_cgroup(self->skel->progs.tfo_sockops, self->cg);
	ASSERT_NE(NULL, self->link) TH_LOG("attach: %s", strerror(errno));
}

FIXTURE_TEARDOWN(tfo)
{
	if (self->link)
		bpf_link__destroy(self->link);
	if (self->skel)
		tfo_sockops__destroy(self->skel);
	if (self->cg >= 0)
		close(self->cg);
}

static int tfo_listener(int fam, union addr *a, socklen_t *len)
{
	int fd, qlen = 8;

	fd = tcp_listen_port(fam, fam == AF_INET ? "127.0.0.1" : "::1", 0);
	if (fd < 0)
		return fd;
	if (setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN, &qlen, sizeof(qlen)) ||
	    getsockname(fd, &a->sa, len)) {
		close(fd);
		return -errno;
	}
	return fd;
}

TEST_F_TIMEOUT(tfo, connects, 60)
{
	struct tfo_sockops__bss *b;
	union addr a;
	socklen_t alen = sizeof(a);
	char buf[16];
	int srv, cli, acc, i;

	if (!self->link)	/* not this variant (KTEST_CASE) */
		return;
	b = self->skel->bss;

	srv = tfo_listener(variant->fam, &a, &alen);
	ASSERT_LE(0, srv) TH_LOG("listen: %s", strerror(-srv));
	for (i = 0; i < CONNECTS; i++) {
		cli = socket(variant->fam, SOCK_STREAM, 0);
		ASSERT_LE(0, cli);
		sock_timeouts(cli, 5000);
		/* connect and send in one call: the data goes in the SYN once a cookie is cached */
		ASSERT_EQ(5, sendto(cli, "hello", 5, MSG_FASTOPEN, &a.sa, alen))
			TH_LOG("connect %d: sendto(MSG_FASTOPEN): %s", i, strerror(errno));
		acc = tcp_accept(srv);
		ASSERT_LE(0, acc) TH_LOG("connect %d: accept: %s", i, strerror(-acc));
		memset(buf, 0, sizeof(buf));
		EXPECT_EQ(0, read_full(acc, buf, 5)) TH_LOG("connect %d: no data", i);
		EXPECT_EQ(0, memcmp(buf, "hello", 5));
		EXPECT_EQ(0, send_full(acc, "world", 5));
		memset(buf, 0, sizeof(buf));
		EXPECT_EQ(0, read_full(cli, buf, 5)) TH_LOG("connect %d: no answer", i);
		EXPECT_EQ(0, memcmp(buf, "world", 5));
		close(acc);
		close(cli);
	}
	close(srv);
	TH_LOG("bpf_setsockopt(%d, %d) from op %d: %llu calls, %llu returned 0, first error %d",
	       variant->level, variant->optname, variant->op, b->n_calls, b->n_ok,
	       b->first_err);
	/* the callback ran on every connect, and the option was set every time */
	EXPECT_LE(CONNECTS, b->n_calls);
	EXPECT_EQ(b->n_calls, b->n_ok);
}

TEST_HARNESS_MAIN

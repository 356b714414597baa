// SPDX-License-Identifier: GPL-2.0
/*
 * What bpf_reserve_hdr_opt(), bpf_store_hdr_opt(), bpf_load_hdr_opt() and
 * bpf_getsockopt(TCP_BPF_SYN, TCP_BPF_SYN_IP, TCP_BPF_SYN_MAC) return, from
 * the ops where they work and from those where they must not
 * (progs/hdr_errs.bpf.c keeps every return value; the expected ones are
 * stock 6.1's, from net/core/filter.c): bad lengths and flags (-EINVAL), a
 * duplicate kind, the kernel's or the program's (-EEXIST), no option space
 * left (-ENOSPC), a buffer too short for the option found (-ENOSPC, a
 * partial copy) or for the kind-length searched (-EINVAL), a kind not
 * there (-ENOMSG), no SYN to search (-ENOENT), the wrong op (-EPERM); the
 * skb_* context fields in each op; an option whose kind-length is below 2
 * (stock stores it, and a later search fails with -EFAULT).
 * Then the callback flags: what setting them returns, and an accepted
 * socket starting with its listener's (plain, syncookie and Fast Open).
 */
#include "hdr_util.h"
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "hdr_errs.skel.h"
#include "hdr_flags.skel.h"
#include "kselftest_harness.h"

static const char *lo_ip(int fam)
{
	return fam == AF_INET ? "127.0.0.1" : "::1";
}

static char cg_name[64];

static int enter_cgroup(struct __test_metadata *_metadata, const char *tag)
{
	char p[256];
	int fd;

	snprintf(cg_name, sizeof(cg_name), "%s-%d", tag, getpid());
	fd = cg_make(cg_name);
	if (fd < 0)
		return fd;
	close(fd);
	if (cg_enter(cg_name))
		return -EIO;
	snprintf(p, sizeof(p), "%s/%s", CG_ROOT, cg_name);
	fd = open(p, O_RDONLY | O_DIRECTORY);
	return fd < 0 ? -errno : fd;
}

/* Expected return values; V(x) for both families, X(v4, v6) where they differ. */
#define PORT_OF_CLIENT 100000	/* the client's port, big-endian bytes */
#define UNTOUCHED 0xee

struct expect {
	int id;
	const char *name;
	int v4, v6;
};

#define V(id, v) { id, #id, v, v }
#define X(id, a, b) { id, #id, a, b }

static const struct expect exp_reserve[] = {
	V(E_LEN_RES_1, -EINVAL),
	V(E_LEN_RES_FLAGS, -EINVAL),
	V(E_LEN_RES_21, -ENOSPC),	/* the SYN's options leave 20 */
	V(E_LEN_RES_41, -ENOSPC),
	V(E_LEN_RES_12, 0),
	V(E_LEN_RES_9, -ENOSPC),
	V(E_LEN_RES_8, 0),
	V(E_LEN_RES_2, -ENOSPC),	/* all 40 bytes in use */
	{ -1 }
};

static const struct expect exp_store[] = {
	V(E_WR_ST_FLAGS, -EINVAL),
	V(E_WR_ST_LEN1, -EINVAL),
	V(E_WR_ST_KINDLEN, -EINVAL),	/* kind-length beyond the buffer */
	V(E_WR_ST_NOP, -EINVAL),
	V(E_WR_ST_EOL, -EINVAL),
	V(E_WR_ST_EXP3, -EINVAL),	/* 253/254 need a magic */
	V(E_WR_ST_BIG, -ENOSPC),
	V(E_WR_ST_DUP_MSS, -EEXIST),	/* the kernel's own options */
	V(E_WR_ST_DUP_WS, -EEXIST),
	V(E_WR_ST_OK, 0),
	V(E_WR_ST_DUP, -EEXIST),
	V(E_WR_ST_EXP_OK, 0),
	V(E_WR_ST_EXP_DUP, -EEXIST),	/* same kind and 2-byte magic */
	V(E_WR_ST_EXP_OTHER, 0),	/* same kind, other magic */
	V(E_WR_ST_253, 0),
	V(E_WR_ST_NOSPC, -ENOSPC),
	V(E_WR_ST_FILL, 0),
	V(E_WR_ST_FULL, -ENOSPC),
	V(E_WR_DATA_LEN, 40),		/* header and the kernel's options */
	V(E_WR_DATA_LEN_AFTER, 60),	/* ... and the program's 20 bytes */
	V(E_SAW_ST_TS_BIG, -ENOSPC),	/* before the duplicate check */
	V(E_SAW_ST_DUP_TS, -EEXIST),
	V(E_SAW_ST_OK, 0),
	{ -1 }
};

static const struct expect exp_load[] = {
	V(E_WR_LD_FOUND, 4),
	V(E_WR_LD_SHORT, -ENOSPC),
	V(E_WR_LD_SHORT_BYTES, 0xB904),	/* the first 2 bytes were copied */
	V(E_WR_LD_REGLEN, -EINVAL),
	V(E_WR_LD_LEN1, -EINVAL),
	V(E_WR_LD_FLAGS, -EINVAL),
	V(E_WR_LD_NOP, -EINVAL),
	V(E_WR_LD_EOL, -EINVAL),
	V(E_WR_LD_EXP3, -EINVAL),
	V(E_WR_LD_EXP0, -EINVAL),
	V(E_WR_LD_SEARCHLEN, -EINVAL),
	V(E_WR_LD_EXP_FOUND, 4),
	V(E_WR_LD_EXP_MAGIC4, -ENOMSG),
	V(E_WR_LD_EXP_MISS, -ENOMSG),
	V(E_WR_LD_MISSING, -ENOMSG),
	V(E_WR_LD_MSS, 4),
	V(E_AE_LD_MSS, 4),		/* the SYN-ACK's */
	V(E_SA_LOAD_SYN, 4),		/* the SYN's, while writing the SYN-ACK */
	V(E_SA_LOAD_SYN_EXP, 4),
	V(E_PE_LOAD, -ENOMSG),		/* the ACK carries none */
	V(E_PE_LOAD_TS, 10),
	V(E_PA_LOAD, 4),		/* data, parsed */
	V(E_PA_LOAD_MISSING, -ENOMSG),
	V(E_PA_LOAD_TS, 10),
	{ -1 }
};

static const struct expect exp_no_syn[] = {
	/* BPF_LOAD_HDR_OPT_TCP_SYN / TCP_BPF_SYN where no SYN is available */
	V(E_LEN_LOAD_SYN, -ENOENT),
	V(E_LEN_GETSOCKOPT_SYN, -ENOENT),
	V(E_WR_LD_SYN, -ENOENT),
	V(E_AE_LD_SYN, -ENOENT),
	V(E_AE_GETSOCKOPT_SYN, -ENOENT),
	V(E_PE_LOAD_SYN, -ENOENT),
	V(E_PE_GS_SYN, -ENOENT),
	{ -1 }
};

static const struct expect exp_wrong_op[] = {
	V(E_CONN_LOAD, -EPERM),
	V(E_CONN_STORE, -EPERM),
	V(E_CONN_RESERVE, -EPERM),
	V(E_LEN_LOAD, -EPERM),		/* no header yet */
	V(E_LEN_STORE, -EPERM),
	V(E_WR_RESERVE, -EPERM),
	V(E_AE_STORE, -EPERM),
	V(E_AE_RESERVE, -EPERM),
	V(E_SA_LOAD, -EPERM),
	V(E_PE_STORE, -EPERM),
	V(E_PE_RESERVE, -EPERM),
	V(E_PA_STORE, -EPERM),
	V(E_PA_RESERVE, -EPERM),
	{ -1 }
};

static const struct expect exp_syn_copy[] = {
	V(E_SA_GS_SYN, 60),		/* a SYN with 40 bytes of options */
	X(E_SA_GS_SYN_IP, 80, 100),
	X(E_SA_GS_SYN_MAC, 94, 114),	/* lo's 14-byte Ethernet header */
	V(E_SA_GS_SYN_SHORT, -ENOSPC),
	V(E_SA_GS_SYN_SHORT_BYTE, PORT_OF_CLIENT),
	V(E_SA_GS_SYN_PAST, UNTOUCHED),
	{ -1 }
};

static const struct expect exp_ctx[] = {
	V(E_CONN_FLAGS_SET, 0),
	V(E_LEN_TCP_FLAGS, TCPF_SYN),
	V(E_LEN_SKB_LEN, 0),		/* no payload, no header yet */
	V(E_WR_SKB_LEN, 60),
	V(E_WR_TCP_FLAGS, TCPF_SYN),
	V(E_AE_TCP_FLAGS, TCPF_SYN | TCPF_ACK),
	V(E_AE_DATA_LEN, 44),		/* the SYN-ACK's header */
	V(E_AE_SKB_LEN, 44),
	V(E_SA_TCP_FLAGS, TCPF_SYN | TCPF_ACK),
	V(E_SAW_TCP_FLAGS, TCPF_SYN | TCPF_ACK),
	V(E_SAW_ARG0, 0),
	V(E_PE_TCP_FLAGS, TCPF_ACK),
	V(E_PA_TCP_FLAGS, TCPF_PSH | TCPF_ACK),
	V(E_PA_SKB_LEN_MINUS_HDR, 7),
	{ -1 }
};

static const struct expect exp_corner[] = {
	V(E_CO_ST_LEN0, 0),		/* nothing written */
	V(E_CO_ST_LEN1, 0),		/* one byte written */
	V(E_CO_ST_AFTER, -EFAULT),	/* which no search gets past */
	V(E_CO_SA_LOAD_SYN_MSS, 4),
	V(E_CO_SA_LOAD_SYN_MISSING, -EFAULT),
	{ -1 }
};

FIXTURE(errs) {
	struct hdr_errs *skel;
	struct bpf_link *link;
	int cap;
	int client_port;
	struct pkt syn;
	int have_syn;
};

FIXTURE_VARIANT(errs) {
	int fam;
};

FIXTURE_VARIANT_ADD(errs, v4) { .fam = AF_INET };
FIXTURE_VARIANT_ADD(errs, v6) { .fam = AF_INET6 };

FIXTURE_SETUP(errs)
{
	int cg, i;

	self->link = NULL;
	ASSERT_EQ(0, netns_new());
	cg = enter_cgroup(_metadata, "errs");
	ASSERT_LE(0, cg);
	self->skel = hdr_errs__open_and_load();
	ASSERT_NE(NULL, self->skel) TH_LOG("loading the program failed (errno %d)", errno);
	for (i = 0; i < NR_E; i++)
		self->skel->bss->res[i] = E_UNSET;
	self->link = bpf_program__attach_cgroup(self->skel->progs.errs, cg);
	ASSERT_NE(NULL, self->link);
	close(cg);
	self->cap = cap_open("lo");
	ASSERT_LE(0, self->cap);
}

FIXTURE_TEARDOWN(errs)
{
	bpf_link__destroy(self->link);
	hdr_errs__destroy(self->skel);
}

/* One connection: 7 bytes from the client, then both ends close. */
static void run_conn(struct __test_metadata *_metadata, FIXTURE_DATA(errs) *self,
		     int fam, int mode)
{
	static struct pkt pk[256];
	int srv, cli, acc, n, i;
	char buf[8];

	self->skel->bss->mode = mode;
	srv = tcp_listen(fam, lo_ip(fam));
	ASSERT_LE(0, srv);
	cli = tcp_connect(fam, lo_ip(fam));
	ASSERT_LE(0, cli) TH_LOG("connect: %s", strerror(-cli));
	self->client_port = local_port(cli);
	acc = tcp_accept(srv);
	ASSERT_LE(0, acc);
	ASSERT_EQ(7, send(cli, "payload", 7, 0));
	ASSERT_EQ(0, read_full(acc, buf, 7));
	close(cli);
	close(acc);
	close(srv);
	msleep(50);
	n = cap_read(self->cap, pk, 256, 1);
	self->have_syn = 0;
	for (i = 0; i < n; i++) {
		if (pk[i].flags == TCPF_SYN) {
			self->syn = pk[i];
			self->have_syn = 1;
			break;
		}
	}
}

static void check(struct __test_metadata *_metadata, FIXTURE_DATA(errs) *self,
		  int fam, const struct expect *e)
{
	const int *res = self->skel->bss->res;

	for (; e->id >= 0; e++) {
		int want = fam == AF_INET ? e->v4 : e->v6;

		if (want == PORT_OF_CLIENT)
			want = self->client_port;
		if (res[e->id] == E_UNSET)
			TH_LOG("%s: never called", e->name);
		EXPECT_EQ(want, res[e->id]) TH_LOG("%s: %d (%s), stock gives %d (%s)",
						   e->name, res[e->id],
						   res[e->id] < 0 ? strerror(-res[e->id]) : "",
						   want, want < 0 ? strerror(-want) : "");
	}
}

TEST_F(errs, reserve)
{
	run_conn(_metadata, self, variant->fam, 0);
	check(_metadata, self, variant->fam, exp_reserve);
	/* 20 bytes reserved: the SYN's header is 60 bytes */
	ASSERT_TRUE(self->have_syn);
	EXPECT_EQ(60, self->syn.doff);
}

TEST_F(errs, store)
{
	static const unsigned char want[20] = {
		0xB9, 4, 0xfa, 0xce, KIND_EXP, 4, EXP_MAGIC0, EXP_MAGIC1,
		KIND_EXP, 4, 0x12, 0x34, 253, 4, EXP_MAGIC0, EXP_MAGIC1,
		0xBB, 4, EXP_MAGIC0, EXP_MAGIC1,
	};

	run_conn(_metadata, self, variant->fam, 0);
	check(_metadata, self, variant->fam, exp_store);
	/* what the stores that succeeded wrote, in order, after the kernel's */
	ASSERT_TRUE(self->have_syn);
	ASSERT_EQ(40, self->syn.optlen);
	EXPECT_EQ(0, memcmp(self->syn.opts + 20, want, 20));
}

TEST_F(errs, load)
{
	run_conn(_metadata, self, variant->fam, 0);
	check(_metadata, self, variant->fam, exp_load);
}

TEST_F(errs, no_syn_available)
{
	run_conn(_metadata, self, variant->fam, 0);
	check(_metadata, self, variant->fam, exp_no_syn);
}

TEST_F(errs, wrong_op)
{
	run_conn(_metadata, self, variant->fam, 0);
	check(_metadata, self, variant->fam, exp_wrong_op);
}

TEST_F(errs, getsockopt_syn)
{
	run_conn(_metadata, self, variant->fam, 0);
	check(_metadata, self, variant->fam, exp_syn_copy);
}

TEST_F(errs, ctx_fields)
{
	run_conn(_metadata, self, variant->fam, 0);
	check(_metadata, self, variant->fam, exp_ctx);
}

TEST_F(errs, kind_length_below_2)
{
	static const unsigned char want[4] = { 0xB9, 1, 1, 1 };

	run_conn(_metadata, self, variant->fam, 1);
	check(_metadata, self, variant->fam, exp_corner);
	/* one byte written, the rest of the 4 reserved padded with NOPs */
	ASSERT_TRUE(self->have_syn);
	ASSERT_EQ(24, self->syn.optlen);
	EXPECT_EQ(0, memcmp(self->syn.opts + 20, want, 4));
}

/* ================================================================ cb flags */

FIXTURE(inherit) {
	struct hdr_flags *skel;
	struct bpf_link *link;
};

FIXTURE_VARIANT(inherit) {
	int mode;	/* 0 plain, 1 syncookie, 2 Fast Open */
	int flags;
};

#define HDR_FLAGS (BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG | \
		   BPF_SOCK_OPS_PARSE_UNKNOWN_HDR_OPT_CB_FLAG | BPF_SOCK_OPS_STATE_CB_FLAG)

FIXTURE_VARIANT_ADD(inherit, plain) { .mode = 0, .flags = HDR_FLAGS };
FIXTURE_VARIANT_ADD(inherit, syncookie) { .mode = 1, .flags = HDR_FLAGS };
FIXTURE_VARIANT_ADD(inherit, fastopen) { .mode = 2, .flags = HDR_FLAGS };
FIXTURE_VARIANT_ADD(inherit, parse_all) { .mode = 0,
	.flags = BPF_SOCK_OPS_PARSE_ALL_HDR_OPT_CB_FLAG | BPF_SOCK_OPS_RTT_CB_FLAG };

FIXTURE_SETUP(inherit)
{
	int cg;

	self->link = NULL;
	ASSERT_EQ(0, netns_new());
	cg = enter_cgroup(_metadata, "flags");
	ASSERT_LE(0, cg);
	self->skel = hdr_flags__open_and_load();
	ASSERT_NE(NULL, self->skel);
	self->skel->bss->f_listen_flags = variant->flags;
	self->link = bpf_program__attach_cgroup(self->skel->progs.flags, cg);
	ASSERT_NE(NULL, self->link);
	close(cg);
	ASSERT_EQ(0, ktest_write_str("/proc/sys/net/ipv4/tcp_syncookies",
				variant->mode == 1 ? "2" : "1"));
	if (variant->mode == 2) {
		ASSERT_EQ(0, ktest_write_str("/proc/sys/net/ipv4/tcp_fastopen", "1543"));
	}
}

FIXTURE_TEARDOWN(inherit)
{
	bpf_link__destroy(self->link);
	hdr_flags__destroy(self->skel);
}

TEST_F(inherit, child_starts_with_the_listeners_flags)
{
	struct hdr_flags__bss *b = self->skel->bss;
	union addr a;
	socklen_t alen = make_addr(AF_INET, "127.0.0.1", SRV_PORT, &a);
	int srv, cli, acc;
	char buf[8];

	srv = tcp_listen(AF_INET, "127.0.0.1");
	ASSERT_LE(0, srv);
	if (variant->mode == 2) {
		cli = socket(AF_INET, SOCK_STREAM, 0);
		ASSERT_LE(0, cli);
		ASSERT_EQ(4, sendto(cli, "fast", 4, MSG_FASTOPEN, &a.sa, alen));
	} else {
		cli = tcp_connect(AF_INET, "127.0.0.1");
		ASSERT_LE(0, cli);
	}
	acc = tcp_accept(srv);
	ASSERT_LE(0, acc);
	if (variant->mode == 2) {
		ASSERT_EQ(0, read_full(acc, buf, 4));
	}
	close(cli);
	close(acc);
	close(srv);

	/* the listener's flags as set, all of them supported */
	EXPECT_EQ(0, self->skel->data->f_listen_ret);
	EXPECT_EQ(variant->flags, b->f_listen_after);
	/* the child's, at PASSIVE_ESTABLISHED */
	EXPECT_EQ(1, b->f_child_calls);
	EXPECT_EQ(variant->flags, b->f_child_flags);
	/* 0xff: bit 7 unknown and returned, the seven others set */
	EXPECT_EQ(0x80, self->skel->data->f_conn_ret_ff);
	EXPECT_EQ(0, self->skel->data->f_conn_ret_all);
	EXPECT_EQ(BPF_SOCK_OPS_ALL_CB_FLAGS, b->f_conn_after);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * BPF TCP header options from every CPU at once (patches/bpf-tcp-hdr-opt):
 * one worker thread per CPU, each pinned to its CPU, opens connections over
 * lo (IPv4 on even CPUs, IPv6 on odd ones) and runs request/response
 * exchanges on them, while a sock_ops program (progs/hdr_smp.bpf.c) reserves,
 * writes and parses an option on every packet of both sides; meanwhile
 * another thread attaches and detaches a second program of the same cgroup
 * in a loop, so that the cgroup's program array is replaced under the
 * callbacks.
 *
 * smp.parallel   every exchange completes with the right bytes; no helper
 *                call fails; every data packet parsed carries the option
 *                with its own source port; at least one parse per data
 *                packet sent; the handshake packets seen at ESTABLISHED
 *                carry it too.
 *
 * The console is checked for splats by the harness: run under the debug
 * kernel (lockdep, KASAN) this is the group's race coverage.
 */
#include "hdr_util.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "hdr_smp.skel.h"
#include "kselftest_harness.h"

#define CONNS		40	/* per worker */
#define ROUNDS		50	/* request/response exchanges per connection */
#define MAX_WORKERS	8

struct worker {
	pthread_t th;
	int cpu;
	int fam;
	int port;
	int done;		/* exchanges completed */
	int err;		/* first failure: -errno, or a line number */
};

static atomic_int stop_swap;
static atomic_int swaps;

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static const char *lo_ip(int fam)
{
	return fam == AF_INET ? "127.0.0.1" : "::1";
}

#define FAIL(w, e) do { if (!(w)->err) (w)->err = (e); goto out; } while (0)

/* CONNS connections, ROUNDS exchanges each, both ends in this thread. */
static void *work(void *arg)
{
	struct worker *w = arg;
	int srv, cli = -1, acc = -1, c, r, one = 1;
	unsigned char req, rsp;

	if (pin(w->cpu))
		FAIL(w, __LINE__);
	srv = tcp_listen_port(w->fam, lo_ip(w->fam), w->port);
	if (srv < 0)
		FAIL(w, srv);
	for (c = 0; c < CONNS; c++) {
		cli = tcp_connect_port(w->fam, lo_ip(w->fam), w->port);
		if (cli < 0)
			FAIL(w, cli);
		setsockopt(cli, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		acc = tcp_accept(srv);
		if (acc < 0)
			FAIL(w, acc);
		setsockopt(acc, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		for (r = 0; r < ROUNDS; r++) {
			req = (unsigned char)(w->cpu * 31 + c * 7 + r);
			if (send(cli, &req, 1, 0) != 1 || recv(acc, &rsp, 1, MSG_WAITALL) != 1)
				FAIL(w, -errno ?: __LINE__);
			if (rsp != req)
				FAIL(w, __LINE__);
			rsp = ~req;
			if (send(acc, &rsp, 1, 0) != 1 || recv(cli, &req, 1, MSG_WAITALL) != 1)
				FAIL(w, -errno ?: __LINE__);
			if (req != rsp)
				FAIL(w, __LINE__);
			w->done++;
		}
		/* the client closes first, each end reads the other's FIN */
		if (shutdown(cli, SHUT_WR) || recv(acc, &rsp, 1, 0) != 0 ||
		    shutdown(acc, SHUT_WR) || recv(cli, &req, 1, 0) != 0)
			FAIL(w, -errno ?: __LINE__);
		close(cli);
		close(acc);
		cli = acc = -1;
	}
	close(srv);
out:
	if (cli >= 0)
		close(cli);
	if (acc >= 0)
		close(acc);
	return NULL;
}

struct swapper {
	pthread_t th;
	struct bpf_program *prog;
	int cg;
	int err;
};

/* The second program attached and detached until the workers are done. */
static void *swap(void *arg)
{
	struct swapper *s = arg;
	struct bpf_link *link;

	while (!atomic_load(&stop_swap)) {
		link = bpf_program__attach_cgroup(s->prog, s->cg);
		if (!link) {
			s->err = -errno;
			break;
		}
		sched_yield();
		bpf_link__destroy(link);
		atomic_fetch_add(&swaps, 1);
	}
	return NULL;
}

FIXTURE(smp) {
	struct hdr_smp *skel;
	struct bpf_link *link;
	int cg;
};

FIXTURE_SETUP(smp)
{
	char name[64];

	self->link = NULL;
	self->cg = -1;
	ASSERT_EQ(0, netns_new());
	snprintf(name, sizeof(name), "smp-%d", getpid());
	/* cg_make() gives the cgroup's directory, the attach target */
	self->cg = cg_make(name);
	ASSERT_LE(0, self->cg) TH_LOG("cgroup %s: %s", name, strerror(-self->cg));
	ASSERT_EQ(0, cg_enter(name));
	self->skel = hdr_smp__open_and_load();
	ASSERT_NE(NULL, self->skel) TH_LOG("loading the programs failed (errno %d)", errno);
	self->link = bpf_program__attach_cgroup(self->skel->progs.smp, self->cg);
	ASSERT_NE(NULL, self->link) TH_LOG("attach: %s", strerror(errno));
}

FIXTURE_TEARDOWN(smp)
{
	if (self->link)
		bpf_link__destroy(self->link);
	if (self->skel)
		hdr_smp__destroy(self->skel);
	if (self->cg >= 0)
		close(self->cg);
}

TEST_F_TIMEOUT(smp, parallel, 240)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), i, total = 0;
	struct worker w[MAX_WORKERS] = {};
	struct swapper sw = { .prog = self->skel->progs.noop, .cg = self->cg };
	struct hdr_smp__bss *c = self->skel->bss;

	ASSERT_LE(2, ncpu) TH_LOG("the group runs with -smp 2: %d CPU online", ncpu);
	if (ncpu > MAX_WORKERS)
		ncpu = MAX_WORKERS;
	ASSERT_EQ(0, pthread_create(&sw.th, NULL, swap, &sw));
	for (i = 0; i < ncpu; i++) {
		w[i].cpu = i;
		w[i].fam = i % 2 ? AF_INET6 : AF_INET;
		w[i].port = SRV_PORT + i;
		ASSERT_EQ(0, pthread_create(&w[i].th, NULL, work, &w[i]));
	}
	for (i = 0; i < ncpu; i++) {
		pthread_join(w[i].th, NULL);
		EXPECT_EQ(0, w[i].err) TH_LOG("worker %d (cpu %d): %d exchanges, failed at %d",
					      i, w[i].cpu, w[i].done, w[i].err);
		EXPECT_EQ(CONNS * ROUNDS, w[i].done);
		total += w[i].done;
	}
	atomic_store(&stop_swap, 1);
	pthread_join(sw.th, NULL);
	EXPECT_EQ(0, sw.err);
	EXPECT_LT(0, atomic_load(&swaps));

	TH_LOG("%d exchanges on %d CPUs, %d swaps: reserved %llu written %llu parsed %llu "
	       "(data %llu) estab %llu; missing %llu (control %llu) bad port %llu",
	       total, ncpu, atomic_load(&swaps), c->n_reserved, c->n_written,
	       c->n_parsed, c->n_parsed_data, c->n_estab, c->n_missing,
	       c->n_missing_ctl, c->n_bad_port);
	EXPECT_EQ(0, c->n_reserve_err);
	EXPECT_EQ(0, c->n_write_err);
	EXPECT_EQ(0, c->n_short_hdr);
	EXPECT_EQ(0, c->n_missing);
	EXPECT_EQ(0, c->n_bad_port);
	/* a request and a response per exchange, both parsed by their receiver */
	EXPECT_LE(2ULL * total, c->n_parsed_data);
	/* both ends of every connection saw the option at ESTABLISHED */
	EXPECT_EQ(2ULL * CONNS * ncpu, c->n_estab);
	/*
	 * Every packet parsed or seen at ESTABLISHED was written once, and so
	 * was every SYN (seen by neither); a retransmission is written again.
	 */
	EXPECT_LE(c->n_parsed + c->n_estab + CONNS * ncpu, c->n_written);
	/* and each write had its reservation, as did tcp_current_mss() */
	EXPECT_LE(c->n_written, c->n_reserved);
}

TEST_HARNESS_MAIN

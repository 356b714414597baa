// SPDX-License-Identifier: GPL-2.0
/*
 * BPF TCP header options benchmark: request/response with 1-byte messages
 * (like netperf's TCP_RR) and connect/request/response/close (TCP_CRR)
 * between two network namespaces over a veth pair, the client in one, the
 * server (a second process) in the other, both in one cgroup.  The cases:
 *
 *   rr-no-prog      no sock_ops program
 *   rr-prog-idle    a sock_ops program that asks for no header callbacks
 *   rr-hdr-opt      a program that reserves, writes and parses a 4-byte
 *                   option on every packet (hdr_opt_bench.bpf.c)
 *   crr-no-prog, crr-hdr-opt   the same per connection, with the SYN,
 *                   SYN-ACK and FIN paths
 *
 * One figure per case: guest ns per transaction (median of 11 repetitions
 * after a warm-up; tps= in the report line).  The hdr-opt cases check the
 * program's counters: every packet carried the option and every parse found
 * it, or the case fails.  Under icount on one vCPU (group.conf) the figures
 * count instructions (docs/benchmarks.md).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/types.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "hdr_opt_bench.skel.h"
#include "../../tests/bpf-tcp-hdr-opt-fuzz/hdr_net.h"
#include "../bench_util.h"

#define REPS		11
#define RR_OPS		1000	/* transactions per repetition */
#define CRR_OPS		100	/* connections per repetition */
#define CGROUP		"/sys/fs/cgroup/hdr-opt-bench"
#define PORT		5001

static struct hdr_opt_bench *skel;
static int cg_fd, ns_a, ns_b;
static const unsigned char addr_a[4] = { 10, 9, 0, 1 }, addr_b[4] = { 10, 9, 0, 2 };
static uint16_t crr_port = 20000;	/* the client's ports: never the same 4-tuple twice */

static int fail(const char *what)
{
	printf("# %s: %s\n", what, strerror(errno));
	return -1;
}

/* Two namespaces, a veth pair between them, permanent neighbours (no ARP during a run). */
static int setup_net(void)
{
	unsigned char mac_a[6], mac_b[6];
	int err;

	if (unshare(CLONE_NEWNET) < 0)
		return fail("unshare");
	ns_a = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (unshare(CLONE_NEWNET) < 0)
		return fail("unshare");
	ns_b = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (ns_a < 0 || ns_b < 0 || setns(ns_a, CLONE_NEWNET) < 0)
		return fail("netns");
	net_sysctl("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
	net_sysctl("/proc/sys/net/ipv6/conf/all/disable_ipv6", "1");
	if ((err = net_veth_add("veth0", "veth1", ns_b)) || (err = net_link_up("lo")) ||
	    (err = net_link_up("veth0")) || (err = net_mac("veth0", mac_a)) ||
	    (err = net_addr_add("veth0", AF_INET, addr_a, 24)))
		goto out;
	if (setns(ns_b, CLONE_NEWNET) < 0)
		return fail("setns");
	net_sysctl("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
	net_sysctl("/proc/sys/net/ipv6/conf/all/disable_ipv6", "1");
	net_sysctl("/proc/sys/net/ipv6/conf/veth1/disable_ipv6", "1");
	if ((err = net_link_up("lo")) || (err = net_link_up("veth1")) ||
	    (err = net_mac("veth1", mac_b)) || (err = net_addr_add("veth1", AF_INET, addr_b, 24)) ||
	    (err = net_neigh("veth1", AF_INET, addr_a, mac_a, false)))
		goto out;
	if (setns(ns_a, CLONE_NEWNET) < 0)
		return fail("setns");
	net_sysctl("/proc/sys/net/ipv6/conf/veth0/disable_ipv6", "1");
	err = net_neigh("veth0", AF_INET, addr_b, mac_b, false);
out:
	if (err) {
		errno = -err;
		return fail("network set-up");
	}
	return 0;
}

static int setup_bpf(void)
{
	char pid[16];
	int err;

	if (access("/sys/fs/cgroup/cgroup.procs", F_OK) &&
	    mount("cgroup2", "/sys/fs/cgroup", "cgroup2", 0, NULL) < 0)
		return fail("mount cgroup2");
	mkdir(CGROUP, 0755);
	snprintf(pid, sizeof(pid), "%d", getpid());
	if ((err = net_sysctl(CGROUP "/cgroup.procs", pid))) {
		errno = -err;
		return fail("join cgroup");
	}
	cg_fd = open(CGROUP, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg_fd < 0)
		return fail(CGROUP);
	skel = hdr_opt_bench__open_and_load();
	if (!skel)
		return fail("loading the sock_ops program");
	return 0;
}

static int attach(bool on, unsigned int mode)
{
	int fd = bpf_program__fd(skel->progs.hdr_opt_bench);

	skel->bss->mode = mode;
	skel->bss->reserved = skel->bss->written = skel->bss->parsed = 0;
	skel->bss->missed = skel->bss->failed = 0;
	if (on)
		return bpf_prog_attach(fd, cg_fd, BPF_CGROUP_SOCK_OPS, 0);
	bpf_prog_detach2(fd, cg_fd, BPF_CGROUP_SOCK_OPS);
	return 0;
}

static socklen_t mk_sin(struct sockaddr_in *s, const unsigned char *a, uint16_t port)
{
	memset(s, 0, sizeof(*s));
	s->sin_family = AF_INET;
	s->sin_port = htons(port);
	memcpy(&s->sin_addr, a, 4);
	return sizeof(*s);
}

/* The server's listening socket, in namespace B. */
static int server_socket(void)
{
	struct sockaddr_in s;
	int fd, one = 1;

	if (setns(ns_b, CLONE_NEWNET) < 0)
		return fail("setns");
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&s, mk_sin(&s, addr_b, PORT)) < 0 ||
	    listen(fd, 128) < 0) {
		fail("server socket");
		fd = -1;
	}
	if (setns(ns_a, CLONE_NEWNET) < 0)
		return fail("setns");
	return fd;
}

static int client_socket(bool bind_port)
{
	struct sockaddr_in s;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return fail("socket");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (bind_port) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&s, mk_sin(&s, addr_a, crr_port++)) < 0) {
			close(fd);
			return fail("bind");
		}
	}
	if (connect(fd, (struct sockaddr *)&s, mk_sin(&s, addr_b, PORT)) < 0) {
		close(fd);
		return fail("connect");
	}
	return fd;
}

/* The server process: echo one byte per message; crr: one message per connection. */
static void server(int lfd, bool crr)
{
	int one = 1;
	char c;

	for (;;) {
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0)
			_exit(1);
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		while (read(fd, &c, 1) == 1) {
			if (write(fd, &c, 1) != 1)
				_exit(1);
			if (crr)
				break;
		}
		close(fd);
		if (!crr)
			_exit(0);
	}
}

static int rr(int fd, int n)
{
	char c = 'q';

	for (int i = 0; i < n; i++)
		if (write(fd, &c, 1) != 1 || read(fd, &c, 1) != 1)
			return fail("rr");
	return 0;
}

static int crr(int n)
{
	char c = 'q';

	for (int i = 0; i < n; i++) {
		int fd = client_socket(true);

		if (fd < 0)
			return -1;
		if (write(fd, &c, 1) != 1 || read(fd, &c, 1) != 1) {
			close(fd);
			return fail("crr");
		}
		close(fd);
	}
	return 0;
}

static const struct bcase {
	const char *name;
	bool prog, crr;
	unsigned int mode;
} cases[] = {
	{ "rr-no-prog", false, false, 0 },
	{ "rr-prog-idle", true, false, 0 },
	{ "rr-hdr-opt", true, false, 1 },
	{ "crr-no-prog", false, true, 0 },
	{ "crr-hdr-opt", true, true, 1 },
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static const char *case_name(int i)
{
	return cases[i].name;
}

static int run_case(int i)
{
	const struct bcase *bc = &cases[i];
	unsigned long long t[REPS], t0;
	int lfd, cfd = -1, ops = bc->crr ? CRR_OPS : RR_OPS, err = 0, st;
	pid_t pid;

	if (attach(bc->prog, bc->mode))
		return fail("attach");
	lfd = server_socket();
	if (lfd < 0)
		return -1;
	pid = fork();
	if (pid == 0)
		server(lfd, bc->crr);
	close(lfd);
	if (!bc->crr) {
		cfd = client_socket(false);
		if (cfd < 0)
			err = -1;
	}
	/* a warm-up, then the timed repetitions */
	for (int r = -1; r < REPS && !err; r++) {
		t0 = bench_now_ns();
		err = bc->crr ? crr(ops) : rr(cfd, ops);
		if (r >= 0)
			t[r] = bench_now_ns() - t0;
	}
	if (cfd >= 0)
		close(cfd);
	if (bc->crr)
		kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	if (bc->mode) {
		/* every packet carried the option, every received one had it */
		printf("# %s: reserved %llu written %llu parsed %llu missed %llu failed %llu\n",
		       bc->name, skel->bss->reserved, skel->bss->written, skel->bss->parsed,
		       skel->bss->missed, skel->bss->failed);
		if (skel->bss->missed || skel->bss->failed ||
		    skel->bss->parsed < 2ull * ops * (REPS + 1) ||
		    skel->bss->written < skel->bss->parsed)
			err = -1;
	}
	attach(false, 0);
	if (err)
		return -1;
	bench_report(bc->name, t, REPS, ops);
	printf("#   %s: %.0f transactions/s (guest time)\n", bc->name, 1e9 * ops / t[REPS / 2]);
	return 0;
}

int main(int argc, char **argv)
{
	const char *glob = bench_glob(argc, argv);
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	if (setup_net() || setup_bpf()) {
		printf("1..%d\n", (int)NCASES);
		for (i = 0; i < (int)NCASES; i++)
			printf("not ok %d %s # set-up failed\n", i + 1, cases[i].name);
		return 1;
	}
	return bench_run_cases(glob, NCASES, case_name, run_case);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * CAN_ISOTP cost per message over vcan (patches/can-isotp): a sender and a
 * receiver socket with swapped ids on one vcan, in one process; a repetition
 * writes a PDU and reads it back whole, MSGS times.  STmin 0, block size 0 and
 * CAN_ISOTP_FRAME_TXTIME_ZERO: the frames' local echo alone paces the
 * consecutive frames, so the time is what the protocol costs, not timers.
 *
 * Output is KTAP, one result per case, each preceded by the line the report
 * parses:  # BENCH <case> <median ns per message> ns min=<ns> max=<ns> reps=<n>
 *
 * Usage: isotp_bench [CASE-GLOB]   (the glob also comes from $KTEST_CASE)
 */
#define _GNU_SOURCE
#include "../bench_util.h"

#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/can.h>
#include <linux/can/isotp.h>

#define REPS	9

struct bench_case {
	const char *name;
	const char *dev;
	int len;
	int fd;		/* CAN FD frames of 64 bytes */
	int msgs;
};

static const struct bench_case cases[] = {
	{ "classic-7-bytes", "vcan0", 7, 0, 400 },
	{ "classic-100-bytes", "vcan0", 100, 0, 200 },
	{ "classic-4095-bytes", "vcan0", 4095, 0, 20 },
	{ "fd64-4095-bytes", "vcan1", 4095, 1, 80 },
};

static int isotp_open(const struct bench_case *c, canid_t tx, canid_t rx)
{
	struct can_isotp_options opt = {
		.frame_txtime = CAN_ISOTP_FRAME_TXTIME_ZERO,
		.txpad_content = CAN_ISOTP_DEFAULT_PAD_CONTENT,
		.rxpad_content = CAN_ISOTP_DEFAULT_PAD_CONTENT,
	};
	struct can_isotp_ll_options ll = { .mtu = CANFD_MTU, .tx_dl = 64 };
	struct sockaddr_can addr = { .can_family = AF_CAN };
	int s;

	s = socket(PF_CAN, SOCK_DGRAM, CAN_ISOTP);
	if (s < 0)
		return -1;
	addr.can_ifindex = if_nametoindex(c->dev);
	addr.can_addr.tp.tx_id = tx;
	addr.can_addr.tp.rx_id = rx;
	if (setsockopt(s, SOL_CAN_ISOTP, CAN_ISOTP_OPTS, &opt, sizeof(opt)) ||
	    (c->fd && setsockopt(s, SOL_CAN_ISOTP, CAN_ISOTP_LL_OPTS, &ll, sizeof(ll))) ||
	    bind(s, (struct sockaddr *)&addr, sizeof(addr))) {
		close(s);
		return -1;
	}
	return s;
}

static int run_case(const struct bench_case *c)
{
	unsigned long long t[REPS], start;
	unsigned char out[4096], in[4200];
	int tx, rx, r, i, ret = -1;
	ssize_t n;

	for (i = 0; i < c->len; i++)
		out[i] = i * 7 + 3;
	tx = isotp_open(c, 0x123, 0x321);
	rx = isotp_open(c, 0x321, 0x123);
	if (tx < 0 || rx < 0) {
		printf("# %s: socket/bind: %s\n", c->name, strerror(errno));
		goto out;
	}
	for (r = -1; r < REPS; r++) {
		start = bench_now_ns();
		for (i = 0; i < c->msgs; i++) {
			if (write(tx, out, c->len) != c->len) {
				printf("# %s: write: %s\n", c->name, strerror(errno));
				goto out;
			}
			n = read(rx, in, sizeof(in));
			if (n != c->len || memcmp(in, out, c->len)) {
				printf("# %s: read %zd bytes (%s), want the %d sent\n",
				       c->name, n, n < 0 ? strerror(errno) : "", c->len);
				goto out;
			}
		}
		if (r >= 0)
			t[r] = bench_now_ns() - start;
	}
	bench_report(c->name, t, REPS, c->msgs);
	printf("# %s: %.0f messages/s, %.0f payload bytes/s\n", c->name,
	       c->msgs * 1e9 / t[REPS / 2], (double)c->msgs * c->len * 1e9 / t[REPS / 2]);
	ret = 0;
out:
	if (tx >= 0)
		close(tx);
	if (rx >= 0)
		close(rx);
	return ret;
}

static const char *case_name(int i)
{
	return cases[i].name;
}

static int case_run(int i)
{
	return run_case(&cases[i]);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("KTAP version 1\n");
	if (system("ip link add dev vcan0 type vcan && ip link set vcan0 up && "
		   "ip link add dev vcan1 type vcan && ip link set vcan1 mtu 72 && "
		   "ip link set vcan1 up")) {
		printf("Bail out! cannot create vcan0 and vcan1\n");
		return 1;
	}
	printf("# one PDU written and read back whole per message, median of %d repetitions\n",
	       REPS);
	return bench_run_cases(bench_glob(argc, argv), sizeof(cases) / sizeof(cases[0]),
			       case_name, case_run);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * SafeSetID policies under seeded random input, compared with stock by
 * scripts/matrix.py: each case flushes both policy files, writes random
 * policy texts (well-formed lines over a small pool of IDs, mixed with bad
 * numbers, missing separators, duplicates, NULs and bad offsets), reads them
 * back, then forks tasks with random UIDs, GIDs, supplementary groups and
 * capabilities that try random set*id(), setgroups() and user namespace map
 * writes.  One "# obs" line per step: return values, errnos, the text read
 * back, and how each task ended (exit code, errno, or the signal).
 *
 * Environment: KTEST_SEED (random if unset, always printed), KTEST_FUZZ_CASES,
 * KTEST_FUZZ_SECONDS (time bound).
 */
#include "ssid_util.h"
#include <stdint.h>
#include <time.h>
#include "../fuzz_rng.h"
#include "kselftest.h"

static const unsigned int pool[] = { 0, 2000, 2001, 2002, 2003, 2004, 3000 };
#define POOL_N (sizeof(pool) / sizeof(pool[0]))

static unsigned int pool_id(void)
{
	return pool[pick(POOL_N)];
}

/* A number token: mostly an ID of the pool, sometimes in another spelling. */
static void put_number(char *out, size_t size)
{
	static const char *const odd[] = {
		"", "x", "-1", "+2001", "0x7d1", "03721", "4294967295", "4294967296",
		"99999999999", " 2001", "2001 ", "2001\t", "00", "0x", "2002\n",
	};

	if (pick(8))
		snprintf(out, size, "%u", pool_id());
	else
		snprintf(out, size, "%s", odd[pick(sizeof(odd) / sizeof(odd[0]))]);
}

/* A random policy text of @*len bytes (it may hold a NUL). */
static void policy_text(char *buf, size_t size, size_t *len)
{
	int lines = pick(6), i;
	char a[32], b[32];
	size_t n = 0;

	for (i = 0; i < lines && n + 80 < size; i++) {
		if (i && !pick(10)) {	/* repeat the previous line */
			const char *prev = buf + n - 1;

			while (prev > buf && prev[-1] != '\n')
				prev--;
			memmove(buf + n, prev, buf + n - prev);
			n += buf + n - prev;
			continue;
		}
		put_number(a, sizeof(a));
		put_number(b, sizeof(b));
		switch (pick(12)) {
		case 0:		/* no colon */
			n += snprintf(buf + n, size - n, "%s%s", a, b);
			break;
		case 1:		/* two colons */
			n += snprintf(buf + n, size - n, "%s::%s", a, b);
			break;
		default:
			n += snprintf(buf + n, size - n, "%s:%s", a, b);
		}
		if (pick(12) || i + 1 < lines)	/* the last line may lack its newline */
			buf[n++] = '\n';
		if (!pick(30))
			buf[n++] = '\0';
	}
	*len = n;
}

static void escape(const char *in, size_t len, char *out, size_t size)
{
	size_t i, o = 0;

	for (i = 0; i < len && o + 5 < size; i++) {
		unsigned char c = in[i];

		if (c == '\n')
			o += snprintf(out + o, size - o, "\\n");
		else if (c < 32 || c >= 127 || c == '\\')
			o += snprintf(out + o, size - o, "\\%02x", c);
		else
			out[o++] = c;
	}
	out[o] = '\0';
}

static void fuzz_write(unsigned long c, int step)
{
	char text[512], esc[1100], back[600];
	int kind = pick(2), fd;
	size_t len;
	long ret;

	policy_text(text, sizeof(text), &len);
	escape(text, len, esc, sizeof(esc));
	if (!pick(20)) {	/* a write at a non-zero offset */
		fd = open(ssid_file(kind), O_WRONLY);
		ret = pwrite(fd, text, len, 1 + pick(4));
		ret = ret < 0 ? -errno : ret;
		close(fd);
	} else {
		ret = ssid_write_len(kind, text, len);
	}
	printf("# obs c%lu.%d write %s \"%s\" -> %ld", c, step, kind ? "gid" : "uid", esc, ret);
	ret = ssid_read(kind, back, sizeof(back));
	escape(back, ret > 0 ? ret : 0, esc, sizeof(esc));
	printf(" read %ld \"%s\"\n", ret, esc);
}

static unsigned int maybe_unchanged(void)
{
	return pick(5) ? pool_id() : -1U;
}

static void fuzz_try(unsigned long c, int step)
{
	struct ssid_who who = { 0 };
	struct ssid_act act = { 0 };
	char groups[64] = "", args[80];
	bool gid_side;
	int i, ret;

	who.gid = pool_id();
	who.uid = pick(5) ? who.gid : pool_id();
	who.keep_caps = pick(8);
	who.ngroups = pick(3);
	for (i = 0; i < who.ngroups; i++)
		who.groups[i] = pool_id();
	act.op = pick(OP_NOPS);
	act.a = pool_id();
	act.b = maybe_unchanged();
	act.c = maybe_unchanged();
	if (act.op == OP_SETUID || act.op == OP_SETGID || act.op == OP_SETFSUID ||
	    act.op == OP_SETFSGID || act.op == OP_UID_MAP || act.op == OP_GID_MAP)
		act.b = act.c = 0;
	if (act.op == OP_SETREUID || act.op == OP_SETREGID)
		act.c = 0;
	if (act.op == OP_SETGROUPS) {
		act.n = pick(4);
		for (i = 0; i < act.n; i++)
			act.list[i] = pool_id();
		act.a = act.b = act.c = 0;
	}
	ret = ssid_try(&who, &act);
	for (i = 0; i < who.ngroups; i++)
		snprintf(groups + strlen(groups), sizeof(groups) - strlen(groups), "%s%u",
			 i ? "," : "", who.groups[i]);
	if (act.op == OP_SETGROUPS) {
		args[0] = '\0';
		for (i = 0; i < act.n; i++)
			snprintf(args + strlen(args), sizeof(args) - strlen(args), "%s%u",
				 i ? "," : "", act.list[i]);
	} else {
		snprintf(args, sizeof(args), "%d,%d,%d", (int)act.a, (int)act.b, (int)act.c);
	}
	/*
	 * Stock 6.1 judges a GID transition by the rules of the GID whose number
	 * is the real UID (fixes/0003): such steps are marked "ne".
	 */
	gid_side = act.op >= OP_SETGID && act.op <= OP_SETGROUPS;
	printf("# obs c%lu.%d try uid=%u gid=%u groups=[%s] caps=%d %s(%s) -> %s%d%s\n",
	       c, step, who.uid, who.gid, groups, who.keep_caps, ssid_op_name[act.op], args,
	       ret & 0x100 ? "signal " : "", ret & 0x100 ? ret & 0xff : ret,
	       gid_side && who.uid != who.gid ? " ne" : "");
}

int main(void)
{
	const struct fuzz_env env = fuzz_env();
	unsigned long cases = env.cases, limit = env.limit, c, done = 0;
	uint64_t seed = env.seed;
	time_t start = time(NULL);
	struct stat st;
	int step;

	ksft_print_header();
	ksft_set_plan(2);
	ksft_print_msg("seed %llu, %lu cases (KTEST_SEED=%llu replays them)\n",
		       (unsigned long long)seed, cases, (unsigned long long)seed);
	ssid_mount_securityfs();
	ksft_test_result(stat(SSID_GID_FILE, &st) == 0 && stat(SSID_UID_FILE, &st) == 0,
			 "both policy files exist\n");
	for (c = 0; c < cases; c++) {
		if ((unsigned long)(time(NULL) - start) > limit)
			break;
		/* each case draws from its own stream and starts from empty policies */
		fuzz_seed_case(seed, c);
		ssid_flush();
		for (step = 0; step < 2 + (int)pick(3); step++)
			fuzz_write(c, step);
		for (; step < 8; step++)
			fuzz_try(c, step);
		fflush(stdout);
		done++;
	}
	ssid_flush();
	ksft_test_result(done > 0, "%lu of %lu cases in %ld s\n", done, cases,
			 (long)(time(NULL) - start));
	ksft_finished();
}

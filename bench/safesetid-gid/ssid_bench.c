// SPDX-License-Identifier: GPL-2.0
/*
 * Cost of SafeSetID's hooks and policy files (patches/safesetid-gid): ID
 * changes of a task that a policy constrains (the rule lookups on every
 * set*id() call), of a task it does not constrain (one lookup that finds no
 * rule), with no policy at all, setgroups() group by group, and writing and
 * reading a policy file.  A policy of 64 rules for other IDs fills the hash
 * table around the rules a case uses.
 *
 * A case is OPS calls (or pairs of calls, for a change and its way back) in a
 * child that became the case's task; its time is the median over REPS
 * repetitions after one warm-up, per call.
 *
 * Output is KTAP, one result per case, each preceded by the line the report
 * parses:  # BENCH <case> <median ns per call> ns min=<ns> max=<ns> reps=<n>
 *
 * Usage: ssid_bench [CASE-GLOB]   (the glob also comes from $KTEST_CASE)
 */
#include "../../tests/safesetid/ssid_util.h"
#include <fnmatch.h>
#include <time.h>

#define OPS	2000
#define REPS	11

enum bop { B_SETRESGID, B_SETRESUID, B_SETGROUPS, B_WRITE, B_READ };

struct bench_case {
	const char *name;
	enum bop op;
	int kind;		/* the policy file the case installs its rules in */
	bool rules;		/* install the case's rules (and the 64 others) */
	struct ssid_who who;
	int ops;
};

static const struct bench_case cases[] = {
	{ "setresgid-constrained", B_SETRESGID, SSID_GID, true,
	  { .uid = 2001, .gid = 2001, .keep_caps = true }, OPS },
	{ "setresgid-unconstrained", B_SETRESGID, SSID_GID, true,
	  { .uid = 4000, .gid = 4000, .keep_caps = true }, OPS },
	{ "setresgid-no-policy", B_SETRESGID, SSID_GID, false,
	  { .uid = 2001, .gid = 2001, .keep_caps = true }, OPS },
	{ "setgroups-4-constrained", B_SETGROUPS, SSID_GID, true,
	  { .uid = 2001, .gid = 2001, .keep_caps = true }, OPS },
	{ "setresuid-constrained", B_SETRESUID, SSID_UID, true,
	  { .uid = 2001, .gid = 2001, .keep_caps = true }, OPS },
	{ "setresuid-unconstrained", B_SETRESUID, SSID_UID, true,
	  { .uid = 4000, .gid = 4000, .keep_caps = true }, OPS },
	{ "write-gid-policy-66-rules", B_WRITE, SSID_GID, false, { 0 }, 200 },
	{ "read-gid-policy-66-rules", B_READ, SSID_GID, true, { 0 }, OPS },
};

static char policy[4096];

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* One call (or a change and its way back) of the case: 0, or an errno. */
static int one(const struct bench_case *c, unsigned int id)
{
	static const gid_t groups[2][4] = { { 2001, 2002, 2001, 2002 }, { 2002, 2001, 2002, 2001 } };
	char buf[4096];
	int fd;

	switch (c->op) {
	case B_SETRESGID:
		if (setresgid(id, 2002, id) || setresgid(id, id, id))
			return errno;
		return 0;
	case B_SETRESUID:
		if (setresuid(id, 2002, id) || setresuid(id, id, id))
			return errno;
		return 0;
	case B_SETGROUPS:
		return setgroups(4, groups[id & 1]) ? errno : 0;
	case B_WRITE:
		return ssid_write(c->kind, policy) == (long)strlen(policy) ? 0 : EIO;
	case B_READ:
		fd = open(ssid_file(c->kind), O_RDONLY);
		if (fd < 0)
			return errno;
		if (read(fd, buf, sizeof(buf)) != (ssize_t)strlen(policy))
			errno = EIO;
		else
			errno = 0;
		close(fd);
		return errno;
	}
	return EINVAL;
}

static int cmp(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

static void run_case(const struct bench_case *c)
{
	unsigned long long t[REPS], start;
	int r, i, err;

	if (c->op != B_WRITE && c->op != B_READ && ssid_become(&c->who))
		_exit(10);
	for (r = -1; r < REPS; r++) {
		start = now_ns();
		for (i = 0; i < c->ops; i++) {
			err = one(c, c->op == B_SETGROUPS ? (unsigned int)i : c->who.gid);
			if (err) {
				printf("# %s: errno %d\n", c->name, err);
				_exit(11);
			}
		}
		if (r >= 0)
			t[r] = now_ns() - start;
	}
	qsort(t, REPS, sizeof(t[0]), cmp);
	printf("# BENCH %s %llu ns min=%llu max=%llu reps=%d\n", c->name, t[REPS / 2] / c->ops,
	       t[0] / c->ops, t[REPS - 1] / c->ops, REPS);
	_exit(0);
}

int main(int argc, char **argv)
{
	const char *glob = argc > 1 ? argv[1] : getenv("KTEST_CASE");
	int n = 0, i, failed = 0, status;
	size_t len;
	pid_t pid;

	if (glob && !*glob)
		glob = NULL;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("KTAP version 1\n");
	ssid_mount_securityfs();
	/* the rules the cases use, and 64 others (1000:1001 ... 1063:1064) */
	len = snprintf(policy, sizeof(policy), "2001:2002\n2002:2002\n");
	for (i = 0; i < 64; i++)
		len += snprintf(policy + len, sizeof(policy) - len, "%d:%d\n", 1000 + i, 1001 + i);
	for (i = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); i++)
		n += !glob || !fnmatch(glob, cases[i].name, 0);
	printf("# SafeSetID hooks and policy files, median of %d repetitions\n", REPS);
	printf("1..%d\n", n);
	n = 0;
	for (i = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); i++) {
		const struct bench_case *c = &cases[i];

		if (glob && fnmatch(glob, c->name, 0))
			continue;
		ssid_flush();
		if (c->rules && ssid_write(c->kind, policy) != (long)len) {
			printf("Bail out! writing the policy: %s\n", strerror(errno));
			return 1;
		}
		pid = fork();
		if (pid == 0)
			run_case(c);
		if (pid < 0 || waitpid(pid, &status, 0) != pid || status) {
			printf("not ok %d %s\n", ++n, c->name);
			failed++;
		} else {
			printf("ok %d %s\n", ++n, c->name);
		}
	}
	ssid_flush();
	return failed ? 1 : 0;
}

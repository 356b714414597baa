// SPDX-License-Identifier: GPL-2.0
/*
 * Path-walk cost around the nosymfollow check (patches/nosymfollow): the flag
 * adds one test of the link's mount to every symlink a walk follows, so the
 * cases are walks that follow links on ordinary mounts (the common path the
 * check must not slow down), walks with no link at all, and walks refused on a
 * nosymfollow mount.
 *
 * In a private mount namespace, tmpfs mounts at /tmp/nsfb/plain and
 * /tmp/nsfb/nsf (the latter nosymfollow), each with a/b/c/d/e/f/g/file, a link
 * "lf" to it, a directory link "ld" to a/b/c, and a chain of 8 links.  A case
 * is OPS calls of one system call on one path; its time is the median over
 * REPS repetitions (after one warm-up), per call.
 *
 * Output is KTAP, one result per case, each preceded by the line the report
 * parses:  # BENCH <case> <median ns per call> ns min=<ns> max=<ns> reps=<n>
 *
 * Usage: nsf_bench [CASE-GLOB]   (the glob also comes from $KTEST_CASE)
 */
#define _GNU_SOURCE
#include "../bench_util.h"

#include "../../tests/nosymfollow/nsf_util.h"

#define BASE	"/tmp/nsfb"
#define OPS	2000
#define REPS	11

enum op { OP_STAT, OP_LSTAT, OP_OPEN, OP_READLINK };

struct bench_case {
	const char *name;
	enum op op;
	const char *path;
	int err;	/* the errno every call must give, 0 for success */
};

static const struct bench_case cases[] = {
	{ "stat-8-components", OP_STAT, BASE "/plain/a/b/c/d/e/f/g/file", 0 },
	{ "stat-trailing-link", OP_STAT, BASE "/plain/lf", 0 },
	{ "stat-dir-link", OP_STAT, BASE "/plain/ld/d/e/f/g/file", 0 },
	{ "stat-8-link-chain", OP_STAT, BASE "/plain/c8", 0 },
	{ "open-close-trailing-link", OP_OPEN, BASE "/plain/lf", 0 },
	{ "stat-link-into-nosymfollow", OP_STAT, BASE "/plain/lnsf", 0 },
	{ "lstat-link-on-nosymfollow", OP_LSTAT, BASE "/nsf/lf", 0 },
	{ "readlink-on-nosymfollow", OP_READLINK, BASE "/nsf/lf", 0 },
	{ "stat-8-components-on-nosymfollow", OP_STAT, BASE "/nsf/a/b/c/d/e/f/g/file", 0 },
	{ "stat-refused-on-nosymfollow", OP_STAT, BASE "/nsf/lf", ELOOP },
	{ "stat-refused-dir-link-on-nosymfollow", OP_STAT, BASE "/nsf/ld/d/e/f/g/file", ELOOP },
};

static int one(const struct bench_case *c)
{
	struct stat st;
	char buf[64];
	int fd;

	switch (c->op) {
	case OP_STAT:
		return stat(c->path, &st) ? errno : 0;
	case OP_LSTAT:
		return lstat(c->path, &st) ? errno : 0;
	case OP_READLINK:
		return readlink(c->path, buf, sizeof(buf)) < 0 ? errno : 0;
	case OP_OPEN:
		fd = open(c->path, O_RDONLY);
		if (fd < 0)
			return errno;
		close(fd);
		return 0;
	}
	return EINVAL;
}

static int run_case(const struct bench_case *c)
{
	unsigned long long t[REPS], start;
	int r, i, err;

	for (r = -1; r < REPS; r++) {
		start = bench_now_ns();
		for (i = 0; i < OPS; i++) {
			err = one(c);
			if (err != c->err) {
				printf("# %s: errno %d, expected %d\n", c->name, err, c->err);
				return -1;
			}
		}
		if (r >= 0)
			t[r] = bench_now_ns() - start;
	}
	bench_report(c->name, t, REPS, OPS);
	return 0;
}

static int make_tree(const char *dir, unsigned long flags)
{
	char p[256], q[256];
	int i, fd;

	if (mkdir(dir, 0755) || mount("nsfb", dir, "tmpfs", flags, NULL))
		return -1;
	snprintf(p, sizeof(p), "%s/a/b/c/d/e/f/g", dir);
	for (i = strlen(dir) + 1; p[i]; i++) {
		if (p[i] == '/') {
			p[i] = '\0';
			mkdir(p, 0755);
			p[i] = '/';
		}
	}
	if (mkdir(p, 0755))
		return -1;
	strcat(p, "/file");
	fd = open(p, O_CREAT | O_WRONLY, 0644);
	if (fd < 0)
		return -1;
	close(fd);
	snprintf(q, sizeof(q), "%s/lf", dir);
	if (symlink("a/b/c/d/e/f/g/file", q))
		return -1;
	snprintf(q, sizeof(q), "%s/ld", dir);
	if (symlink("a/b/c", q))
		return -1;
	snprintf(q, sizeof(q), "%s/c1", dir);
	if (symlink("lf", q))
		return -1;
	for (i = 2; i <= 8; i++) {
		snprintf(p, sizeof(p), "c%d", i - 1);
		snprintf(q, sizeof(q), "%s/c%d", dir, i);
		if (symlink(p, q))
			return -1;
	}
	return 0;
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
	if (enter_mntns() || mkdir(BASE, 0755) || mount("nsfb", BASE, "tmpfs", 0, NULL) ||
	    make_tree(BASE "/plain", 0) || make_tree(BASE "/nsf", MS_NOSYMFOLLOW) ||
	    symlink("../nsf/a/b/c/d/e/f/g/file", BASE "/plain/lnsf")) {
		printf("Bail out! setting up the mounts: %s\n", strerror(errno));
		return 1;
	}
	printf("# path walks, %d calls per repetition, median of %d repetitions\n", OPS, REPS);
	return bench_run_cases(bench_glob(argc, argv), sizeof(cases) / sizeof(cases[0]),
			       case_name, case_run);
}

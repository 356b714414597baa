// SPDX-License-Identifier: GPL-2.0
/*
 * Runs one test of the kernel tree's tools/testing/selftests/bpf/prog_tests/,
 * compiled unmodified, without test_progs: this file provides the test_progs
 * functions such a test calls (write_sysctl() as test_progs has it) and prints
 * KTAP, one result per subtest.
 *
 * Built with -DSHIM_TEST=<test function> -DSHIM_NAME=<"test name">
 * -DSHIM_SUBTESTS=<number of subtests>: the plan is that number, so a test
 * that stops early (a failed CHECK that returns, a crash) leaves the plan
 * short and fails the group.  A failure outside any subtest is a result of
 * its own.  Nothing is ever skipped silently: test__skip() makes the result
 * a "# SKIP", which the harness counts.
 */
#include "test_progs.h"
#include "cgroup_helpers.h"

struct test_env env;

static const char *subtest;
static int nr, sub_failed, sub_skipped, outside_failed;
static int total_failed;
/* a failed CHECK's message need not end its line: end it before ours */
static bool need_nl;

static void end_line(void)
{
	if (need_nl)
		printf("\n");
	need_nl = false;
}

static void report(const char *name, int failed, int skipped)
{
	end_line();
	if (failed)
		printf("not ok %d %s/%s\n", ++nr, SHIM_NAME, name);
	else if (skipped)
		printf("ok %d %s/%s # SKIP\n", ++nr, SHIM_NAME, name);
	else
		printf("ok %d %s/%s\n", ++nr, SHIM_NAME, name);
	fflush(stdout);
}

void test__end_subtest(void)
{
	if (!subtest)
		return;
	report(subtest, sub_failed, sub_skipped);
	subtest = NULL;
}

bool test__start_subtest(const char *name)
{
	test__end_subtest();
	end_line();
	subtest = name;
	sub_failed = 0;
	sub_skipped = 0;
	printf("# subtest %s\n", name);
	fflush(stdout);
	return true;
}

void test__fail(void)
{
	need_nl = true;
	total_failed++;
	if (subtest)
		sub_failed++;
	else
		outside_failed++;
}

void test__skip(void)
{
	if (subtest)
		sub_skipped = 1;
}

void test__force_log(void)
{
}

int test__join_cgroup(const char *path)
{
	int fd;

	fd = create_and_get_cgroup(path);
	if (fd < 0) {
		fprintf(stdout, "test__join_cgroup: create %s failed\n", path);
		test__fail();
		return fd;
	}
	if (join_cgroup(path)) {
		fprintf(stdout, "test__join_cgroup: join %s failed\n", path);
		test__fail();
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * test_progs' write_sysctl(): a sysctl that cannot be opened or written is a
 * failed check of the running (sub)test, reported through the ASSERT macros
 * exactly as test_progs reports it, and the caller sees -1 (the prog_tests
 * then return early, with the failure already counted).
 */
int write_sysctl(const char *sysctl, const char *value)
{
	int fd, err, len;

	fd = open(sysctl, O_WRONLY);
	if (!ASSERT_NEQ(fd, -1, "open sysctl"))
		return -1;

	len = strlen(value);
	err = write(fd, value, len);
	close(fd);
	if (!ASSERT_EQ(err, len, "write sysctl"))
		return -1;

	return 0;
}

void SHIM_TEST(void);

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	env.stdout = stdout;
	env.stderr = stderr;
	env.nr_cpus = libbpf_num_possible_cpus();
	printf("KTAP version 1\n1..%d\n", SHIM_SUBTESTS);
	if (setup_cgroup_environment()) {
		printf("Bail out! cgroup environment\n");
		return 1;
	}
	SHIM_TEST();
	test__end_subtest();
	if (outside_failed)
		report("(outside subtests)", 1, 0);
	cleanup_cgroup_environment();
	return total_failed ? 1 : 0;
}

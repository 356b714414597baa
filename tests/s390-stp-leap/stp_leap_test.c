// SPDX-License-Identifier: GPL-2.0
/*
 * STP leap seconds handled at run time, seen from user space on an s390x
 * guest without STP (QEMU).
 *
 * Every kernel: /sys/devices/system/stp/leap_seconds_scheduled exists, is
 * world-readable and answers ENODATA while there is no STP information.
 *
 * Kernels built with CONFIG_S390_STP_LEAP_INJECT (ours): the debugfs
 * injection point feeds a synthetic STP status and leap-second offset
 * information block into the STP work, as a machine check would on a machine
 * with STP; the tests watch the adjtimex leap flags, the sysfs attribute and,
 * at the end, the timekeeping core inserting and deleting the second at
 * midnight.  Where the kernel's config does not have the option (stock 6.1,
 * baseline) those tests are skipped; where it has it, the files must exist.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "stp_util.h"

#define STP_DIR		"/sys/devices/system/stp"
#define SCHEDULED	STP_DIR "/leap_seconds_scheduled"
#define INJECT		"/sys/kernel/debug/s390/stp/inject"
#define TOD		"/sys/kernel/debug/s390/stp/tod"
#define UNPRIV_ID	1000			/* user "ktest" of the guest */

#define TOD_UNIX_EPOCH	0x7d91048bca000000ULL
#define TOD_SEC		4096000000ULL		/* TOD units per second */

/* Write @len bytes to the injection point: 0, or -errno. */
static int inject_bytes(const char *s, size_t len)
{
	int fd = open(INJECT, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	close(fd);
	if (n < 0)
		return -errno;
	return n == (ssize_t)len ? 0 : -EIO;
}

static int inject(const char *s)
{
	return inject_bytes(s, strlen(s));
}

static int injectf(const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return inject(buf);
}

static unsigned long long tod_now(void)
{
	char buf[64];

	if (read_file(TOD, buf, sizeof(buf)) <= 0)
		return 0;
	return strtoull(buf, NULL, 16);
}

static int timex_status(void)
{
	struct timex tx = { .modes = 0 };

	if (adjtimex(&tx) < 0)
		return -errno;
	return tx.status;
}

static int timex_state(void)
{
	struct timex tx = { .modes = 0 };

	return adjtimex(&tx);
}

static int leap_flags(void)
{
	return timex_status() & (STA_INS | STA_DEL);
}

/* Change adjtimex status bits from user space, as an NTP daemon would. */
static int update_status(int clear, int set)
{
	struct timex tx = { .modes = 0 };

	if (adjtimex(&tx) < 0)
		return -errno;
	tx.modes = ADJ_STATUS;
	tx.status = (tx.status & ~clear) | set;
	return adjtimex(&tx) < 0 ? -errno : 0;
}

static int mark_synced(void)
{
	struct timex tx = { .modes = 0 };

	if (adjtimex(&tx) < 0)
		return -errno;
	tx.modes = ADJ_STATUS | ADJ_MAXERROR;
	tx.status &= ~STA_UNSYNC;
	tx.maxerror = 0;
	return adjtimex(&tx) < 0 ? -errno : 0;
}

static int set_leap_flags(int flags)
{
	return update_status(STA_INS | STA_DEL, flags);
}

/* What the sysfs attribute reads for a change at TOD value @tod. */
static void expect_line(char *buf, size_t size, unsigned long long tod,
			int change)
{
	snprintf(buf, size, "%llu,%d\n", (tod - TOD_UNIX_EPOCH) / TOD_SEC,
		 change);
}

/* Does /proc/config.gz ask for the injection point? */
static int config_has_inject(void)
{
	FILE *f = popen("zcat /proc/config.gz 2>/dev/null", "r");
	char line[256];
	int found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strcmp(line, "CONFIG_S390_STP_LEAP_INJECT=y\n"))
			found = 1;
	pclose(f);
	return found;
}

/*
 * Open @path with @flags and, when opened for reading, read it: 0 on
 * success, else the errno of the step that failed.
 */
static int open_read_errno(const char *path, int flags)
{
	char buf[64];
	int fd = open(path, flags), ret = 0;

	if (fd < 0)
		return errno;
	if (flags == O_RDONLY && read(fd, buf, sizeof(buf)) < 0)
		ret = errno;
	close(fd);
	return ret;
}

/* open_read_errno() in a child with the ids of an unprivileged user. */
static int unprivileged_errno(const char *path, int flags)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (setresgid(UNPRIV_ID, UNPRIV_ID, UNPRIV_ID) ||
		    setresuid(UNPRIV_ID, UNPRIV_ID, UNPRIV_ID))
			_exit(100);
		_exit(open_read_errno(path, flags));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST(scheduled_attribute_exists)
{
	struct stat st;

	ASSERT_EQ(0, stat(SCHEDULED, &st)) {
		TH_LOG("%s: %s", SCHEDULED, strerror(errno));
	}
	EXPECT_TRUE(S_ISREG(st.st_mode));
	EXPECT_EQ(0444, st.st_mode & 07777);
	/* Read-only: a write is refused, not ignored. */
	EXPECT_EQ(-1, open(SCHEDULED, O_WRONLY));
	EXPECT_EQ(EACCES, errno);
}

TEST(scheduled_enodata_without_stp)
{
	char buf[64];

	/* No injected state: what the machine says, and QEMU has no STP. */
	if (!access(INJECT, F_OK)) {
		ASSERT_EQ(0, inject("off"));
	}
	EXPECT_EQ(-ENODATA, read_file(SCHEDULED, buf, sizeof(buf)));
	/* Any user may read it, and gets the same answer. */
	EXPECT_EQ(ENODATA, unprivileged_errno(SCHEDULED, O_RDONLY));
}

FIXTURE(inject) {
	int available;
};

FIXTURE_SETUP(inject)
{
	self->available = !access(INJECT, F_OK);
	if (!self->available) {
		/* Only a kernel built without the option may lack it. */
		ASSERT_FALSE(config_has_inject()) {
			TH_LOG("CONFIG_S390_STP_LEAP_INJECT=y but no %s", INJECT);
		}
		return;
	}
	ASSERT_EQ(0, inject("off"));
	ASSERT_EQ(0, set_leap_flags(0));
	ASSERT_NE(0, tod_now());
}

FIXTURE_TEARDOWN(inject)
{
	if (self->available) {
		inject("off");
		set_leap_flags(0);
	}
}

#define NEED_INJECT() do {						\
	if (!self->available)						\
		SKIP(return, "%s: kernel without CONFIG_S390_STP_LEAP_INJECT", \
		     _metadata->name);					\
} while (0)

/*
 * Announce a change from offset @also by @change seconds, @secs ahead:
 * adjtimex must show @flag, and sysfs the change and the active offset.
 */
static void announce(struct __test_metadata *_metadata, int also, int change,
		     unsigned int secs, int flag)
{
	unsigned long long at = tod_now() + secs * TOD_SEC;
	char buf[64], want[64];

	ASSERT_EQ(0, injectf("1 1 1 %d %d %llx", also, also + change, at));
	EXPECT_EQ(flag, leap_flags());
	expect_line(want, sizeof(want), at, change);
	ASSERT_LT(0, read_file(SCHEDULED, buf, sizeof(buf)));
	EXPECT_STREQ(want, buf);
	snprintf(want, sizeof(want), "%d\n", also);
	ASSERT_LT(0, read_file(STP_DIR "/leap_seconds", buf, sizeof(buf)));
	EXPECT_STREQ(want, buf);
}

TEST_F(inject, insertion_within_2h_sets_sta_ins)
{
	NEED_INJECT();
	announce(_metadata, 27, 1, 3600, STA_INS);
}

TEST_F(inject, deletion_within_2h_sets_sta_del)
{
	NEED_INJECT();
	announce(_metadata, 28, -1, 7000, STA_DEL);
}

TEST_F(inject, change_beyond_2h_sets_nothing_yet)
{
	unsigned long long at = tod_now() + 7300 * TOD_SEC;
	char buf[64], want[64];

	NEED_INJECT();
	ASSERT_EQ(0, injectf("1 1 1 27 28 %llx", at));
	EXPECT_EQ(0, leap_flags());
	/* ... but it is announced. */
	expect_line(want, sizeof(want), at, 1);
	ASSERT_LT(0, read_file(SCHEDULED, buf, sizeof(buf)));
	EXPECT_STREQ(want, buf);
	/* The announcement moved closer: now it is set. */
	ASSERT_EQ(0, injectf("1 1 1 27 28 %llx", tod_now() + 60 * TOD_SEC));
	EXPECT_EQ(STA_INS, leap_flags());
}

TEST_F(inject, other_changes_schedule_nothing)
{
	static const int offsets[][2] = { { 27, 27 }, { 27, 29 }, { 27, 25 } };
	unsigned long long at = tod_now() + 600 * TOD_SEC;
	char buf[64], want[64];
	int i;

	NEED_INJECT();
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, injectf("1 1 1 %d %d %llx", offsets[i][0],
				     offsets[i][1], at));
		EXPECT_EQ(0, leap_flags());
		expect_line(want, sizeof(want), at,
			    offsets[i][1] - offsets[i][0]);
		ASSERT_LT(0, read_file(SCHEDULED, buf, sizeof(buf)));
		EXPECT_STREQ(want, buf);
	}
}

/*
 * Schedule a change with the line @set, then inject @then (both take the
 * change time): the flag set for the first must be gone after the second.
 */
static void set_then_clear(struct __test_metadata *_metadata, int flag,
			   const char *set, const char *then,
			   unsigned long long then_at)
{
	unsigned long long at = tod_now() + 600 * TOD_SEC;

	ASSERT_EQ(0, injectf(set, at));
	ASSERT_EQ(flag, leap_flags());
	ASSERT_EQ(0, injectf(then, then_at ?: at));
	EXPECT_EQ(0, leap_flags());
}

TEST_F(inject, past_change_clears)
{
	NEED_INJECT();
	set_then_clear(_metadata, STA_INS, "1 1 1 27 28 %llx",
		       "1 1 1 27 28 %llx", tod_now() - 10 * TOD_SEC);
}

TEST_F(inject, withdrawn_update_clears)
{
	char buf[64];

	NEED_INJECT();
	set_then_clear(_metadata, STA_DEL, "1 1 1 28 27 %llx",
		       "1 0 1 28 27 %llx", 0);
	/* No update pending: nothing to show, as on stock. */
	EXPECT_EQ(-ENODATA, read_file(SCHEDULED, buf, sizeof(buf)));
}

/* stock's rule: ENODATA without a pending update, present block or not. */
TEST_F(inject, scheduled_enodata_without_pending_update)
{
	unsigned long long at = tod_now() + 60 * TOD_SEC;
	char buf[64];

	NEED_INJECT();
	ASSERT_EQ(0, injectf("1 0 1 27 28 %llx", at));
	EXPECT_EQ(-ENODATA, read_file(SCHEDULED, buf, sizeof(buf)));
	ASSERT_EQ(0, injectf("1 0 0 27 28 %llx", at));
	EXPECT_EQ(-ENODATA, read_file(SCHEDULED, buf, sizeof(buf)));
	EXPECT_EQ(ENODATA, unprivileged_errno(SCHEDULED, O_RDONLY));
	/* The other STP attributes still have their data. */
	ASSERT_LT(0, read_file(STP_DIR "/leap_seconds", buf, sizeof(buf)));
	EXPECT_STREQ("27\n", buf);
}

TEST_F(inject, sync_loss_clears)
{
	NEED_INJECT();
	set_then_clear(_metadata, STA_INS, "1 1 1 27 28 %llx",
		       "0 1 1 27 28 %llx", 0);
}

TEST_F(inject, absent_block_reads_none)
{
	char buf[64];

	NEED_INJECT();
	ASSERT_EQ(0, injectf("1 1 0 27 28 %llx", tod_now() + 60 * TOD_SEC));
	EXPECT_EQ(0, leap_flags());
	ASSERT_LT(0, read_file(SCHEDULED, buf, sizeof(buf)));
	EXPECT_STREQ("0,0\n", buf);
}

TEST_F(inject, flags_set_by_others_are_kept)
{
	unsigned long long at = tod_now() + 600 * TOD_SEC;

	NEED_INJECT();
	ASSERT_EQ(0, set_leap_flags(STA_INS));
	ASSERT_EQ(0, injectf("1 0 1 27 28 %llx", at));
	EXPECT_EQ(STA_INS, leap_flags());
	ASSERT_EQ(0, injectf("0 1 1 27 28 %llx", at));
	EXPECT_EQ(STA_INS, leap_flags());
	ASSERT_EQ(0, inject("off"));
	EXPECT_EQ(STA_INS, leap_flags());
}

/* ntpd set STA_INS before STP announced the same insertion: it stays ntpd's. */
TEST_F(inject, preset_flag_is_not_taken_over)
{
	unsigned long long at = tod_now() + 600 * TOD_SEC;

	NEED_INJECT();
	ASSERT_EQ(0, set_leap_flags(STA_INS));
	ASSERT_EQ(0, injectf("1 1 1 27 28 %llx", at));
	ASSERT_EQ(STA_INS, leap_flags());
	/* Withdrawn: not ours to take back. */
	ASSERT_EQ(0, injectf("1 0 1 27 28 %llx", at));
	EXPECT_EQ(STA_INS, leap_flags());
	/* Announced again, then passed, then injection ended. */
	ASSERT_EQ(0, injectf("1 1 1 27 28 %llx", at));
	ASSERT_EQ(0, injectf("1 1 1 27 28 %llx", tod_now() - TOD_SEC));
	EXPECT_EQ(STA_INS, leap_flags());
	ASSERT_EQ(0, injectf("1 1 1 27 28 %llx", at));
	ASSERT_EQ(0, inject("off"));
	EXPECT_EQ(STA_INS, leap_flags());
}

/* User space switched the kernel's STA_INS to STA_DEL: STA_DEL is theirs. */
TEST_F(inject, switched_flag_is_left_alone)
{
	unsigned long long at = tod_now() + 600 * TOD_SEC;

	NEED_INJECT();
	ASSERT_EQ(0, injectf("1 1 1 27 28 %llx", at));
	ASSERT_EQ(STA_INS, leap_flags());
	ASSERT_EQ(0, set_leap_flags(STA_DEL));
	ASSERT_EQ(0, injectf("1 0 1 27 28 %llx", at));
	EXPECT_EQ(STA_DEL, leap_flags());
	ASSERT_EQ(0, injectf("0 1 1 27 28 %llx", at));
	EXPECT_EQ(STA_DEL, leap_flags());
	ASSERT_EQ(0, inject("off"));
	EXPECT_EQ(STA_DEL, leap_flags());
	/* Cleared by user space, announced again: the kernel's once more. */
	ASSERT_EQ(0, set_leap_flags(0));
	ASSERT_EQ(0, injectf("1 1 1 27 28 %llx", at));
	ASSERT_EQ(STA_INS, leap_flags());
	ASSERT_EQ(0, inject("off"));
	EXPECT_EQ(0, leap_flags());
}

TEST_F(inject, off_returns_to_the_machine)
{
	char buf[64];

	NEED_INJECT();
	ASSERT_EQ(0, injectf("1 1 1 27 28 %llx", tod_now() + 60 * TOD_SEC));
	ASSERT_EQ(STA_INS, leap_flags());
	ASSERT_LT(0, read_file(INJECT, buf, sizeof(buf)));
	EXPECT_EQ(0, strncmp(buf, "1 1 1 27 28 ", 12));
	ASSERT_EQ(0, inject("off"));
	EXPECT_EQ(0, leap_flags());
	EXPECT_EQ(-ENODATA, read_file(SCHEDULED, buf, sizeof(buf)));
	ASSERT_LT(0, read_file(INJECT, buf, sizeof(buf)));
	EXPECT_STREQ("off\n", buf);
}

TEST_F(inject, bad_input_is_einval)
{
	static const char *const bad[] = {
		"\n", "on", "1 1 1 27 28", "1 1 1 27 28 0 0",
		"2 1 1 27 28 0", "1 2 1 27 28 0", "1 1 2 27 28 0",
		"-1 1 1 27 28 0", "1 1 1 32768 28 0", "1 1 1 27 -32769 0",
		"1 1 1 27 28 xyz",
		/* Values that 32-bit sscanf() conversions wrap into range. */
		"4294967297 1 1 27 28 0", "1 4294967296 1 27 28 0",
		"1 1 4294967297 27 28 0", "1 1 1 4294967323 28 0",
		"1 1 1 27 4294967324 0",
		/* 17 significant hex digits do not fit the TOD clock. */
		"1 1 1 27 28 10000000000000000",
		"1 1 1 27 28 -1", "1 1 1 27 28 12g", "1 1 1 27.0 28 0",
	};
	static const char nul[] = "1 1 1 27 28 0\0 garbage";
	char buf[64], before[64], longer[200];
	unsigned int i;

	NEED_INJECT();
	ASSERT_EQ(0, injectf("1 1 1 27 28 %llx", tod_now() + 60 * TOD_SEC));
	ASSERT_LT(0, read_file(INJECT, before, sizeof(before)));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, inject(bad[i])) {
			TH_LOG("input '%s'", bad[i]);
		}
	}
	memset(longer, '1', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	EXPECT_EQ(-EINVAL, inject(longer));
	/* A NUL inside a line does not end it. */
	EXPECT_EQ(-EINVAL, inject_bytes(nul, sizeof(nul) - 1));
	/* Nothing changed. */
	ASSERT_LT(0, read_file(INJECT, buf, sizeof(buf)));
	EXPECT_STREQ(before, buf);
	EXPECT_EQ(STA_INS, leap_flags());
}

TEST_F(inject, root_only)
{
	NEED_INJECT();
	EXPECT_EQ(EACCES, unprivileged_errno(INJECT, O_WRONLY));
	EXPECT_EQ(EACCES, unprivileged_errno(TOD, O_RDONLY));
	/* The sysfs attribute stays readable for everyone. */
	ASSERT_EQ(0, injectf("1 1 1 27 28 %llx", tod_now() + 60 * TOD_SEC));
	EXPECT_EQ(0, unprivileged_errno(SCHEDULED, O_RDONLY));
}

/* CLOCK_REALTIME - CLOCK_MONOTONIC in ns: moves by a second at a leap. */
static long long realtime_offset(void)
{
	struct timespec r, m;

	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_REALTIME, &r);
	return (r.tv_sec - m.tv_sec) * 1000000000LL + r.tv_nsec - m.tv_nsec;
}

/*
 * The whole path: the announcement sets the flag, and the timekeeping core
 * inserts (deletes) a second at the next UTC midnight.  The clock is set to
 * three seconds before midnight of 2016-12-31, which had a leap second.
 */
static void leap_at_midnight(struct __test_metadata *_metadata, int change)
{
	struct timeval tv = { .tv_sec = 1483228800 - 3 };
	long long before, after, moved;

	/*
	 * Setting the clock clears the NTP state.  adjtimex() then tells the
	 * leap state only once the clock is "synced" again, and it stays so
	 * while the maximum error is below 16 s.
	 */
	/*
	 * Setting the clock does not reset the leap state machine: a TIME_INS
	 * left by an earlier test goes back to TIME_OK at a second boundary
	 * only (second_overflow()), which a slow (debug) kernel may not have
	 * reached yet.  Wait for it before the clock is set close to midnight.
	 */
	ASSERT_EQ(0, mark_synced());
	for (int i = 0; i < 30 && timex_state() != TIME_OK; i++)
		usleep(100000);
	ASSERT_EQ(0, settimeofday(&tv, NULL));
	before = realtime_offset();
	ASSERT_EQ(0, mark_synced());
	ASSERT_EQ(TIME_OK, timex_state());
	ASSERT_EQ(0, injectf("1 1 1 27 %d %llx", 27 + change,
			     tod_now() + 60 * TOD_SEC));
	ASSERT_EQ(change > 0 ? STA_INS : STA_DEL, leap_flags());
	sleep(6);
	after = realtime_offset();
	/* Done, and waiting for the flag to be taken back. */
	EXPECT_EQ(TIME_WAIT, timex_state());
	moved = after - before;
	/* A second less of UTC for an insertion, a second more for a deletion. */
	EXPECT_LT(llabs(moved + change * 1000000000LL), 100000000LL) {
		TH_LOG("realtime moved by %lld ns against monotonic", moved);
	}
	/* The announcement is withdrawn: the flag goes, the state recovers. */
	ASSERT_EQ(0, injectf("1 0 1 27 %d %llx", 27 + change, tod_now()));
	EXPECT_EQ(0, leap_flags());
	sleep(2);
	EXPECT_EQ(TIME_OK, timex_state());
	EXPECT_EQ(0, update_status(0, STA_UNSYNC));
}

TEST_F(inject, second_inserted_at_midnight)
{
	NEED_INJECT();
	leap_at_midnight(_metadata, 1);
}

TEST_F(inject, second_deleted_at_midnight)
{
	NEED_INJECT();
	leap_at_midnight(_metadata, -1);
}

TEST_HARNESS_MAIN

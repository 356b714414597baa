// SPDX-License-Identifier: GPL-2.0
/*
 * SafeSetID GID policies (patches/safesetid-gid): the policy files and their
 * errors, set*gid()/setgroups() allowed, refused (SIGKILL) and untouched per
 * policy, CAP_SETGID outside set*gid(), policies replaced while tasks change
 * IDs, and the regressions of the 6.1 bugs fixed in patches/fixes/.
 *
 * Unless a case says otherwise a constrained task has equal UID and GID
 * numbers, as in 6.1's selftest: stock 6.1 looks a GID transition up by the
 * UID's number (fixes/0003) and the two agree only then.
 */
#include "ssid_util.h"
#include <pthread.h>
#include <stddef.h>
#include <sys/mman.h>
#include <time.h>
#include "kselftest_harness.h"

#define KILLED SSID_KILLED(SIGKILL)

/* The GID policy most cases use: 2001 may become 2002; 2002 is pinned. */
#define GPOL "2001:2002\n2002:2002\n"

static const struct ssid_who constrained = { .uid = 2001, .gid = 2001, .keep_caps = true };

static int try_gid(const struct ssid_who *w, enum ssid_op op, unsigned int a,
		   unsigned int b, unsigned int c)
{
	struct ssid_act act = { .op = op, .a = a, .b = b, .c = c };

	return ssid_try(w, &act);
}

static int try_groups(const struct ssid_who *w, int n, const gid_t *list)
{
	struct ssid_act act = { .op = OP_SETGROUPS, .n = n };

	memcpy(act.list, list, n * sizeof(*list));
	return ssid_try(w, &act);
}

/* Does the kernel log, from now until after fn() ran, contain @needle? */
static int kmsg_fd = -1;

static void kmsg_mark(void)
{
	if (kmsg_fd < 0)
		kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	lseek(kmsg_fd, 0, SEEK_END);
}

static bool kmsg_has(const char *needle)
{
	char rec[1024];
	bool found = false;
	ssize_t n;

	for (;;) {
		n = read(kmsg_fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;
		if (n <= 0)
			break;
		rec[n] = '\0';
		if (strstr(rec, needle))
			found = true;
	}
	return found;
}

FIXTURE(pol) {
	char buf[4096];
};

FIXTURE_SETUP(pol)
{
	ssid_mount_securityfs();
	ASSERT_EQ(0, ssid_write(SSID_UID, "")) TH_LOG("no uid_allowlist_policy");
	ASSERT_EQ(0, ssid_write(SSID_GID, "")) TH_LOG("no gid_allowlist_policy");
}

FIXTURE_TEARDOWN(pol)
{
	ssid_flush();
}

/* Both files are there, root-only. */
TEST_F(pol, files_mode_0600)
{
	struct stat st;

	ASSERT_EQ(0, stat(SSID_UID_FILE, &st));
	EXPECT_EQ(S_IFREG | 0600, st.st_mode);
	ASSERT_EQ(0, stat(SSID_GID_FILE, &st));
	EXPECT_EQ(S_IFREG | 0600, st.st_mode);
	EXPECT_EQ(0, st.st_uid);
}

/* A write installs the text; a read gives it back; an empty write flushes. */
TEST_F(pol, write_read_flush)
{
	EXPECT_EQ(strlen(GPOL), ssid_write(SSID_GID, GPOL));
	EXPECT_EQ(strlen(GPOL), ssid_read(SSID_GID, self->buf, sizeof(self->buf)));
	EXPECT_STREQ(GPOL, self->buf);
	/* the files are separate */
	EXPECT_EQ(0, ssid_read(SSID_UID, self->buf, sizeof(self->buf)));
	EXPECT_EQ(0, ssid_write(SSID_GID, ""));
	EXPECT_EQ(0, ssid_read(SSID_GID, self->buf, sizeof(self->buf)));
	/* flushed: 2001 is free again */
	EXPECT_EQ(0, try_gid(&constrained, OP_SETGID, 3000, 0, 0));
}

/* Reads at an offset, a few bytes at a time. */
TEST_F(pol, read_in_pieces)
{
	char got[64] = "";
	int fd, n, off = 0;

	ASSERT_EQ(strlen(GPOL), ssid_write(SSID_GID, GPOL));
	fd = open(SSID_GID_FILE, O_RDONLY);
	ASSERT_LE(0, fd);
	while ((n = read(fd, got + off, 3)) > 0)
		off += n;
	EXPECT_EQ(0, n);
	close(fd);
	EXPECT_STREQ(GPOL, got);
	fd = open(SSID_GID_FILE, O_RDONLY);
	EXPECT_EQ(4, pread(fd, got, 4, 5));
	EXPECT_EQ(0, memcmp(got, "2002", 4));
	close(fd);
}

/* Each bad line fails the whole write with stock's errno. */
TEST_F(pol, bad_lines)
{
	static const struct { const char *text; int err; } t[] = {
		{ "2001:2002", EINVAL },		/* no newline */
		{ "2001:2002\n2002:2002", EINVAL },	/* last line without one */
		{ "20012002\n", EINVAL },		/* no colon */
		{ "\n", EINVAL },			/* empty line */
		{ "x:1\n", EINVAL },
		{ "1:y\n", EINVAL },
		{ "-1:2\n", EINVAL },
		{ " 1:2\n", EINVAL },
		{ "1:2 \n", EINVAL },
		{ "1:2:3\n", EINVAL },
		{ ":\n", EINVAL },
		{ "1:\n", EINVAL },
		{ "4294967296:1\n", ERANGE },		/* beyond u32 */
		{ "1:99999999999999999999\n", ERANGE },
		{ "4294967295:1\n", EINVAL },		/* (gid_t)-1: no mapping */
		{ "1:4294967295\n", EINVAL },
		{ "4294967295:99999999999\n", ERANGE },	/* both parse before mapping */
		{ "1:2\n1:2\n", EEXIST },		/* duplicate */
		{ "1:2\nx\n1:2\n", EINVAL },		/* first error wins */
		{ "1:2\n1:2\nx\n", EEXIST },
	};
	unsigned int i;
	int kind;

	for (kind = SSID_UID; kind <= SSID_GID; kind++) {
		ASSERT_EQ(strlen(GPOL), ssid_write(kind, GPOL));
		for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
			EXPECT_EQ(-t[i].err, ssid_write(kind, t[i].text))
				TH_LOG("kind %d: \"%s\"", kind, t[i].text);
		}
		/* the policy in force before the bad writes stays */
		EXPECT_EQ(strlen(GPOL), ssid_read(kind, self->buf, sizeof(self->buf)));
		EXPECT_STREQ(GPOL, self->buf);
	}
	EXPECT_EQ(KILLED, try_gid(&constrained, OP_SETGID, 3000, 0, 0));
}

/* kstrtou32 base 0: hex, octal and a '+' sign are accepted; the text is kept. */
TEST_F(pol, number_forms)
{
	const char *text = "0x7d1:0x7d2\n03722:+2002\n";	/* 2001:2002, 2002:2002 */

	ASSERT_EQ(strlen(text), ssid_write(SSID_GID, text));
	EXPECT_EQ(strlen(text), ssid_read(SSID_GID, self->buf, sizeof(self->buf)));
	EXPECT_STREQ(text, self->buf);
	EXPECT_EQ(0, try_gid(&constrained, OP_SETGID, 2002, 0, 0));
	EXPECT_EQ(KILLED, try_gid(&constrained, OP_SETGID, 2003, 0, 0));
}

/* A NUL ends the policy: the rest is ignored but counted as written. */
TEST_F(pol, nul_ends_the_text)
{
	static const char text[] = "2001:2002\n2002:2002\n\0garbage without newline";

	EXPECT_EQ(sizeof(text) - 1, ssid_write_len(SSID_GID, text, sizeof(text) - 1));
	EXPECT_EQ(strlen(GPOL), ssid_read(SSID_GID, self->buf, sizeof(self->buf)));
	EXPECT_STREQ(GPOL, self->buf);
}

/* Offset, size and buffer errors. */
TEST_F(pol, offset_size_fault)
{
	int fd = open(SSID_GID_FILE, O_WRONLY);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, pwrite(fd, GPOL, strlen(GPOL), 1));
	EXPECT_EQ(EINVAL, errno);
	/* a length of KMALLOC_MAX_SIZE (4 MiB) or more: EINVAL before any copy */
	EXPECT_EQ(-1, syscall(SYS_write, fd, GPOL, 4 << 20));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, syscall(SYS_write, fd, (void *)8, 64));
	EXPECT_EQ(EFAULT, errno);
	/* a write does not move the file offset: the same fd writes again */
	EXPECT_EQ(strlen(GPOL), write(fd, GPOL, strlen(GPOL)));
	EXPECT_EQ(strlen(GPOL), write(fd, GPOL, strlen(GPOL)));
	close(fd);
}

/* Writing needs CAP_MAC_ADMIN of the opener in the initial user namespace. */
TEST_F(pol, write_needs_cap_mac_admin)
{
	pid_t pid = fork();
	int status;

	ASSERT_LE(0, pid);
	if (pid == 0) {
		unsigned long long all = ssid_permitted();
		int fd;

		if (ssid_capset(all & ~CAPBIT(CAP_MAC_ADMIN), all))
			_exit(10);
		fd = open(SSID_GID_FILE, O_WRONLY);
		if (fd < 0)
			_exit(11);
		if (write(fd, GPOL, strlen(GPOL)) != -1 || errno != EPERM)
			_exit(12);
		close(fd);
		/* a file opened with it may be written after it is dropped */
		if (ssid_capset(all, all))
			_exit(13);
		fd = open(SSID_GID_FILE, O_WRONLY);
		if (ssid_capset(all & ~CAPBIT(CAP_MAC_ADMIN), all))
			_exit(14);
		if (write(fd, GPOL, strlen(GPOL)) != (ssize_t)strlen(GPOL))
			_exit(15);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	EXPECT_EQ(strlen(GPOL), ssid_read(SSID_GID, self->buf, sizeof(self->buf)));
}

/* A user-namespace root (mapped to root) can open the file but not write. */
TEST_F(pol, userns_root_eperm)
{
	int go[2], st[2], status;
	char c, path[64];
	pid_t pid;
	int fd;

	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(st));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char r = 0;

		if (unshare(CLONE_NEWUSER))
			_exit(10);
		if (write(st[1], &r, 1) != 1 || read(go[0], &r, 1) != 1)
			_exit(11);
		fd = open(SSID_GID_FILE, O_WRONLY);
		if (fd < 0)
			_exit(12);
		if (write(fd, GPOL, strlen(GPOL)) != -1)
			_exit(13);
		_exit(errno == EPERM ? 0 : 14);
	}
	ASSERT_EQ(1, read(st[0], &c, 1));
	snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
	fd = open(path, O_WRONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(6, write(fd, "0 0 1\n", 6));
	close(fd);
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, ssid_read(SSID_GID, self->buf, sizeof(self->buf)));
}

/* An unprivileged user cannot open the files at all. */
TEST_F(pol, unprivileged_eacces)
{
	pid_t pid = fork();
	int status;

	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (setresuid(1000, 1000, 1000))
			_exit(10);
		if (open(SSID_GID_FILE, O_WRONLY) != -1 || errno != EACCES)
			_exit(11);
		if (open(SSID_GID_FILE, O_RDONLY) != -1 || errno != EACCES)
			_exit(12);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
}

/* setgid(): to a child of a rule, to held IDs; anything else kills. */
TEST_F(pol, setgid_per_policy)
{
	ASSERT_EQ(strlen(GPOL), ssid_write(SSID_GID, GPOL));
	EXPECT_EQ(0, try_gid(&constrained, OP_SETGID, 2002, 0, 0));
	EXPECT_EQ(0, try_gid(&constrained, OP_SETGID, 2001, 0, 0));
	EXPECT_EQ(KILLED, try_gid(&constrained, OP_SETGID, 2003, 0, 0));
	EXPECT_EQ(KILLED, try_gid(&constrained, OP_SETGID, 0, 0, 0));
}

/* setregid/setresgid/setfsgid: every one of the four GIDs is judged. */
TEST_F(pol, setxgid_each_id)
{
	ASSERT_EQ(strlen(GPOL), ssid_write(SSID_GID, GPOL));
	EXPECT_EQ(0, try_gid(&constrained, OP_SETREGID, 2002, 2001, 0));
	EXPECT_EQ(0, try_gid(&constrained, OP_SETRESGID, 2002, 2002, 2001));
	EXPECT_EQ(0, try_gid(&constrained, OP_SETRESGID, -1, -1, 2002));
	EXPECT_EQ(KILLED, try_gid(&constrained, OP_SETRESGID, 2003, -1, -1));
	EXPECT_EQ(KILLED, try_gid(&constrained, OP_SETRESGID, -1, 2003, -1));
	EXPECT_EQ(KILLED, try_gid(&constrained, OP_SETRESGID, -1, -1, 2003));
	EXPECT_EQ(KILLED, try_gid(&constrained, OP_SETREGID, 2002, 5, 0));
	EXPECT_EQ(0, try_gid(&constrained, OP_SETFSGID, 2002, 0, 0));
	EXPECT_EQ(KILLED, try_gid(&constrained, OP_SETFSGID, 2003, 0, 0));
}

/*
 * IDs already held (real, effective, saved) are always fine: a constrained
 * task whose saved GID is 7 (no rule leads to 7) may make 7 its effective
 * GID, but not 8.
 */
static int held_child(unsigned int eff)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		if (setgroups(0, NULL) || setresgid(2001, 2001, 7))
			_exit(20);
		if (prctl(PR_SET_KEEPCAPS, 1) || setresuid(2001, 2001, 2001) ||
		    ssid_capset(ssid_permitted(), ssid_permitted()))
			_exit(21);
		if (setresgid(-1, eff, -1))
			_exit(22);
		_exit(getegid() == eff ? 0 : 23);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFSIGNALED(status) ? SSID_KILLED(WTERMSIG(status)) : WEXITSTATUS(status);
}

TEST_F(pol, held_ids_need_no_rule)
{
	ASSERT_EQ(strlen(GPOL), ssid_write(SSID_GID, GPOL));
	EXPECT_EQ(0, held_child(7));
	EXPECT_EQ(0, held_child(2002));
	EXPECT_EQ(KILLED, held_child(8));
}

/* setgroups(): each group is judged like a GID; an empty list always passes. */
TEST_F(pol, setgroups_per_policy)
{
	const gid_t ok[] = { 2002, 2001 }, bad[] = { 2002, 3000 }, zero[] = { 0 };
	struct ssid_who sup = constrained;

	ASSERT_EQ(strlen(GPOL), ssid_write(SSID_GID, GPOL));
	EXPECT_EQ(0, try_groups(&constrained, 2, ok));
	EXPECT_EQ(0, try_groups(&constrained, 0, NULL));
	EXPECT_EQ(KILLED, try_groups(&constrained, 2, bad));
	EXPECT_EQ(KILLED, try_groups(&constrained, 1, zero));
	/* a group held only as a supplementary group does not count as held */
	sup.ngroups = 1;
	sup.groups[0] = 3000;
	EXPECT_EQ(KILLED, try_groups(&sup, 1, bad + 1));
	EXPECT_EQ(0, try_groups(&sup, 0, NULL));
}

/* A task whose GID has no rule, and a task without CAP_SETGID. */
TEST_F(pol, unconstrained_and_unprivileged)
{
	struct ssid_who free_task = { .uid = 4000, .gid = 4000, .keep_caps = true };
	struct ssid_who nocaps = { .uid = 2001, .gid = 2001 };
	const gid_t any[] = { 0, 5 };

	ASSERT_EQ(strlen(GPOL), ssid_write(SSID_GID, GPOL));
	EXPECT_EQ(0, try_gid(&free_task, OP_SETGID, 0, 0, 0));
	EXPECT_EQ(0, try_groups(&free_task, 2, any));
	EXPECT_EQ(0, try_gid(&free_task, OP_GID_MAP, 0, 0, 0));
	/* without the capability the kernel refuses first: EPERM, no kill */
	EXPECT_EQ(EPERM, try_gid(&nocaps, OP_SETGID, 2002, 0, 0));
	EXPECT_EQ(EPERM, try_gid(&nocaps, OP_SETGID, 3000, 0, 0));
	EXPECT_EQ(0, try_gid(&nocaps, OP_SETGID, 2001, 0, 0));
}

/* CAP_SETGID outside set*gid(): refused to a constrained task, logged. */
TEST_F(pol, gid_map_needs_unconstrained_gid)
{
	ASSERT_EQ(strlen(GPOL), ssid_write(SSID_GID, GPOL));
	kmsg_mark();
	EXPECT_EQ(EPERM, try_gid(&constrained, OP_GID_MAP, 0, 0, 0));
	EXPECT_TRUE(kmsg_has("which is not available to GID 2001 for operations besides approved set*gid transitions"));
	/* the uid_map side is the UID policy's business */
	EXPECT_EQ(0, try_gid(&constrained, OP_UID_MAP, 0, 0, 0));
	/* the log names the refused transition */
	kmsg_mark();
	EXPECT_EQ(KILLED, try_gid(&constrained, OP_SETGID, 2003, 0, 0));
	EXPECT_TRUE(kmsg_has("GID transition ((2001,2001,2001) -> 2003) blocked"));
}

/* UID and GID policies are separate. */
TEST_F(pol, uid_and_gid_policies_apart)
{
	ASSERT_EQ(strlen(GPOL), ssid_write(SSID_GID, GPOL));
	/* a GID policy does not constrain UIDs */
	EXPECT_EQ(0, try_gid(&constrained, OP_SETUID, 0, 0, 0));
	EXPECT_EQ(0, try_gid(&constrained, OP_UID_MAP, 0, 0, 0));
	/* a UID policy alone does not constrain GIDs */
	ASSERT_EQ(0, ssid_write(SSID_GID, ""));
	ASSERT_EQ(strlen(GPOL), ssid_write(SSID_UID, GPOL));
	EXPECT_EQ(0, try_gid(&constrained, OP_SETGID, 3000, 0, 0));
	EXPECT_EQ(EPERM, try_gid(&constrained, OP_UID_MAP, 0, 0, 0));
	EXPECT_EQ(0, try_gid(&constrained, OP_SETUID, 2002, 0, 0));
	EXPECT_EQ(KILLED, try_gid(&constrained, OP_SETUID, 0, 0, 0));
	EXPECT_EQ(KILLED, try_gid(&constrained, OP_SETFSUID, 3000, 0, 0));
}

/* A child without rules of its own is pinned to itself, with a warning. */
TEST_F(pol, insecure_policy_is_pinned)
{
	struct ssid_who at2002 = { .uid = 2002, .gid = 2002, .keep_caps = true };

	kmsg_mark();
	ASSERT_EQ(10, ssid_write(SSID_GID, "2001:2002\n"));
	EXPECT_TRUE(kmsg_has("insecure policy detected: gid 2001 is constrained but transitively unconstrained through gid 2002"));
	EXPECT_EQ(0, try_gid(&constrained, OP_SETGID, 2002, 0, 0));
	EXPECT_EQ(0, try_gid(&at2002, OP_SETGID, 2002, 0, 0));
	EXPECT_EQ(KILLED, try_gid(&at2002, OP_SETGID, 2001, 0, 0));
	/* the text reads back as written, without the added rule */
	EXPECT_EQ(10, ssid_read(SSID_GID, self->buf, sizeof(self->buf)));
	EXPECT_STREQ("2001:2002\n", self->buf);
}

/* fixes/0003: the GID rule is looked up by the real GID, not the UID number. */
TEST_F(pol, gid_rule_keyed_by_gid)
{
	struct ssid_who w = { .uid = 1001, .gid = 2001, .keep_caps = true };
	const gid_t root[] = { 0 };

	ASSERT_EQ(strlen(GPOL), ssid_write(SSID_GID, GPOL));
	EXPECT_EQ(0, try_gid(&w, OP_SETGID, 2002, 0, 0));
	EXPECT_EQ(KILLED, try_gid(&w, OP_SETGID, 0, 0, 0));
	EXPECT_EQ(KILLED, try_gid(&w, OP_SETRESGID, 3000, -1, -1));
	EXPECT_EQ(KILLED, try_groups(&w, 1, root));
	/* root's UID number has no GID rule either */
	w.uid = 0;
	EXPECT_EQ(KILLED, try_gid(&w, OP_SETGID, 3000, 0, 0));
}

/* fixes/0003: a UID number that is another group's rule source is not used. */
TEST_F(pol, uid_number_of_another_group)
{
	/* uid 2002 as number has the GID rule 2002:2004; the task's GID 2001 allows 2003 */
	struct ssid_who w = { .uid = 2002, .gid = 2001, .keep_caps = true };

	ASSERT_LT(0, ssid_write(SSID_GID, "2001:2003\n2003:2003\n2002:2004\n2004:2004\n"));
	EXPECT_EQ(0, try_gid(&w, OP_SETGID, 2003, 0, 0));
	EXPECT_EQ(KILLED, try_gid(&w, OP_SETGID, 2004, 0, 0));
}

/* fixes/0004: the CAP_SETGID message names the GID. */
TEST_F(pol, cap_setgid_message_names_gid)
{
	struct ssid_who w = { .uid = 1001, .gid = 2001, .keep_caps = true };

	ASSERT_EQ(strlen(GPOL), ssid_write(SSID_GID, GPOL));
	kmsg_mark();
	EXPECT_EQ(EPERM, try_gid(&w, OP_GID_MAP, 0, 0, 0));
	EXPECT_TRUE(kmsg_has("not available to GID 2001 for"));
}

/*
 * A policy swapped in a loop while children change GIDs: a change both
 * policies allow is never refused, one neither allows is always refused.
 */
static volatile int swapping;

static void *swapper(void *arg)
{
	static const char *const p[2] = {
		"2001:2002\n2001:2003\n2002:2002\n2003:2003\n",
		"2001:2002\n2001:2004\n2002:2002\n2004:2004\n",
	};
	long n = 0;

	while (swapping) {
		if (ssid_write(SSID_GID, p[n & 1]) < 0)
			return (void *)-1L;
		n++;
	}
	return (void *)n;
}

TEST_F(pol, policy_swapped_under_load)
{
	pthread_t th;
	void *writes;
	int i, ok = 0, killed = 0;

	ASSERT_LT(0, ssid_write(SSID_GID, "2001:2002\n2002:2002\n"));
	swapping = 1;
	ASSERT_EQ(0, pthread_create(&th, NULL, swapper, NULL));
	for (i = 0; i < 150; i++) {
		ok += try_gid(&constrained, OP_SETGID, 2002, 0, 0) == 0;
		killed += try_gid(&constrained, OP_SETGID, 2005, 0, 0) == KILLED;
	}
	swapping = 0;
	ASSERT_EQ(0, pthread_join(th, &writes));
	EXPECT_EQ(150, ok);
	EXPECT_EQ(150, killed);
	EXPECT_LT(10, (long)writes);
	TH_LOG("%ld policy writes during 300 transitions", (long)writes);
}

/*
 * A read that queues on the policy lock behind a write (fixes/0005).  6.1's read handler
 * takes the policy pointer before it takes the lock: a reader that waits for the lock
 * behind a writer then reads the policy the writer replaced, freed once an RCU grace period
 * has passed.  Each trial makes that order: reader A holds the lock while it copies a
 * policy of 1.4 MB into a buffer it has never touched (15 ms or more under TCG); the
 * writer W (another CPU) queues for the lock with a small policy P1 a fifth of that time
 * (5 ms at least) after A entered read(); reader B queues behind W as long again after W
 * entered write(); a
 * SCHED_FIFO spinner on B's CPU keeps B off it from then until 300 ms after W is done, long
 * enough for the grace period.  B must read P1 (it got the lock after W); on 6.1 it reads freed
 * memory (or the kernel dies in strlen()).  The threads are pinned: A on CPU 0, B and the
 * spinner on CPU 1, W on CPU 2 (the group boots with SMP=3; the kernel is not preemptible,
 * so A's CPU is A's until it is done).
 */
#define RACE_RULES	100000
#define RACE_TRIALS	6

static const char race_p1[] = "2001:2002\n2002:2002\n";

struct race {
	pthread_barrier_t go;
	int gid_fd[2];
	char *p0;
	size_t p0_len;
	long a_len, w_ret, b_len;
	int a_in, w_in, b_in, w_done;	/* A, W, B entered their calls; W returned */
	long gap;		/* ms between one entering its call and the next */
	char b_buf[64];
	struct timespec t_a, t_w, t_b, t_a_done, t_w_done;
};

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static void wait_until_ms(const struct timespec *t0, long ms)
{
	while (ms_since(t0) < ms)
		;
}

static struct timespec race_t0;

static void *race_a(void *arg)
{
	struct race *r = arg;
	char *buf = mmap(NULL, r->p0_len + 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	pin(0);
	pthread_barrier_wait(&r->go);
	clock_gettime(CLOCK_MONOTONIC, &r->t_a);
	__atomic_store_n(&r->a_in, 1, __ATOMIC_RELEASE);
	r->a_len = buf == MAP_FAILED ? -ENOMEM :
		   read(r->gid_fd[0], buf, r->p0_len + 4096);
	clock_gettime(CLOCK_MONOTONIC, &r->t_a_done);
	/* the policy installed (P0), or P1 if W got the lock first */
	if (r->a_len >= 0 && !((size_t)r->a_len == r->p0_len && !memcmp(buf, r->p0, r->p0_len)) &&
	    !(r->a_len == (long)strlen(race_p1) && !memcmp(buf, race_p1, r->a_len)))
		r->a_len = -EBADMSG;
	if (buf != MAP_FAILED)
		munmap(buf, r->p0_len + 4096);
	return NULL;
}

static void *race_w(void *arg)
{
	struct race *r = arg;

	pin(2);
	pthread_barrier_wait(&r->go);
	while (!__atomic_load_n(&r->a_in, __ATOMIC_ACQUIRE))
		;
	wait_until_ms(&r->t_a, r->gap);
	clock_gettime(CLOCK_MONOTONIC, &r->t_w);
	__atomic_store_n(&r->w_in, 1, __ATOMIC_RELEASE);
	r->w_ret = ssid_write(SSID_GID, race_p1);
	clock_gettime(CLOCK_MONOTONIC, &r->t_w_done);
	__atomic_store_n(&r->w_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *race_b(void *arg)
{
	struct race *r = arg;

	pin(1);
	pthread_barrier_wait(&r->go);
	while (!__atomic_load_n(&r->w_in, __ATOMIC_ACQUIRE))
		;
	wait_until_ms(&r->t_w, r->gap);
	clock_gettime(CLOCK_MONOTONIC, &r->t_b);
	__atomic_store_n(&r->b_in, 1, __ATOMIC_RELEASE);
	r->b_len = read(r->gid_fd[1], r->b_buf, sizeof(r->b_buf) - 1);
	if (r->b_len < 0)
		r->b_len = -errno;
	return NULL;
}

static void *race_spinner(void *arg)
{
	struct race *r = arg;
	struct sched_param sp = { .sched_priority = 10 };

	pin(1);
	pthread_barrier_wait(&r->go);
	while (!__atomic_load_n(&r->b_in, __ATOMIC_ACQUIRE))
		;
	wait_until_ms(&r->t_b, r->gap);
	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		return (void *)-1L;
	/* until W has swapped the policies, then 300 ms more */
	while (!__atomic_load_n(&r->w_done, __ATOMIC_ACQUIRE) && ms_since(&race_t0) < 5000)
		;
	wait_until_ms(&race_t0, ms_since(&race_t0) + 300);
	return NULL;
}

/* ms a read of the installed @len-byte GID policy into untouched memory takes, or -1 */
static long race_hold_ms(size_t len)
{
	char *buf = mmap(NULL, len + 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = open(SSID_GID_FILE, O_RDONLY);
	long ms = -1;

	if (buf != MAP_FAILED && fd >= 0) {
		clock_gettime(CLOCK_MONOTONIC, &race_t0);
		if (read(fd, buf, len + 4096) == (long)len)
			ms = ms_since(&race_t0);
	}
	if (fd >= 0)
		close(fd);
	if (buf != MAP_FAILED)
		munmap(buf, len + 4096);
	return ms;
}

static long ts_ms(const struct timespec *t)
{
	return (t->tv_sec - race_t0.tv_sec) * 1000 + (t->tv_nsec - race_t0.tv_nsec) / 1000000;
}

TEST_F_TIMEOUT(pol, read_write_race, 240)
{
	void *(*fn[4])(void *) = { race_a, race_w, race_b, race_spinner };
	int trial, i, behind = 0;
	long hold;
	struct race r;
	size_t cap = (size_t)RACE_RULES * 16, o = 0;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 3)
		SKIP(return, "needs 3 CPUs (group.conf SMP=3)");
	r.p0 = malloc(cap);
	ASSERT_NE(NULL, r.p0);
	for (i = 0; i < RACE_RULES; i++)
		o += snprintf(r.p0 + o, cap - o, "%d:%d\n", 100000 + i, 100000 + i);
	r.p0_len = o;
	/* how long a read of P0 into untouched memory holds the lock */
	ASSERT_EQ((long)r.p0_len, ssid_write_len(SSID_GID, r.p0, r.p0_len));
	hold = race_hold_ms(r.p0_len);
	ASSERT_LT(0, hold);
	TH_LOG("a read of the %zu-byte policy takes %ld ms", r.p0_len, hold);
	for (trial = 0; trial < RACE_TRIALS; trial++) {
		pthread_t th[4];

		ASSERT_EQ((long)r.p0_len, ssid_write_len(SSID_GID, r.p0, r.p0_len));
		memset(&r.a_len, 0, sizeof(r) - offsetof(struct race, a_len));
		/* W must be queued before B comes, whatever A's time: 5 ms at least */
		r.gap = hold / 5 > 5 ? hold / 5 : 5;
		r.gid_fd[0] = open(SSID_GID_FILE, O_RDONLY);
		r.gid_fd[1] = open(SSID_GID_FILE, O_RDONLY);
		ASSERT_LE(0, r.gid_fd[0]);
		ASSERT_LE(0, r.gid_fd[1]);
		ASSERT_EQ(0, pthread_barrier_init(&r.go, NULL, 5));
		for (i = 0; i < 4; i++) {
			ASSERT_EQ(0, pthread_create(&th[i], NULL, fn[i], &r));
		}
		clock_gettime(CLOCK_MONOTONIC, &race_t0);
		pthread_barrier_wait(&r.go);
		for (i = 0; i < 4; i++) {
			ASSERT_EQ(0, pthread_join(th[i], NULL));
		}
		pthread_barrier_destroy(&r.go);
		close(r.gid_fd[0]);
		close(r.gid_fd[1]);

		TH_LOG("trial %d: A %ld-%ld ms, W %ld-%ld ms, B from %ld ms: A %ld, W %ld, B %ld bytes",
		       trial, ts_ms(&r.t_a), ts_ms(&r.t_a_done), ts_ms(&r.t_w),
		       ts_ms(&r.t_w_done), ts_ms(&r.t_b), r.a_len, r.w_ret, r.b_len);
		EXPECT_LE(0, r.a_len);
		EXPECT_EQ((long)strlen(race_p1), r.w_ret);
		ASSERT_LE(0, r.b_len);
		r.b_buf[r.b_len] = '\0';
		/* B read whole: the old policy (it got the lock first) or the new one */
		if (!strcmp(r.b_buf, race_p1)) {
			/* B was waiting when W swapped: B came after A took the lock */
			behind += ts_ms(&r.t_b) < ts_ms(&r.t_a_done);
		} else {
			/* P0 is longer than B's buffer: B fills it (stock: 0 bytes, freed) */
			EXPECT_EQ((long)sizeof(r.b_buf) - 1, r.b_len);
			EXPECT_EQ(0, strncmp(r.b_buf, r.p0, r.b_len)) TH_LOG("B read \"%s\"", r.b_buf);
		}
	}
	free(r.p0);
	TH_LOG("%d of %d trials: B queued behind W and read the new policy", behind, RACE_TRIALS);
	/* the window was reached (else this test proves nothing) */
	EXPECT_LT(0, behind);
}

TEST_HARNESS_MAIN

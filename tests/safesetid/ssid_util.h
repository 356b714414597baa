/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the safesetid test group and its fuzz group: the two policy
 * files, capabilities through capset(2), and children that take on given IDs,
 * try one ID change and report what happened (exit code, errno or signal).
 */
#ifndef SSID_UTIL_H
#define SSID_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>

#define SSID_DIR	"/sys/kernel/security/safesetid"
#define SSID_UID_FILE	SSID_DIR "/uid_allowlist_policy"
#define SSID_GID_FILE	SSID_DIR "/gid_allowlist_policy"

enum { SSID_UID, SSID_GID };

static inline const char *ssid_file(int kind)
{
	return kind == SSID_UID ? SSID_UID_FILE : SSID_GID_FILE;
}

static inline void ssid_mount_securityfs(void)
{
	struct stat st;

	if (stat(SSID_DIR, &st) == 0)
		return;
	mount("securityfs", "/sys/kernel/security", "securityfs", 0, NULL);
}

/* Write @len bytes of @text to the policy file in one write: 0 or -errno. */
static inline long ssid_write_len(int kind, const void *text, size_t len)
{
	int fd = open(ssid_file(kind), O_WRONLY);
	long ret;

	if (fd < 0)
		return -errno;
	ret = write(fd, text, len);
	if (ret < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Install @text as policy: the write's return value, or -errno. */
static inline long ssid_write(int kind, const char *text)
{
	return ssid_write_len(kind, text, strlen(text));
}

/* Read the policy back into @buf: length, or -errno. */
static inline long ssid_read(int kind, char *buf, size_t size)
{
	int fd = open(ssid_file(kind), O_RDONLY);
	long n, got = 0;

	if (fd < 0)
		return -errno;
	while (got < (long)size - 1) {
		n = read(fd, buf + got, size - 1 - got);
		if (n < 0) {
			got = -errno;
			break;
		}
		if (n == 0)
			break;
		got += n;
	}
	close(fd);
	if (got >= 0)
		buf[got] = '\0';
	return got;
}

static inline void ssid_flush(void)
{
	ssid_write(SSID_UID, "");
	ssid_write(SSID_GID, "");
}

/* Set the effective, permitted and inheritable capability sets (bits 0-63). */
static inline int ssid_capset(unsigned long long eff, unsigned long long prm)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = {
		{ (__u32)eff, (__u32)prm, 0 },
		{ (__u32)(eff >> 32), (__u32)(prm >> 32), 0 },
	};

	return syscall(SYS_capset, &h, d);
}

static inline unsigned long long ssid_permitted(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return 0;
	return d[0].permitted | (unsigned long long)d[1].permitted << 32;
}

#define CAPBIT(c) (1ULL << (c))

/*
 * Who a child becomes before it acts: real/effective/saved UID and GID, the
 * supplementary groups, and whether it keeps its capabilities (CAP_SETUID and
 * CAP_SETGID among them) across the UID change.  Done from root, whose IDs no
 * test policy constrains.
 */
struct ssid_who {
	uid_t uid;
	gid_t gid;
	int ngroups;
	gid_t groups[4];
	bool keep_caps;
};

/* 0, or a code >= 200 saying which step failed. */
static inline int ssid_become(const struct ssid_who *w)
{
	if (setgroups(w->ngroups, w->groups))
		return 200;
	if (setresgid(w->gid, w->gid, w->gid))
		return 201;
	if (w->keep_caps && prctl(PR_SET_KEEPCAPS, 1))
		return 202;
	if (setresuid(w->uid, w->uid, w->uid))
		return 203;
	if (w->keep_caps && ssid_capset(ssid_permitted(), ssid_permitted()))
		return 204;
	return 0;
}

enum ssid_op {
	OP_SETUID, OP_SETREUID, OP_SETRESUID, OP_SETFSUID,
	OP_SETGID, OP_SETREGID, OP_SETRESGID, OP_SETFSGID,
	OP_SETGROUPS, OP_UID_MAP, OP_GID_MAP, OP_NOPS
};

static const char *const ssid_op_name[OP_NOPS] = {
	"setuid", "setreuid", "setresuid", "setfsuid",
	"setgid", "setregid", "setresgid", "setfsgid",
	"setgroups", "uid_map", "gid_map",
};

struct ssid_act {
	enum ssid_op op;
	unsigned int a, b, c;	/* IDs (-1: unchanged), or the map's lower ID */
	int n;			/* setgroups() list */
	gid_t list[4];
};

/*
 * Write "0 <lower> 1" into the uid_map or gid_map of a fresh user namespace
 * (a child that unshared one): 0 or errno.
 */
static inline int ssid_write_map(bool gid, unsigned int lower)
{
	int go[2], done[2], ret = 0;
	char path[64], line[32];
	pid_t pid;
	int fd;

	if (pipe(go) || pipe(done))
		return 210;
	pid = fork();
	if (pid < 0)
		return 211;
	if (pid == 0) {
		char c = 0;

		if (unshare(CLONE_NEWUSER))
			_exit(1);
		if (write(go[1], &c, 1) != 1)
			_exit(1);
		if (read(done[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	{
		char c;

		if (read(go[0], &c, 1) != 1)
			ret = 212;
	}
	if (!ret) {
		snprintf(path, sizeof(path), "/proc/%d/%s", pid, gid ? "gid_map" : "uid_map");
		snprintf(line, sizeof(line), "0 %u 1\n", lower);
		fd = open(path, O_WRONLY);
		if (fd < 0)
			ret = 213;
		else if (write(fd, line, strlen(line)) != (ssize_t)strlen(line))
			ret = errno;
		if (fd >= 0)
			close(fd);
	}
	if (write(done[1], "x", 1) != 1)
		ret = 214;
	waitpid(pid, NULL, 0);
	return ret;
}

/*
 * Do @act: 0 when the call succeeded and the IDs it asked for are in place,
 * the errno when it failed, 100 when it "succeeded" without the change.
 */
static inline int ssid_act(const struct ssid_act *act)
{
	uid_t r, e, s;
	gid_t gl[8];
	int n;

	switch (act->op) {
	case OP_SETUID:
		if (setuid(act->a))
			return errno;
		return geteuid() == act->a ? 0 : 100;
	case OP_SETREUID:
		if (setreuid(act->a, act->b))
			return errno;
		getresuid(&r, &e, &s);
		return ((act->a == -1U || r == act->a) && (act->b == -1U || e == act->b)) ? 0 : 100;
	case OP_SETRESUID:
		if (setresuid(act->a, act->b, act->c))
			return errno;
		getresuid(&r, &e, &s);
		return ((act->a == -1U || r == act->a) && (act->b == -1U || e == act->b) &&
			(act->c == -1U || s == act->c)) ? 0 : 100;
	case OP_SETFSUID:
		setfsuid(act->a);
		return (unsigned int)setfsuid(-1) == act->a ? 0 : 100;
	case OP_SETGID:
		if (setgid(act->a))
			return errno;
		return getegid() == act->a ? 0 : 100;
	case OP_SETREGID:
		if (setregid(act->a, act->b))
			return errno;
		getresgid(&r, &e, &s);
		return ((act->a == -1U || r == act->a) && (act->b == -1U || e == act->b)) ? 0 : 100;
	case OP_SETRESGID:
		if (setresgid(act->a, act->b, act->c))
			return errno;
		getresgid(&r, &e, &s);
		return ((act->a == -1U || r == act->a) && (act->b == -1U || e == act->b) &&
			(act->c == -1U || s == act->c)) ? 0 : 100;
	case OP_SETFSGID:
		setfsgid(act->a);
		return (unsigned int)setfsgid(-1) == act->a ? 0 : 100;
	case OP_SETGROUPS:
		if (setgroups(act->n, act->list))
			return errno;
		n = getgroups(8, gl);
		return n == act->n ? 0 : 100;
	case OP_UID_MAP:
		return ssid_write_map(false, act->a);
	case OP_GID_MAP:
		return ssid_write_map(true, act->a);
	default:
		return 220;
	}
}

#define SSID_KILLED(sig) (0x100 | (sig))

/*
 * Fork a child that becomes @who and does @act.  Returns its exit code (0:
 * done; an errno; 100: no change; >= 200: setup failed) or SSID_KILLED(sig).
 */
static inline int ssid_try(const struct ssid_who *who, const struct ssid_act *act)
{
	int status, ret;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		ret = ssid_become(who);
		if (!ret)
			ret = ssid_act(act);
		_exit(ret);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status))
		return SSID_KILLED(WTERMSIG(status));
	return WEXITSTATUS(status);
}

#endif /* SSID_UTIL_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the nosymfollow test group and its fuzz group: the new mount API
 * through syscall(2) (Debian 12's glibc has no wrappers), user namespaces,
 * and reading a mount's flags back from /proc/self/mountinfo and statfs(2).
 */
#ifndef NSF_UTIL_H
#define NSF_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>
#include <linux/mount.h>
#include <linux/openat2.h>

/* <linux/statfs.h> is not UAPI; the value is ABI all the same */
#ifndef ST_NOSYMFOLLOW
#define ST_NOSYMFOLLOW	0x2000
#endif
#ifndef MS_NOSYMFOLLOW
#define MS_NOSYMFOLLOW	256
#endif

static inline int sys_mount_setattr(int dfd, const char *path, unsigned int flags,
				    __u64 set, __u64 clr)
{
	struct mount_attr attr = { .attr_set = set, .attr_clr = clr };

	return syscall(__NR_mount_setattr, dfd, path, flags, &attr, sizeof(attr));
}

static inline int sys_fsopen(const char *fs, unsigned int flags)
{
	return syscall(__NR_fsopen, fs, flags);
}

static inline int sys_fsconfig(int fd, unsigned int cmd, const char *key, const void *val, int aux)
{
	return syscall(__NR_fsconfig, fd, cmd, key, val, aux);
}

static inline int sys_fsmount(int fd, unsigned int flags, unsigned int attr)
{
	return syscall(__NR_fsmount, fd, flags, attr);
}

static inline int sys_move_mount(int from_dfd, const char *from, int to_dfd, const char *to,
				 unsigned int flags)
{
	return syscall(__NR_move_mount, from_dfd, from, to_dfd, to, flags);
}

static inline int sys_openat2(int dfd, const char *path, __u64 flags, __u64 resolve)
{
	struct open_how how = { .flags = flags, .resolve = resolve };

	return syscall(__NR_openat2, dfd, path, &how, sizeof(how));
}

static inline int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* The process becomes uid/gid id, then root of a new user and mount namespace. */
static inline int enter_userns(unsigned int id)
{
	char map[32];

	if (setgroups(0, NULL) || setresgid(id, id, id) || setresuid(id, id, id))
		return -errno;
	/* changing uid made the process undumpable: /proc/self/uid_map would be root's */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return -errno;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS))
		return -errno;
	snprintf(map, sizeof(map), "0 %u 1", id);
	if (write_str("/proc/self/setgroups", "deny") || write_str("/proc/self/uid_map", map) ||
	    write_str("/proc/self/gid_map", map))
		return -EPERM;
	return mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ? -errno : 0;
}

/* A private mount namespace for the calling process (root). */
static inline int enter_mntns(void)
{
	if (unshare(CLONE_NEWNS))
		return -errno;
	return mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ? -errno : 0;
}

/*
 * The per-mount options (mountinfo's sixth field) of the mount at path, or
 * "" if there is none; the last mount listed there wins, as it is on top.
 */
static inline const char *mount_opts(const char *path, char *buf, size_t len)
{
	char line[4096], mp[4096], opts[1024];
	FILE *f = fopen("/proc/self/mountinfo", "r");

	buf[0] = '\0';
	if (!f)
		return buf;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*d %*d %*s %*s %4095s %1023s", mp, opts) != 2)
			continue;
		if (!strcmp(mp, path))
			snprintf(buf, len, "%s", opts);
	}
	fclose(f);
	return buf;
}

/* Whether mountinfo lists nosymfollow for the mount at path. */
static inline bool shown_nosymfollow(const char *path)
{
	char buf[1024], *tok, *save;

	mount_opts(path, buf, sizeof(buf));
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (!strcmp(tok, "nosymfollow"))
			return true;
	return false;
}

/* statfs(2)'s f_flags for path, or -errno */
static inline long statfs_flags(const char *path)
{
	struct statfs sf;

	if (statfs(path, &sf))
		return -errno;
	return sf.f_flags;
}

/* errno of open(path, flags), 0 on success */
static inline int open_err(const char *path, int flags)
{
	int fd = open(path, flags);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static inline int stat_err(const char *path)
{
	struct stat st;

	return stat(path, &st) ? errno : 0;
}

static inline int lstat_err(const char *path)
{
	struct stat st;

	return lstat(path, &st) ? errno : 0;
}

#endif /* NSF_UTIL_H */

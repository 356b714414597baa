/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers the overlayfs test programs share (ovl_volatile_test, ovl_workdir_test and the
 * ovl-volatile-fuzz group): paths, mounts and /proc/self/mounts.
 */
#ifndef OVL_UTIL_H
#define OVL_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PATH_LEN
#define PATH_LEN	256
#endif

static inline int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -EIO;
}

static inline int mkdir_p(const char *path)
{
	char tmp[PATH_LEN];
	char *p;

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static inline int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path) ? -errno : 0;
}

static inline int rm_rf(const char *path)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static inline bool is_mounted(const char *mnt)
{
	char line[1024], dev[PATH_LEN], dir[PATH_LEN];
	bool found = false;
	FILE *f = fopen("/proc/self/mounts", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%255s %255s", dev, dir) == 2 && !strcmp(dir, mnt))
			found = true;
	fclose(f);
	return found;
}

/* Unmount everything stacked on mnt (left behind by a test that was killed, say). */
static inline void umount_all(const char *mnt)
{
	int i;

	for (i = 0; i < 8 && is_mounted(mnt); i++)
		umount2(mnt, MNT_DETACH);
}

/* The options of the topmost mount on mnt, as /proc/self/mounts shows them. */
static inline int mount_options(const char *mnt, char *opts, size_t len)
{
	char line[2048], dev[PATH_LEN], dir[PATH_LEN], type[64], o[1536];
	int ret = -ENOENT;
	FILE *f = fopen("/proc/self/mounts", "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%255s %255s %63s %1535s", dev, dir, type, o) != 4)
			continue;
		if (strcmp(dir, mnt))
			continue;
		snprintf(opts, len, "%s", o);
		ret = 0;
	}
	fclose(f);
	return ret;
}

/* Whether the comma-separated option list has the option word exactly. */
static inline bool has_option(const char *opts, const char *word)
{
	size_t n = strlen(word);
	const char *p = opts;

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == n && !strncmp(p, word, n))
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

/* The first option of the list given that the list shown lacks (into buf), or NULL. */
static inline const char *missing_option(const char *shown, const char *given, char *buf, size_t len)
{
	const char *p = given;

	while (*p) {
		size_t n = strcspn(p, ",");

		snprintf(buf, len, "%.*s", (int)n, p);
		if (!has_option(shown, buf))
			return buf;
		p += n;
		if (*p)
			p++;
	}
	return NULL;
}

/*
 * Become uid/gid id, then root of a user namespace of its own with a mount namespace of its
 * own (the setting of an unprivileged overlay mount).  0 or -errno.
 */
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

#endif /* OVL_UTIL_H */

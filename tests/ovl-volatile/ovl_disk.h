/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the overlayfs "volatile" test and benchmark: find the virtio disk the host attached
 * (by its serial) and read its I/O counters from /sys/block/<dev>/stat.
 */
#ifndef OVL_DISK_H
#define OVL_DISK_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Reads a small file into buf, without trailing newlines and blanks: 0 or -errno. */
static inline int read_str(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

struct disk_stat {
	unsigned long long writes;	/* field 5: write I/Os completed */
	unsigned long long flushes;	/* field 16: flush I/Os completed */
};

/* Finds the virtio disk with the given serial: name (vdX) into dev. */
static inline int find_disk(const char *serial, char *dev, size_t len)
{
	char path[300], s[64];
	struct dirent *de;
	DIR *d = opendir("/sys/block");
	int ret = -ENODEV;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "vd", 2))
			continue;
		snprintf(path, sizeof(path), "/sys/block/%.32s/serial", de->d_name);
		if (read_str(path, s, sizeof(s)) || strcmp(s, serial))
			continue;
		snprintf(dev, len, "%.31s", de->d_name);
		ret = 0;
		break;
	}
	closedir(d);
	return ret;
}

static inline int disk_stat(const char *dev, struct disk_stat *st)
{
	unsigned long long f[17] = { 0 };
	char path[300], buf[512];
	char *p = buf;
	int i, ret;

	snprintf(path, sizeof(path), "/sys/block/%s/stat", dev);
	ret = read_str(path, buf, sizeof(buf));
	if (ret)
		return ret;
	for (i = 0; i < 17; i++) {
		char *end;

		f[i] = strtoull(p, &end, 10);
		if (end == p)
			return -EINVAL;	/* a kernel without the flush fields */
		p = end;
	}
	st->writes = f[4];
	st->flushes = f[15];
	return 0;
}

#endif /* OVL_DISK_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small file helpers shared by the guest test programs (include as
 * "../file_util.h").
 */
#ifndef KTEST_FILE_UTIL_H
#define KTEST_FILE_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/*
 * Write @val to the file at @path (a sysctl, sysfs or cgroup file) in one
 * write(): 0, -errno, or -EIO for a short write.
 */
static inline int ktest_write_str(const char *path, const char *val)
{
	size_t len = strlen(val);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int err;

	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	err = errno;
	close(fd);
	if (n < 0)
		return -err;
	return (size_t)n == len ? 0 : -EIO;
}

#endif

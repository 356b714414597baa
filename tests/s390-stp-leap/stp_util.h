/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers the s390 STP leap-second test programs share (stp_leap_test, stp_leap_fuzz). */
#ifndef STP_UTIL_H
#define STP_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

/* Read a small file into @buf (NUL-terminated): its length, or -errno. */
static inline int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return n;
}

#endif /* STP_UTIL_H */

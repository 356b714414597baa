// SPDX-License-Identifier: GPL-2.0
/*
 * fc_shutdown MOUNTPOINT: the demo's power cut, EXT4_IOC_SHUTDOWN with
 * EXT4_GOING_FLAGS_NOLOGFLUSH (busybox has no xfs_io).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/types.h>

#define EXT4_IOC_SHUTDOWN _IOR('X', 125, __u32)

int main(int argc, char **argv)
{
	__u32 flags = 0x2;	/* EXT4_GOING_FLAGS_NOLOGFLUSH */
	int fd;

	char cmd[4096] = "";
	ssize_t n;

	/* only in a guest booted by the harness (ktest.group= on the command line) */
	fd = open("/proc/cmdline", O_RDONLY);
	n = fd < 0 ? -1 : read(fd, cmd, sizeof(cmd) - 1);
	if (n <= 0 || !strstr(cmd, "ktest.group=")) {
		fprintf(stderr, "fc_shutdown: not in a ktest guest\n");
		return 4;
	}
	close(fd);
	if (argc != 2) {
		fprintf(stderr, "usage: fc_shutdown MOUNTPOINT\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_DIRECTORY);
	if (fd < 0 || ioctl(fd, EXT4_IOC_SHUTDOWN, &flags)) {
		fprintf(stderr, "fc_shutdown %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	return 0;
}

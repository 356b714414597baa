/* SPDX-License-Identifier: GPL-2.0 */
/* bpf(2) helpers shared by the group's programs. */
#ifndef BM_UTIL_H
#define BM_UTIL_H

#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>

static inline long sys_bpf(int cmd, union bpf_attr *attr, unsigned int size)
{
	return syscall(__NR_bpf, cmd, attr, size);
}

/* The id of the map behind @map_fd, or 0. */
static inline unsigned int map_id(int map_fd)
{
	struct bpf_map_info info;
	union bpf_attr a;

	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = map_fd;
	a.info.info_len = sizeof(info);
	a.info.info = (unsigned long)&info;
	return sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) ? 0 : info.id;
}

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/* bpf(2) helpers shared by the group's programs. */
#ifndef BM_UTIL_H
#define BM_UTIL_H

#include <errno.h>
#include <stdbool.h>
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

/*
 * The program's info into @info, with up to @max of its map ids in @ids
 * (info->nr_map_ids: how many it has): 0 or -errno.
 */
static inline int prog_info_ids(int prog_fd, struct bpf_prog_info *info, unsigned int *ids,
				unsigned int max)
{
	union bpf_attr a;

	memset(info, 0, sizeof(*info));
	info->nr_map_ids = max;
	info->map_ids = (unsigned long)ids;
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = prog_fd;
	a.info.info_len = sizeof(*info);
	a.info.info = (unsigned long)info;
	return sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) ? -errno : 0;
}

/* Is a map with this id still there?  (needs CAP_SYS_ADMIN) */
static inline bool map_alive(unsigned int id)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.map_id = id;
	fd = sys_bpf(BPF_MAP_GET_FD_BY_ID, &a, sizeof(a));
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

#endif

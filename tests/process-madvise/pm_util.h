/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the process_madvise(2) test and demo: raw system calls, and reading another
 * process's memory state from /proc (smaps, pagemap, kpageflags).
 */
#ifndef PM_UTIL_H
#define PM_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/capability.h>

/* Numbers from the uapi headers the programs are built against; the fallbacks are x86_64's. */
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_process_madvise
#define __NR_process_madvise 440
#endif

#ifndef MADV_COLD
#define MADV_COLD 20
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

/* include/uapi/linux/uio.h; not included because it clashes with <sys/uio.h>. */
#define PM_UIO_MAXIOV 1024
/* MAX_RW_COUNT (include/linux/fs.h): the most bytes one read/write-like call handles. */
#define PM_MAX_RW_COUNT (INT32_MAX & ~(4096L - 1))

/* /proc/PID/pagemap entry bits (Documentation/admin-guide/mm/pagemap.rst) */
#define PM_PRESENT (1ULL << 63)
#define PM_SWAPPED (1ULL << 62)
#define PM_PFN_MASK ((1ULL << 55) - 1)

static inline int sys_pidfd_open(pid_t pid, unsigned int flags)
{
	return syscall(__NR_pidfd_open, pid, flags);
}

static inline long sys_process_madvise(int pidfd, const struct iovec *iov, size_t vlen,
				       int advice, unsigned int flags)
{
	return syscall(__NR_process_madvise, pidfd, iov, vlen, advice, flags);
}

/*
 * The value in kB of FIELD ("Rss", "Swap", "Referenced", "AnonHugePages", ...) of the VMA of
 * PID that contains ADDR, from /proc/PID/smaps; -1 if there is no such VMA or field.
 */
static inline long smaps_kb(pid_t pid, uint64_t addr, const char *field)
{
	char path[64], *line = NULL;
	size_t cap = 0, flen = strlen(field);
	long val = -1;
	bool in_vma = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		unsigned long start, end;
		size_t hex = strspn(line, "0123456789abcdef");

		if (hex && line[hex] == '-' && sscanf(line, "%lx-%lx", &start, &end) == 2) {
			if (in_vma)
				break;
			in_vma = start <= addr && addr < end;
			continue;
		}
		if (in_vma && !strncmp(line, field, flen) && line[flen] == ':') {
			val = strtol(line + flen + 1, NULL, 10);
			break;
		}
	}
	free(line);
	fclose(f);
	return val;
}

/* N pagemap entries of PID from ADDR into ENT; 0 on success, -1 with errno on failure. */
static inline int pagemap_read(pid_t pid, uint64_t addr, size_t n, uint64_t *ent)
{
	long ps = sysconf(_SC_PAGESIZE);
	char path[64];
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	got = pread(fd, ent, n * sizeof(*ent), (addr / ps) * sizeof(*ent));
	close(fd);
	if (got != (ssize_t)(n * sizeof(*ent))) {
		if (got >= 0)
			errno = EIO;
		return -1;
	}
	return 0;
}

/* How many of the N pages of PID from ADDR have all of BITS set in their pagemap entry; -1. */
static inline long pages_with(pid_t pid, uint64_t addr, size_t n, uint64_t bits)
{
	uint64_t *ent = calloc(n, sizeof(*ent));
	long count = 0;
	size_t i;

	if (!ent)
		return -1;
	if (pagemap_read(pid, addr, n, ent)) {
		free(ent);
		return -1;
	}
	for (i = 0; i < n; i++)
		count += (ent[i] & bits) == bits;
	free(ent);
	return count;
}

/* The guest's unprivileged user and group "ktest". */
#define PM_UNPRIV_ID 1000

/* Who calls process_madvise() in a test: the credentials pm_set_creds() switches to. */
enum pm_creds {
	PM_ROOT,		/* root, every capability: nothing to change */
	PM_USER,		/* uid/gid 1000, no capability */
	PM_USER_NICE,		/* uid/gid 1000, CAP_SYS_NICE only */
	PM_ROOT_NOT_NICE,	/* root with every capability but CAP_SYS_NICE */
	PM_CREDS_KINDS,
};

/* Switch the calling process (a child made for it: this cannot be undone) to CREDS; 0 or -1. */
static inline int pm_set_creds(enum pm_creds creds)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	if (creds == PM_ROOT)
		return 0;
	if (creds != PM_ROOT_NOT_NICE) {
		if (creds == PM_USER_NICE && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0))
			return -1;
		if (setgroups(0, NULL) || setresgid(PM_UNPRIV_ID, PM_UNPRIV_ID, PM_UNPRIV_ID) ||
		    setresuid(PM_UNPRIV_ID, PM_UNPRIV_ID, PM_UNPRIV_ID))
			return -1;
		if (creds == PM_USER)
			return 0;
	}
	if (syscall(SYS_capget, &hdr, data))
		return -1;
	if (creds == PM_USER_NICE) {
		memset(data, 0, sizeof(data));
		data[0].effective = data[0].permitted = 1U << CAP_SYS_NICE;
	} else {
		data[0].effective &= ~(1U << CAP_SYS_NICE);
		data[0].permitted &= ~(1U << CAP_SYS_NICE);
	}
	return syscall(SYS_capset, &hdr, data);
}

#endif /* PM_UTIL_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the zonefs test programs: zoned null_blk devices made through
 * configfs, formatting with ./mkzonefs, mounting, the zone report and the zonefs
 * sysfs counters (/sys/fs/zonefs/<dev>/).
 */
#ifndef ZONEFS_UTIL_H
#define ZONEFS_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/blkzoned.h>

#define NULLB_CONFIGFS	"/sys/kernel/config/nullb"

static int zt_kmsg_fd = -1;

/*
 * SKIP() from a FIXTURE_SETUP: 6.1's harness would still run the test body after it (a
 * skip leaves _metadata->passed set), so end the test's child with the skip status here.
 */
#define ZT_SETUP_SKIP(fmt, ...) do {					\
	SKIP(fflush(NULL); _exit(255), fmt, ##__VA_ARGS__);		\
} while (0)

struct nullb_cfg {
	unsigned int size_mb;		/* device size */
	unsigned int zone_size_mb;	/* power of two */
	unsigned int zone_capacity_mb;	/* 0: the zone size */
	unsigned int zone_nr_conv;
	unsigned int zone_max_open;	/* 0: no limit */
	unsigned int zone_max_active;	/* 0: no limit */
	unsigned int blocksize;		/* 0: null_blk's default (512) */
};

struct nullb {
	char name[32];
	char dev[64];		/* /dev/<name>: null_blk names a configfs disk after its dir */
	char id[32];		/* <name>: the zonefs s_id, its sysfs directory name */
};

static inline int zt_write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	return 0;
}

static inline int zt_read_str(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return 0;
}

static inline int zt_attr(const char *name, const char *attr, unsigned long val)
{
	char path[PATH_MAX], v[32];

	snprintf(path, sizeof(path), NULLB_CONFIGFS "/%s/%s", name, attr);
	snprintf(v, sizeof(v), "%lu", val);
	return zt_write_str(path, v);
}

static inline int zt_configfs(void)
{
	struct stat st;

	if (!stat(NULLB_CONFIGFS, &st))
		return 0;
	if (mount("configfs", "/sys/kernel/config", "configfs", 0, NULL) && errno != EBUSY)
		return -errno;
	return stat(NULLB_CONFIGFS, &st) ? -errno : 0;
}

/* Power off and remove a configfs null_blk device (nothing may use it). */
static inline void nullb_destroy(struct nullb *nb)
{
	char path[PATH_MAX];

	if (!nb->name[0])
		return;
	zt_attr(nb->name, "power", 0);
	snprintf(path, sizeof(path), NULLB_CONFIGFS "/%s", nb->name);
	rmdir(path);
	nb->name[0] = 0;
}

/* Make a memory-backed zoned null_blk device; returns 0 or -errno. */
static inline int nullb_create(struct nullb *nb, const char *name, const struct nullb_cfg *c)
{
	char path[PATH_MAX];
	struct stat st;
	int ret, i;

	memset(nb, 0, sizeof(*nb));
	ret = zt_configfs();
	if (ret)
		return ret;
	snprintf(path, sizeof(path), NULLB_CONFIGFS "/%s", name);
	if (!stat(path, &st)) {
		/* A leftover of an earlier run of the same name. */
		zt_attr(name, "power", 0);
		rmdir(path);
	}
	if (mkdir(path, 0755))
		return -errno;
	snprintf(nb->name, sizeof(nb->name), "%s", name);
	if ((ret = zt_attr(name, "memory_backed", 1)) ||
	    (c->blocksize && (ret = zt_attr(name, "blocksize", c->blocksize))) ||
	    (ret = zt_attr(name, "size", c->size_mb)) ||
	    (ret = zt_attr(name, "zoned", 1)) ||
	    (ret = zt_attr(name, "zone_size", c->zone_size_mb)) ||
	    (c->zone_capacity_mb &&
	     (ret = zt_attr(name, "zone_capacity", c->zone_capacity_mb))) ||
	    (ret = zt_attr(name, "zone_nr_conv", c->zone_nr_conv)) ||
	    (ret = zt_attr(name, "zone_max_open", c->zone_max_open)) ||
	    (ret = zt_attr(name, "zone_max_active", c->zone_max_active)) ||
	    (ret = zt_attr(name, "power", 1))) {
		nullb_destroy(nb);
		return ret;
	}
	snprintf(nb->id, sizeof(nb->id), "%s", name);
	snprintf(nb->dev, sizeof(nb->dev), "/dev/%s", name);
	/* devtmpfs makes the node; give it a moment. */
	for (i = 0; i < 200 && stat(nb->dev, &st); i++)
		usleep(10000);
	if (stat(nb->dev, &st)) {
		ret = -errno;
		nullb_destroy(nb);
		return ret;
	}
	return 0;
}

/* Run ./mkzonefs (the group's own formatter) with extra arguments; returns its status. */
static inline int zt_mkzonefs(const char *dev, const char *fmt, ...)
{
	char cmd[512], args[256] = "";
	va_list ap;
	int st;

	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(args, sizeof(args), fmt, ap);
		va_end(ap);
	}
	snprintf(cmd, sizeof(cmd), "./mkzonefs -q %s %s", args, dev);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/*
 * Unmount @mnt at the end of a test case (the harness' forked child): a failed assertion
 * can leave files open, which would keep the file system busy, so close every descriptor
 * the case may have left first.
 */
static inline void zt_cleanup_mount(const char *mnt)
{
	int fd;

	for (fd = 3; fd < 1024; fd++)
		close(fd);
	zt_kmsg_fd = -1;
	umount(mnt);
}

static inline int zt_mount(const char *dev, const char *mnt, unsigned long flags,
			   const char *opts)
{
	mkdir(mnt, 0755);
	return mount(dev, mnt, "zonefs", flags, opts) ? -errno : 0;
}

/* The zonefs sysfs counters: nr_wro_seq_files, nr_active_seq_files, max_... */
static inline long zt_sysfs(const struct nullb *nb, const char *attr)
{
	char path[PATH_MAX], buf[32];

	snprintf(path, sizeof(path), "/sys/fs/zonefs/%s/%s", nb->id, attr);
	if (zt_read_str(path, buf, sizeof(buf)))
		return -1;
	return strtol(buf, NULL, 10);
}

/* Report one zone (the zone holding @sector) of a block device; 0 or -errno. */
static inline int zt_report_zone(const char *dev, uint64_t sector, struct blk_zone *zone)
{
	struct {
		struct blk_zone_report rep;
		struct blk_zone z;
	} r;
	int fd, ret = 0;

	fd = open(dev, O_RDONLY);
	if (fd < 0)
		return -errno;
	memset(&r, 0, sizeof(r));
	r.rep.sector = sector;
	r.rep.nr_zones = 1;
	if (ioctl(fd, BLKREPORTZONE, &r) < 0)
		ret = -errno;
	else if (r.rep.nr_zones != 1)
		ret = -ENODATA;
	else
		*zone = r.z;
	close(fd);
	return ret;
}

/* Zone number @n of a device with zones of @zone_sectors sectors. */
static inline int zt_report_zone_nr(const char *dev, unsigned int n, struct blk_zone *zone)
{
	unsigned int zs;
	int fd;

	fd = open(dev, O_RDONLY);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, BLKGETZONESZ, &zs) < 0) {
		close(fd);
		return -errno;
	}
	close(fd);
	return zt_report_zone(dev, (uint64_t)n * zs, zone);
}

/* Lines of the kernel log containing @needle, since the last zt_kmsg_mark(). */

static inline void zt_kmsg_mark(void)
{
	if (zt_kmsg_fd >= 0)
		close(zt_kmsg_fd);
	zt_kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (zt_kmsg_fd >= 0)
		lseek(zt_kmsg_fd, 0, SEEK_END);
}

/* Count the records containing @needle (or @needle2, if given); @echo prints them all. */
static inline int zt_kmsg_grep2(const char *needle, const char *needle2, int echo)
{
	char rec[1024];
	int found = 0;
	ssize_t n;

	if (zt_kmsg_fd < 0)
		return -1;
	while ((n = read(zt_kmsg_fd, rec, sizeof(rec) - 1)) > 0) {
		char *text, *nl;

		rec[n] = 0;
		text = strchr(rec, ';');
		text = text ? text + 1 : rec;
		nl = strchr(text, '\n');
		if (nl)
			*nl = 0;
		if (echo)
			printf("# kmsg: %s\n", text);
		if (strstr(text, needle) || (needle2 && strstr(text, needle2)))
			found++;
	}
	return found;
}

static inline int zt_kmsg_grep(const char *needle, int echo)
{
	return zt_kmsg_grep2(needle, NULL, echo);
}

#endif

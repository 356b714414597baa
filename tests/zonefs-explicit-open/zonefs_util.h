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
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/aio_abi.h>
#include <linux/blkzoned.h>
#include "../file_util.h"

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
	return ktest_write_str(path, v);
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

/*
 * Zoned devices of any driver (null_blk made here, or an NVMe ZNS namespace QEMU gives the
 * guest): the geometry zonefs derives its files from, read back from the device.
 */
struct zdev {
	struct nullb nb;	/* dev and id; nb.name is empty for a device not made here */
	unsigned int nr_zones;
	unsigned int first_seq;	/* zone number of seq/0 (zone 0 is the super block) */
	unsigned int nr_seq;	/* sequential zone files */
	unsigned int nr_cnv;	/* conventional zones after zone 0 (cnv/ files) */
	uint64_t zone_sectors;
	off_t zone_bytes;
	off_t cap_bytes;	/* zone capacity (the size of a full file) */
	unsigned int max_open;	/* queue/max_open_zones, 0: no limit */
	unsigned int max_active;	/* queue/max_active_zones, 0: no limit */
};

static inline long zt_queue_attr(const char *id, const char *attr)
{
	char path[PATH_MAX], buf[64];

	snprintf(path, sizeof(path), "/sys/block/%s/queue/%s", id, attr);
	if (zt_read_str(path, buf, sizeof(buf)))
		return -1;
	return strtol(buf, NULL, 10);
}

/* Report up to @nr zones from zone 0; returns the number reported or -errno. */
static inline int zt_report_zones(const char *dev, struct blk_zone *zones, unsigned int nr)
{
	struct blk_zone_report *rep;
	size_t sz = sizeof(*rep) + nr * sizeof(struct blk_zone);
	int fd, ret;

	rep = calloc(1, sz);
	if (!rep)
		return -ENOMEM;
	fd = open(dev, O_RDONLY);
	if (fd < 0) {
		free(rep);
		return -errno;
	}
	rep->sector = 0;
	rep->nr_zones = nr;
	if (ioctl(fd, BLKREPORTZONE, rep) < 0) {
		ret = -errno;
	} else {
		ret = rep->nr_zones;
		memcpy(zones, rep->zones, ret * sizeof(struct blk_zone));
	}
	close(fd);
	free(rep);
	return ret;
}

/* Fill in @d's geometry from its device (d->nb.dev and d->nb.id set); 0 or -errno. */
static inline int zdev_probe(struct zdev *d)
{
	struct blk_zone *zones;
	unsigned int zs, nz, i;
	int fd, ret;

	fd = open(d->nb.dev, O_RDONLY);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, BLKGETZONESZ, &zs) < 0 || ioctl(fd, BLKGETNRZONES, &nz) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	close(fd);
	if (!zs || nz < 2)
		return -ENOTTY;
	zones = calloc(nz, sizeof(*zones));
	if (!zones)
		return -ENOMEM;
	ret = zt_report_zones(d->nb.dev, zones, nz);
	if (ret != (int)nz) {
		free(zones);
		return ret < 0 ? ret : -ENODATA;
	}
	d->nr_zones = nz;
	d->zone_sectors = zs;
	d->zone_bytes = (off_t)zs << 9;
	d->nr_cnv = d->nr_seq = d->first_seq = 0;
	d->cap_bytes = 0;
	for (i = 1; i < nz; i++) {
		if (zones[i].type == BLK_ZONE_TYPE_CONVENTIONAL) {
			d->nr_cnv++;
			continue;
		}
		if (!d->nr_seq++) {
			d->first_seq = i;
			d->cap_bytes = (off_t)zones[i].capacity << 9;
			if (!zones[i].capacity)	/* no capacity reported: the zone size */
				d->cap_bytes = d->zone_bytes;
		}
	}
	free(zones);
	d->max_open = zt_queue_attr(d->nb.id, "max_open_zones");
	d->max_active = zt_queue_attr(d->nb.id, "max_active_zones");
	return d->nr_seq ? 0 : -ENODEV;
}

/* The zone of seq/@n. */
static inline int zdev_seq_zone(const struct zdev *d, unsigned int n, struct blk_zone *z)
{
	return zt_report_zone(d->nb.dev, (uint64_t)(d->first_seq + n) * d->zone_sectors, z);
}

/* One letter per zone condition, for logs and fuzz observations. */
static inline char zt_cond_char(unsigned int cond)
{
	switch (cond) {
	case BLK_ZONE_COND_NOT_WP:	return 'n';
	case BLK_ZONE_COND_EMPTY:	return 'E';
	case BLK_ZONE_COND_IMP_OPEN:	return 'I';
	case BLK_ZONE_COND_EXP_OPEN:	return 'X';
	case BLK_ZONE_COND_CLOSED:	return 'C';
	case BLK_ZONE_COND_READONLY:	return 'R';
	case BLK_ZONE_COND_FULL:	return 'F';
	case BLK_ZONE_COND_OFFLINE:	return 'O';
	default:			return '?';
	}
}

static inline const char *zt_cond_name(unsigned int cond)
{
	switch (cond) {
	case BLK_ZONE_COND_NOT_WP:	return "NOT_WP";
	case BLK_ZONE_COND_EMPTY:	return "EMPTY";
	case BLK_ZONE_COND_IMP_OPEN:	return "IMP_OPEN";
	case BLK_ZONE_COND_EXP_OPEN:	return "EXP_OPEN";
	case BLK_ZONE_COND_CLOSED:	return "CLOSED";
	case BLK_ZONE_COND_READONLY:	return "READONLY";
	case BLK_ZONE_COND_FULL:	return "FULL";
	case BLK_ZONE_COND_OFFLINE:	return "OFFLINE";
	default:			return "?";
	}
}

/* Zones that hold an active resource of the device: open (either way) or closed. */
static inline int zt_cond_active(unsigned int cond)
{
	return cond == BLK_ZONE_COND_IMP_OPEN || cond == BLK_ZONE_COND_EXP_OPEN ||
	       cond == BLK_ZONE_COND_CLOSED;
}

/*
 * The conditions of every sequential file's zone, one letter each (@out: nr_seq + 1
 * bytes), and how many are active and explicitly open; -errno on failure.
 */
static inline int zdev_conds(const struct zdev *d, char *out, int *active, int *exp_open)
{
	struct blk_zone zones[256];
	unsigned int i, n = d->first_seq + d->nr_seq;
	int ret;

	if (n > 256)
		return -E2BIG;
	ret = zt_report_zones(d->nb.dev, zones, n);
	if (ret < 0)
		return ret;
	if (ret != (int)n)
		return -ENODATA;
	if (active)
		*active = 0;
	if (exp_open)
		*exp_open = 0;
	for (i = 0; i < d->nr_seq; i++) {
		unsigned int c = zones[d->first_seq + i].cond;

		if (out)
			out[i] = zt_cond_char(c);
		if (active)
			*active += zt_cond_active(c);
		if (exp_open)
			*exp_open += c == BLK_ZONE_COND_EXP_OPEN;
	}
	if (out)
		out[d->nr_seq] = 0;
	return 0;
}

/* An NVMe namespace QEMU attached (tests/zonefs-explicit-open/host-setup): 0 or -errno. */
static inline int zdev_nvme(struct zdev *d, const char *id)
{
	char path[PATH_MAX], buf[64];
	struct stat st;

	memset(d, 0, sizeof(*d));
	snprintf(d->nb.dev, sizeof(d->nb.dev), "/dev/%s", id);
	snprintf(d->nb.id, sizeof(d->nb.id), "%s", id);
	if (stat(d->nb.dev, &st))
		return -errno;
	snprintf(path, sizeof(path), "/sys/block/%s/queue/zoned", id);
	if (zt_read_str(path, buf, sizeof(buf)) || strcmp(buf, "host-managed"))
		return -ENOTTY;
	return zdev_probe(d);
}

/* A zoned null_blk device made here, with its geometry read back. */
static inline int zdev_nullb(struct zdev *d, const char *name, const struct nullb_cfg *c)
{
	int ret;

	memset(d, 0, sizeof(*d));
	ret = nullb_create(&d->nb, name, c);
	if (ret)
		return ret;
	ret = zdev_probe(d);
	if (ret)
		nullb_destroy(&d->nb);
	return ret;
}

/*
 * A zone management ioctl (BLKOPENZONE, BLKCLOSEZONE, BLKFINISHZONE, BLKRESETZONE) on the
 * device, past the file system, over the zone of seq/@n.
 */
static inline int zdev_zone_op(const struct zdev *d, unsigned long op, unsigned int n)
{
	struct blk_zone_range r = {
		.sector = (uint64_t)(d->first_seq + n) * d->zone_sectors,
		.nr_sectors = d->zone_sectors,
	};
	int fd, ret = 0;

	fd = open(d->nb.dev, O_RDWR);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, op, &r) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * Keep the calling process on CPU 0 (@cpu < 0: on every CPU again). Programs that check the
 * zonefs counters right after closing a file they wrote with io_submit need it: the write's
 * completion runs in a kworker that wakes io_getevents() and only then drops the request's
 * reference to the file; on another CPU, close(2) can come in between, and the last
 * reference, dropped by the kworker, then releases the file (zonefs's write-close
 * accounting) a jiffy later, from delayed_fput. On the CPU that submitted, the kworker runs
 * to its end first (CONFIG_PREEMPT_NONE): the close is the last reference and the release
 * is done when close(2) returns.
 */
static inline int zt_pin_cpu(int cpu)
{
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	if (cpu >= 0)
		CPU_SET(cpu, &set);
	else
		for (i = 0; i < CPU_SETSIZE; i++)
			CPU_SET(i, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* Asynchronous direct write (io_submit + io_getevents): bytes written or -errno. */
static inline long zt_awrite(int fd, const void *buf, size_t len, off_t off)
{
	static aio_context_t ctx;
	static pid_t ctx_pid;
	struct iocb cb, *cbp = &cb;
	struct io_event ev;
	long r;

	/* A context is the process's own: a forked test case makes its own. */
	if (!ctx || ctx_pid != getpid()) {
		ctx = 0;
		if (syscall(__NR_io_setup, 8, &ctx) < 0)
			return -errno;
		ctx_pid = getpid();
	}
	memset(&cb, 0, sizeof(cb));
	cb.aio_fildes = fd;
	cb.aio_lio_opcode = IOCB_CMD_PWRITE;
	cb.aio_buf = (uintptr_t)buf;
	cb.aio_nbytes = len;
	cb.aio_offset = off;
	r = syscall(__NR_io_submit, ctx, 1, &cbp);
	if (r != 1)
		return r < 0 ? -errno : -EAGAIN;
	do {
		r = syscall(__NR_io_getevents, ctx, 1, 1, &ev, NULL);
	} while (r < 0 && errno == EINTR);
	if (r != 1)
		return r < 0 ? -errno : -EIO;
	return ev.res;
}

/* Block device I/O statistics (/sys/block/<id>/stat): completed reads and writes. */
static inline int zt_blk_stat(const char *id, unsigned long long *rd_ios,
			      unsigned long long *wr_ios, unsigned long long *wr_sectors)
{
	char path[PATH_MAX], buf[512];
	unsigned long long v[11];

	snprintf(path, sizeof(path), "/sys/block/%s/stat", id);
	if (zt_read_str(path, buf, sizeof(buf)))
		return -1;
	if (sscanf(buf, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
		   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9],
		   &v[10]) != 11)
		return -1;
	if (rd_ios)
		*rd_ios = v[0];
	if (wr_ios)
		*wr_ios = v[4];
	if (wr_sectors)
		*wr_sectors = v[6];
	return 0;
}

#endif

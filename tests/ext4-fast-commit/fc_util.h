/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the ext4-fast-commit group: file-backed loop devices on the guest's tmpfs, mke2fs
 * templates, the power cut (EXT4_IOC_SHUTDOWN with EXT4_GOING_FLAGS_NOLOGFLUSH, then a copy of
 * the image taken before the unmount), e2fsprogs run with fork/exec, /proc/fs/ext4/<dev>/fc_info
 * and /sys/block/<dev>/stat, and a manifest of a tree (what two recoveries must agree on).
 */
#ifndef FC_UTIL_H
#define FC_UTIL_H

#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#ifndef EXT4_IOC_SHUTDOWN
#define EXT4_IOC_SHUTDOWN _IOR('X', 125, __u32)
#endif
#define EXT4_GOING_FLAGS_DEFAULT	0x0
#define EXT4_GOING_FLAGS_LOGFLUSH	0x1
#define EXT4_GOING_FLAGS_NOLOGFLUSH	0x2
#ifndef EXT4_IOC_RESIZE_FS
#define EXT4_IOC_RESIZE_FS _IOW('f', 16, __u64)
#endif
#ifndef EXT4_IOC_SWAP_BOOT
#define EXT4_IOC_SWAP_BOOT _IO('f', 17)
#endif

#define FC_DIR		"/tmp/ext4fc"
#define FC_MNT		FC_DIR "/mnt"
#define FC_IMG_SIZE	(64ULL << 20)
#define FC_NREASONS	10

static const char * const fc_reason_names[FC_NREASONS] = {
	"Extended attributes changed", "Cross rename", "Journal flag changed",
	"Insufficient memory", "Swap boot", "Resize", "Dir renamed", "Falloc range op",
	"Data journalling", "Encrypted filename",
};

/* ---------------------------------------------------------------- small things */

static inline ssize_t read_small(const char *path, char *buf, size_t size);

/*
 * These programs mount, shut down, freeze and resize file systems: they run only in a guest
 * booted by the harness (ktest.group= on its command line), never on a host by mistake.
 */
__attribute__((constructor)) static void fc_guest_only(void)
{
	char buf[4096];

	if (read_small("/proc/cmdline", buf, sizeof(buf)) < 0 || !strstr(buf, "ktest.group=")) {
		printf("1..0 # SKIP not in a ktest guest (no ktest.group= on the kernel command line)\n");
		exit(4);
	}
}

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* The byte a file of pattern SEED holds at offset OFF (0 is never used as a seed). */
static inline uint8_t pat_byte(uint32_t seed, uint64_t off)
{
	return (uint8_t)(mix64(((uint64_t)seed << 40) ^ (off >> 3)) >> ((off & 7) * 8));
}

static inline void pat_fill(void *buf, size_t len, uint32_t seed, uint64_t off)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = seed ? pat_byte(seed, off + i) : 0;
}

static inline uint64_t fnv64(uint64_t h, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}
#define FNV_INIT 0xcbf29ce484222325ULL

static inline int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -EIO;
}

/* Read a whole (small) file into BUF; returns its length or -errno. */
static inline ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, t = 0;

	if (fd < 0)
		return -errno;
	while (t < (ssize_t)size - 1 && (n = read(fd, buf + t, size - 1 - t)) > 0)
		t += n;
	buf[t] = 0;
	close(fd);
	return t;
}

/* Write LEN bytes of pattern SEED (0: zeros) at OFF of an open file. */
static inline int pat_pwrite(int fd, uint32_t seed, off_t off, size_t len)
{
	char *buf = malloc(len);
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	pat_fill(buf, len, seed, off);
	n = pwrite(fd, buf, len, off);
	free(buf);
	return n == (ssize_t)len ? 0 : -EIO;
}

static inline int pat_create(const char *path, mode_t mode, uint32_t seed, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	int ret;

	if (fd < 0)
		return -errno;
	ret = len ? pat_pwrite(fd, seed, 0, len) : 0;
	close(fd);
	return ret;
}

/*
 * Expected contents of a file: up to 8 segments, each LEN bytes of pattern SEED taken at
 * pattern offset SRC (0 seed: zeros).  The file must be exactly their total length.
 */
struct seg { uint32_t seed; uint64_t src, len; };
struct layout { int n; struct seg s[8]; };

/* Compare a file with a layout; a message in WHY on a mismatch. */
static inline int check_layout(const char *path, const struct layout *l, char *why, size_t wsz)
{
	uint64_t total = 0, off = 0;
	char buf[4096];
	struct stat st;
	int fd, i;

	for (i = 0; i < l->n; i++)
		total += l->s[i].len;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, wsz, "%s: open: %s", path, strerror(errno));
		return -1;
	}
	fstat(fd, &st);
	if ((uint64_t)st.st_size != total) {
		snprintf(why, wsz, "%s: size %lld, want %llu", path, (long long)st.st_size,
			 (unsigned long long)total);
		close(fd);
		return -1;
	}
	for (i = 0; i < l->n; i++) {
		uint64_t done = 0;

		while (done < l->s[i].len) {
			size_t chunk = l->s[i].len - done > sizeof(buf) ? sizeof(buf) : l->s[i].len - done;
			ssize_t n = pread(fd, buf, chunk, off);

			if (n != (ssize_t)chunk) {
				snprintf(why, wsz, "%s: short read at %llu", path,
					 (unsigned long long)off);
				close(fd);
				return -1;
			}
			for (size_t k = 0; k < chunk; k++) {
				uint8_t want = l->s[i].seed ?
					pat_byte(l->s[i].seed, l->s[i].src + done + k) : 0;

				if ((uint8_t)buf[k] != want) {
					snprintf(why, wsz, "%s: byte %llu is 0x%02x, want 0x%02x (%s)",
						 path, (unsigned long long)(off + k),
						 (uint8_t)buf[k], want,
						 l->s[i].seed ? "data" : "zero");
					close(fd);
					return -1;
				}
			}
			done += chunk;
			off += chunk;
		}
	}
	close(fd);
	return 0;
}

/* ---------------------------------------------------------------- commands */

/*
 * Run ARGV (searched in PATH plus /sbin and /usr/sbin) with stdout and stderr captured into
 * OUT (may be NULL).  Returns the exit status, 128 + signal, or -errno.
 */
static inline int run_argv(char *out, size_t outsz, char *const argv[])
{
	int pfd[2], status;
	pid_t pid;
	size_t len = 0;

	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		setenv("PATH", "/usr/sbin:/usr/bin:/sbin:/bin", 1);
		setenv("LC_ALL", "C", 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		char tmp[4096];
		ssize_t n = read(pfd[0], tmp, sizeof(tmp));

		if (n <= 0)
			break;
		if (out && len + 1 < outsz) {
			size_t c = (size_t)n < outsz - 1 - len ? (size_t)n : outsz - 1 - len;

			memcpy(out + len, tmp, c);
			len += c;
		}
	}
	if (out && outsz)
		out[len] = 0;
	close(pfd[0]);
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

#define run_cmd(out, outsz, ...) ({ char *const __a[] = { __VA_ARGS__, NULL }; \
	run_argv(out, outsz, __a); })

/* Print a command's output as KTAP diagnostics. */
static inline void diag_lines(const char *prefix, const char *text)
{
	const char *p = text;

	while (p && *p) {
		const char *e = strchr(p, '\n');
		int n = e ? (int)(e - p) : (int)strlen(p);

		if (n)
			printf("# %s%.*s\n", prefix, n, p);
		p = e ? e + 1 : NULL;
	}
	fflush(stdout);
}

/* ---------------------------------------------------------------- images and loops */

/* Copy SRC to DST keeping holes (SEEK_DATA/SEEK_HOLE), DST's size set to SRC's. */
static inline int sparse_copy(const char *src, const char *dst)
{
	int in = open(src, O_RDONLY | O_CLOEXEC), out;
	static char buf[1 << 20];
	off_t data, hole, size;
	int ret = 0;

	if (in < 0)
		return -errno;
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0) {
		ret = -errno;
		close(in);
		return ret;
	}
	size = lseek(in, 0, SEEK_END);
	for (data = 0; data < size; data = hole) {
		data = lseek(in, data, SEEK_DATA);
		if (data < 0)
			break;
		hole = lseek(in, data, SEEK_HOLE);
		while (data < hole) {
			size_t c = hole - data > (off_t)sizeof(buf) ? sizeof(buf) : hole - data;
			ssize_t n = pread(in, buf, c, data);

			if (n <= 0 || pwrite(out, buf, n, data) != n) {
				ret = -EIO;
				goto done;
			}
			data += n;
		}
	}
	if (ftruncate(out, size))
		ret = -errno;
done:
	close(in);
	close(out);
	return ret;
}

/* Attach IMG to a free loop device; returns its number or -errno. */
static inline int loop_attach(const char *img)
{
	struct loop_config cfg;
	char dev[64];
	int ctl, nr, fd, ffd, tries;

	ffd = open(img, O_RDWR | O_CLOEXEC);
	if (ffd < 0)
		return -errno;
	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		close(ffd);
		return -errno;
	}
	for (tries = 0; tries < 20; tries++) {
		nr = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (nr < 0)
			break;
		snprintf(dev, sizeof(dev), "/dev/loop%d", nr);
		fd = open(dev, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			nr = -errno;
			break;
		}
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = ffd;
		if (!ioctl(fd, LOOP_CONFIGURE, &cfg)) {
			close(fd);
			close(ctl);
			close(ffd);
			return nr;
		}
		nr = -errno;
		close(fd);
		if (nr != -EBUSY)
			break;
	}
	close(ctl);
	close(ffd);
	return nr;
}

static inline int loop_detach(int nr)
{
	char dev[64];
	int fd, i, ret = 0;

	if (nr < 0)
		return 0;
	snprintf(dev, sizeof(dev), "/dev/loop%d", nr);
	fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (i = 0; i < 50; i++) {
		ret = ioctl(fd, LOOP_CLR_FD) ? -errno : 0;
		if (ret != -EBUSY)
			break;
		usleep(100000);
	}
	close(fd);
	return ret;
}

/* write I/Os, write sectors and flush requests the loop device completed */
struct dstat { unsigned long long w_ios, w_sect, flush; };

static inline int dstat_read(int nr, struct dstat *d)
{
	unsigned long long v[17] = { 0 };
	char path[64], buf[512];
	char *p = buf;
	int i;

	memset(d, 0, sizeof(*d));
	snprintf(path, sizeof(path), "/sys/block/loop%d/stat", nr);
	if (read_small(path, buf, sizeof(buf)) < 0)
		return -1;
	for (i = 0; i < 17; i++) {
		char *e;

		v[i] = strtoull(p, &e, 10);
		if (e == p)
			return -1;
		p = e;
	}
	d->w_ios = v[4];
	d->w_sect = v[6];
	d->flush = v[15];
	return 0;
}

static inline struct dstat dstat_sub(struct dstat a, struct dstat b)
{
	return (struct dstat){ a.w_ios - b.w_ios, a.w_sect - b.w_sect, a.flush - b.flush };
}

/*
 * A template image made once per set of mke2fs options (kept in FC_DIR), so that each test
 * copies a few MiB instead of running mke2fs (4 s under TCG, most of it in mke2fs itself).
 * FEATURES is mke2fs's -O list, optionally followed by " -J <journal options>".
 */
static inline int make_template(char *path, size_t psz, const char *features, int bs,
				unsigned long long size)
{
	char out[4096], bsz[16], feat[256], key[128], *jopt;
	struct stat st;
	int fd, rc;

	mkdir(FC_DIR, 0755);
	snprintf(key, sizeof(key), "%s-%d-%llu", features, bs, size >> 20);
	for (char *k = key; *k; k++)
		if (*k == ',' || *k == '^' || *k == ' ' || *k == '=')
			*k = '_';
	snprintf(path, psz, FC_DIR "/tpl-%s.img", key);
	if (!stat(path, &st))
		return 0;
	fd = open(FC_DIR "/tpl.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, size))
		return -errno;
	close(fd);
	snprintf(bsz, sizeof(bsz), "%d", bs);
	snprintf(feat, sizeof(feat), "%s", features);
	jopt = strstr(feat, " -J ");
	if (jopt) {
		*jopt = 0;
		jopt += 4;
		rc = run_cmd(out, sizeof(out), "mke2fs", "-q", "-F", "-t", "ext4", "-b", bsz,
			     "-O", feat, "-J", jopt, "-E", "lazy_itable_init=0,nodiscard",
			     FC_DIR "/tpl.tmp");
	} else {
		rc = run_cmd(out, sizeof(out), "mke2fs", "-q", "-F", "-t", "ext4", "-b", bsz,
			     "-O", feat, "-E", "lazy_itable_init=0,nodiscard", FC_DIR "/tpl.tmp");
	}
	if (rc) {
		diag_lines("mke2fs: ", out);
		return rc < 0 ? rc : -EIO;
	}
	return rename(FC_DIR "/tpl.tmp", path) ? -errno : 0;
}

/* ---------------------------------------------------------------- a mounted test fs */

struct fcfs {
	char img[PATH_MAX];	/* the "disk" */
	int loop;		/* loop device number, -1 when detached */
	bool mounted;
	int bs;
};

static inline const char *fs_dev(const struct fcfs *f)
{
	static char dev[32];

	snprintf(dev, sizeof(dev), "/dev/loop%d", f->loop);
	return dev;
}

static inline int fs_mount(struct fcfs *f, unsigned long flags, const char *opts)
{
	mkdir(FC_MNT, 0755);
	if (mount(fs_dev(f), FC_MNT, "ext4", flags, opts))
		return -errno;
	f->mounted = true;
	return 0;
}

static inline int fs_umount(struct fcfs *f)
{
	if (!f->mounted)
		return 0;
	if (umount(FC_MNT))
		return -errno;
	f->mounted = false;
	return 0;
}

/* Attach IMG and mount it; 0 or -errno (the loop stays attached on a mount failure). */
static inline int fs_open(struct fcfs *f, const char *img, unsigned long flags, const char *opts)
{
	f->mounted = false;
	snprintf(f->img, sizeof(f->img), "%s", img);
	f->loop = loop_attach(img);
	if (f->loop < 0)
		return f->loop;
	return fs_mount(f, flags, opts);
}

static inline void fs_close(struct fcfs *f)
{
	fs_umount(f);
	loop_detach(f->loop);
	f->loop = -1;
}

/* Is MNT the root of a mount of loop device NR?  (Before any ioctl that acts on a whole fs.) */
static inline bool is_loop_mount(const char *mnt, int nr)
{
	struct stat m, d;
	char dev[32];

	snprintf(dev, sizeof(dev), "/dev/loop%d", nr);
	return !stat(mnt, &m) && !stat(dev, &d) && m.st_dev == d.st_rdev;
}

/*
 * Wait until loop device @nr has no request in flight (at most 5 s).  A shutdown stops the
 * file system from issuing I/O, but a write it issued just before (writeback, a journal
 * block) may still be on its way: the power cut is taken once it has landed, so that the copy
 * of the disk sees no write at all and a write issued after the shutdown stands out (seen
 * once: "while copying: 1 writes" in fc_ops_test, a write in flight at the shutdown).
 */
static inline void loop_drain(int nr)
{
	char path[64], buf[64];
	unsigned long rd, wr;

	snprintf(path, sizeof(path), "/sys/block/loop%d/inflight", nr);
	for (int i = 0; i < 5000; i++) {
		if (read_small(path, buf, sizeof(buf)) < 0 ||
		    sscanf(buf, "%lu %lu", &rd, &wr) != 2 || (!rd && !wr))
			return;
		usleep(1000);
	}
}

static inline int fs_shutdown(const char *mnt, __u32 flags)
{
	int fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret;
	struct stat st;

	if (fd < 0)
		return -errno;
	/* only ever a loop device's file system */
	if (fstat(fd, &st) || major(st.st_dev) != 7) {
		close(fd);
		return -EXDEV;
	}
	ret = ioctl(fd, EXT4_IOC_SHUTDOWN, &flags) ? -errno : 0;
	close(fd);
	if (!ret)
		loop_drain(minor(st.st_dev));
	return ret;
}

static inline int syncfs_path(const char *mnt)
{
	int fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = syncfs(fd) ? -errno : 0;
	close(fd);
	return ret;
}

/* fsync (or fdatasync) of a path, opened read-only (a directory too) */
static inline int fsync_path(const char *path, bool data)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = (data ? fdatasync(fd) : fsync(fd)) ? -errno : 0;
	close(fd);
	return ret;
}

/* ---------------------------------------------------------------- fc_info */

struct fcinfo {
	bool present;
	long commits, ineligible, numblks;
	unsigned long long avg_us;
	long reason[FC_NREASONS];
};

/*
 * Parse /proc/fs/ext4/loopN/fc_info, checking its exact layout (6.1):
 *   fc stats:\n%ld commits\n%ld ineligible\n%ld numblks\n%lluus avg_commit_time\n
 *   Ineligible reasons:\n then "\"%s\":\t%d\n" for each reason in order.
 * Returns 0, -ENOENT when the file is absent, or -EINVAL with the first bad line in WHY.
 */
static inline int fcinfo_read(int loop, struct fcinfo *fi, char *why, size_t wsz)
{
	char path[64], buf[2048], line[256], name[128];
	char *p, *nl;
	int ln = 0, r = 0;
	ssize_t n;

	memset(fi, 0, sizeof(*fi));
	snprintf(path, sizeof(path), "/proc/fs/ext4/loop%d/fc_info", loop);
	n = read_small(path, buf, sizeof(buf));
	if (n < 0) {
		if (why)
			snprintf(why, wsz, "%s: %s", path, strerror(-n));
		return n == -ENOENT ? -ENOENT : (int)n;
	}
	fi->present = true;
	for (p = buf; *p; p = nl + 1, ln++) {
		long v;
		char c;

		nl = strchr(p, '\n');
		if (!nl)
			goto bad;
		snprintf(line, sizeof(line), "%.*s", (int)(nl - p), p);
		switch (ln) {
		case 0:
			if (strcmp(line, "fc stats:"))
				goto bad;
			break;
		case 1: case 2: case 3: {
			static const char * const w[] = { "commits", "ineligible", "numblks" };
			char word[32];

			if (sscanf(line, "%ld %31s%c", &v, word, &c) != 2 || strcmp(word, w[ln - 1]))
				goto bad;
			snprintf(name, sizeof(name), "%ld %s", v, w[ln - 1]);
			if (strcmp(name, line))
				goto bad;
			if (ln == 1)
				fi->commits = v;
			else if (ln == 2)
				fi->ineligible = v;
			else
				fi->numblks = v;
			break;
		}
		case 4: {
			unsigned long long u;

			if (sscanf(line, "%lluus avg_commit_time%c", &u, &c) != 1)
				goto bad;
			snprintf(name, sizeof(name), "%lluus avg_commit_time", u);
			if (strcmp(name, line))
				goto bad;
			fi->avg_us = u;
			break;
		}
		case 5:
			if (strcmp(line, "Ineligible reasons:"))
				goto bad;
			break;
		default:
			if (r >= FC_NREASONS)
				goto bad;
			snprintf(name, sizeof(name), "\"%s\":\t", fc_reason_names[r]);
			if (strncmp(line, name, strlen(name)))
				goto bad;
			{
				char *e;
				const char *num = line + strlen(name);

				v = strtol(num, &e, 10);
				if (e == num || *e || (*num == '0' && num[1]) || *num == '+' ||
				    *num == ' ')
					goto bad;
			}
			fi->reason[r++] = v;
		}
	}
	if (r != FC_NREASONS) {
		snprintf(line, sizeof(line), "(%d reason lines)", r);
		goto bad;
	}
	return 0;
bad:
	if (why)
		snprintf(why, wsz, "fc_info line %d: \"%s\"", ln + 1, line);
	return -EINVAL;
}

/* ---------------------------------------------------------------- manifest of a tree */

struct mflags { bool no_dir_times; };

static inline int mf_cmp(const void *a, const void *b)
{
	return strcmp(*(char * const *)a, *(char * const *)b);
}

/* Append to a growing string */
struct sbuf { char *s; size_t len, cap; };

static inline void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (b->s && b->len + n < b->cap)
			break;
		b->cap = (b->cap + n + 1) * 2;
		b->s = realloc(b->s, b->cap);
	}
	b->len += n;
}

static inline uint64_t file_hash(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint64_t h = FNV_INIT;
	char buf[65536];
	ssize_t n;

	if (fd < 0)
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		h = fnv64(h, buf, n);
	close(fd);
	return h;
}

static inline uint64_t xattr_hash(const char *path)
{
	char names[4096], val[4096];
	uint64_t h = FNV_INIT;
	ssize_t n = llistxattr(path, names, sizeof(names));

	for (char *p = names; n > 0 && p < names + n; p += strlen(p) + 1) {
		ssize_t v = lgetxattr(path, p, val, sizeof(val));

		h = fnv64(h, p, strlen(p) + 1);
		if (v > 0)
			h = fnv64(h, val, v);
	}
	return n > 0 ? h : 0;
}

/*
 * One line per object under ROOT (names relative to it), sorted: type, mode, nlink, ino, size,
 * blocks, mtime and ctime (ns), inode flags, xattrs and contents (hash) or link target.
 * Directories' times are left out: replaying a dentry tag re-links it in the directory, which
 * sets the directory's times to the time of the replay (kernel) or leaves them (e2fsck).
 */
static inline void manifest_walk(const char *root, const char *rel, char ***v, int *n)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char r[PATH_MAX], full[2 * PATH_MAX], line[3 * PATH_MAX], extra[PATH_MAX + 16];
		struct stat st;
		long fl = 0;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(r, sizeof(r), "%s%s%s", rel, *rel ? "/" : "", de->d_name);
		snprintf(full, sizeof(full), "%s/%s", root, r);
		if (lstat(full, &st))
			continue;
		extra[0] = 0;
		if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
			int fd = open(full, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

			if (fd >= 0) {
				if (ioctl(fd, FS_IOC_GETFLAGS, &fl))
					fl = -1;
				close(fd);
			}
		}
		if (S_ISREG(st.st_mode)) {
			snprintf(extra, sizeof(extra), "data=%016llx",
				 (unsigned long long)file_hash(full));
		} else if (S_ISLNK(st.st_mode)) {
			char t[PATH_MAX];
			ssize_t k = readlink(full, t, sizeof(t) - 1);

			t[k > 0 ? k : 0] = 0;
			snprintf(extra, sizeof(extra), "link=%s", t);
		}
		if (S_ISDIR(st.st_mode))
			snprintf(line, sizeof(line),
				 "%s dir mode=%o nlink=%lu ino=%lu size=%lld blocks=%lld flags=%lx xattr=%016llx",
				 r, st.st_mode & 07777, (unsigned long)st.st_nlink,
				 (unsigned long)st.st_ino, (long long)st.st_size,
				 (long long)st.st_blocks, fl,
				 (unsigned long long)xattr_hash(full));
		else
			snprintf(line, sizeof(line),
				 "%s %s mode=%o nlink=%lu ino=%lu size=%lld blocks=%lld mtime=%lld.%09ld ctime=%lld.%09ld flags=%lx xattr=%016llx %s",
				 r, S_ISREG(st.st_mode) ? "reg" : S_ISLNK(st.st_mode) ? "lnk" : "other",
				 st.st_mode & 07777, (unsigned long)st.st_nlink,
				 (unsigned long)st.st_ino, (long long)st.st_size,
				 (long long)st.st_blocks, (long long)st.st_mtim.tv_sec,
				 st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec,
				 st.st_ctim.tv_nsec, fl, (unsigned long long)xattr_hash(full),
				 extra);
		*v = realloc(*v, sizeof(char *) * (*n + 1));
		(*v)[(*n)++] = strdup(line);
		if (S_ISDIR(st.st_mode))
			manifest_walk(root, r, v, n);
	}
	closedir(d);
}

/* The manifest as one string (caller frees). */
static inline char *manifest(const char *root)
{
	struct sbuf b = { 0 };
	char **v = NULL;
	int n = 0, i;

	manifest_walk(root, "", &v, &n);
	qsort(v, n, sizeof(char *), mf_cmp);
	sb_printf(&b, "%s", "");
	for (i = 0; i < n; i++) {
		sb_printf(&b, "%s\n", v[i]);
		free(v[i]);
	}
	free(v);
	return b.s;
}

/* Print the lines that differ between two manifests (A's as "-", B's as "+"). */
static inline int manifest_diff(const char *tag, const char *a, const char *b)
{
	int diffs = 0;
	const char *p;

	for (int pass = 0; pass < 2; pass++) {
		const char *x = pass ? b : a, *y = pass ? a : b;

		for (p = x; p && *p;) {
			const char *e = strchr(p, '\n');
			int len = e ? (int)(e - p) : (int)strlen(p);
			char line[PATH_MAX + 600];
			const char *q;
			bool found = false;

			snprintf(line, sizeof(line), "%.*s\n", len, p);
			for (q = y; q && (q = strstr(q, line)); q++)
				if (q == y || q[-1] == '\n') {
					found = true;
					break;
				}
			if (!found) {
				printf("# %s %c%.*s\n", tag, pass ? '+' : '-', len, p);
				diffs++;
			}
			p = e ? e + 1 : NULL;
		}
	}
	fflush(stdout);
	return diffs;
}

/* Drop the lines of a manifest whose path is PATH (an object the test does not pin). */
static inline void manifest_drop(char *m, const char *path)
{
	size_t pl = strlen(path);
	char *p = m;

	while (p && *p) {
		char *e = strchr(p, '\n');

		if (!strncmp(p, path, pl) && p[pl] == ' ') {
			memmove(p, e ? e + 1 : p + strlen(p), strlen(e ? e + 1 : p + strlen(p)) + 1);
			continue;
		}
		p = e ? e + 1 : NULL;
	}
}

/* ---------------------------------------------------------------- the journal on the image */

/* Physical block of journal (inode 8) block LBLK, by debugfs bmap; -1 on error. */
static inline long long journal_pblk(const char *img, long lblk)
{
	char out[512], cmd[64];
	char *p, *e;
	long long v;

	snprintf(cmd, sizeof(cmd), "bmap <8> %ld", lblk);
	if (run_cmd(out, sizeof(out), "debugfs", "-R", cmd, (char *)img))
		return -1;
	/* "debugfs 1.47.0 (5-Feb-2023)\n<number>\n" */
	p = strrchr(out, ')');
	p = p ? p + 1 : out;
	v = strtoll(p, &e, 10);
	return e == p || v <= 0 ? -1 : v;
}

static inline uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

/* The fields of the journal superblock the tests look at. */
struct jsb {
	long long pblk;			/* where it is */
	uint32_t maxlen, first, sequence, start, errno_, incompat, num_fc_blks;
};
#define JBD2_FEATURE_INCOMPAT_FAST_COMMIT 0x20

static inline int jsb_read(const char *img, int bs, struct jsb *j)
{
	unsigned char b[1024];
	int fd;

	j->pblk = journal_pblk(img, 0);
	if (j->pblk < 0)
		return -1;
	fd = open(img, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pread(fd, b, sizeof(b), j->pblk * bs) != sizeof(b)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	if (be32(b) != 0xc03b3998)
		return -1;
	j->maxlen = be32(b + 0x10);
	j->first = be32(b + 0x14);
	j->sequence = be32(b + 0x18);
	j->start = be32(b + 0x1c);
	j->errno_ = be32(b + 0x20);
	j->incompat = be32(b + 0x28);
	j->num_fc_blks = be32(b + 0x54);
	return 0;
}

/* Journal block number of the first fast-commit block (6.1's jbd2: maxlen - num + 1). */
static inline long jsb_fc_first(const struct jsb *j)
{
	return (long)j->maxlen - (j->num_fc_blks ? j->num_fc_blks : 256) + 1;
}

/* Compare two files; the byte ranges that differ (merged per block of BS) into OUT. */
static inline int diff_files(const char *a, const char *b, int bs, long long *blocks, int max)
{
	int fa = open(a, O_RDONLY | O_CLOEXEC), fb = open(b, O_RDONLY | O_CLOEXEC), n = 0;
	static char ba[1 << 16], bb[1 << 16];
	off_t off = 0;

	if (fa < 0 || fb < 0)
		return -1;
	for (;;) {
		ssize_t ra = pread(fa, ba, sizeof(ba), off), rb = pread(fb, bb, sizeof(bb), off);

		if (ra <= 0 || rb <= 0)
			break;
		if (ra != rb || memcmp(ba, bb, ra)) {
			for (ssize_t i = 0; i < ra && i < rb; i += bs)
				if (memcmp(ba + i, bb + i, bs)) {
					long long blk = (off + i) / bs;

					if (n < max)
						blocks[n] = blk;
					n++;
				}
		}
		off += ra;
	}
	close(fa);
	close(fb);
	return n;
}

/* Physical block of logical block 0 of a file's first extent (FIEMAP), in fs blocks. */
#include <linux/fiemap.h>
static inline long long fiemap_first(const char *path, int bs, long long *len_blocks)
{
	struct { struct fiemap f; struct fiemap_extent e[4]; } m;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	memset(&m, 0, sizeof(m));
	m.f.fm_length = ~0ULL;
	m.f.fm_extent_count = 4;
	if (ioctl(fd, FS_IOC_FIEMAP, &m) || !m.f.fm_mapped_extents) {
		close(fd);
		return -1;
	}
	close(fd);
	if (len_blocks)
		*len_blocks = m.e[0].fe_length / bs;
	return m.e[0].fe_physical / bs;
}

/* ---------------------------------------------------------------- a test's life cycle */

/* A fresh file system from the template for FEATURES/BS/SIZE, in DISK, mounted with OPTS. */
static inline int fc_start_sz(struct fcfs *fs, const char *features, int bs,
			      unsigned long long size, const char *disk, const char *opts)
{
	char tpl[PATH_MAX];
	int r;

	mkdir(FC_DIR, 0755);
	r = make_template(tpl, sizeof(tpl), features, bs, size);
	if (!r)
		r = sparse_copy(tpl, disk);
	if (!r)
		r = fs_open(fs, disk, 0, opts);
	if (!r && !is_loop_mount(FC_MNT, fs->loop))
		r = -EXDEV;
	fs->bs = bs;
	return r;
}

static inline int fc_start(struct fcfs *fs, const char *features, int bs, const char *disk,
			   const char *opts)
{
	return fc_start_sz(fs, features, bs, FC_IMG_SIZE, disk, opts);
}

/*
 * The power cut: shut down without flushing the log, copy the disk as it is at that moment
 * to CRASH, then unmount and detach.  Returns 0 or -errno.
 */
static inline int fc_power_cut(struct fcfs *fs, const char *crash)
{
	int r = fs_shutdown(FC_MNT, EXT4_GOING_FLAGS_NOLOGFLUSH);

	if (!r)
		r = sparse_copy(fs->img, crash);
	fs_close(fs);
	return r;
}

/* e2fsck -fn IMG: its exit status; the output printed when it is not 0. */
static inline int fsck_clean(const char *img, const char *tag)
{
	static char out[65536];
	int rc = run_cmd(out, sizeof(out), "e2fsck", "-fn", (char *)img);

	if (rc) {
		printf("# %s: e2fsck -fn exit %d:\n", tag, rc);
		diag_lines("  ", out);
	}
	return rc;
}

/* ---------------------------------------------------------------- e2fsck's replay */

static inline uint32_t crc32c_raw(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1));
	}
	return crc;
}

/*
 * e2fsprogs 1.47.0 (Debian 12) sometimes leaves the primary superblock of a metadata_csum
 * file system with a stale checksum after it replays fast commits (seen with longer logs,
 * and always when the image was unmounted after the shutdown): it then stops ("Superblock
 * checksum does not match superblock while trying to re-open", exit 12) and neither e2fsck
 * nor the kernel opens the image.  Recompute that checksum (crc32c, seed ~0, over the first
 * 1020 bytes; x86_64 only, little-endian) so that what e2fsck wrote can be checked.
 * Returns 1 if it was wrong, 0 if right, -errno.
 */
static inline int sb_fix_csum(const char *img)
{
	unsigned char sb[1024];
	uint32_t c, old;
	int fd = open(img, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (pread(fd, sb, sizeof(sb), 1024) != sizeof(sb)) {
		close(fd);
		return -EIO;
	}
	c = crc32c_raw(~0U, sb, 1020);
	memcpy(&old, sb + 1020, 4);
	if (old != c) {
		memcpy(sb + 1020, &c, 4);
		if (pwrite(fd, sb, sizeof(sb), 1024) != sizeof(sb)) {
			close(fd);
			return -EIO;
		}
	}
	close(fd);
	return old != c;
}

/*
 * The tool's recovery: e2fsck -E journal_only -y IMG (journal and fast-commit replay, no
 * check), with the workaround above.  Returns e2fsck's exit status (0 when the workaround
 * applied); OUT gets its output.
 */
static inline int e2fsck_replay(const char *img, char *out, size_t outsz)
{
	int rc = run_cmd(out, outsz, "e2fsck", "-E", "journal_only", "-y", (char *)img);

	if (rc == 12 && strstr(out, "Superblock checksum does not match superblock while trying to re-open") &&
	    sb_fix_csum(img) == 1) {
		printf("# e2fsck replay: exit 12, superblock checksum left stale (e2fsprogs 1.47.0): recomputed\n");
		rc = 0;
	}
	return rc;
}

/* ---------------------------------------------------------------- replay tracing */

#define TRACEFS "/sys/kernel/tracing"

/* Switch the N ext4 events NAMES on (and clear the buffer) or off. */
static inline int fc_trace_events(const char * const *names, size_t n, bool on)
{
	char path[256];
	int r = 0;

	if (on)
		r |= write_file(TRACEFS "/trace", "");
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), TRACEFS "/events/ext4/%s/enable", names[i]);
		r |= write_file(path, on ? "1" : "0");
	}
	return r;
}

/* Switch the ext4_fc_replay and ext4_fc_replay_scan events on (and clear the buffer) or off. */
static inline int fc_trace(bool on)
{
	static const char * const replay[] = { "ext4_fc_replay", "ext4_fc_replay_scan" };

	return fc_trace_events(replay, 2, on);
}

/* Print the trace buffer's event lines (without the header), at most MAX of the last. */
static inline void fc_trace_print(int max)
{
	static char buf[1 << 18];
	ssize_t n = read_small(TRACEFS "/trace", buf, sizeof(buf));
	char *p, *start = buf;
	int lines = 0;

	if (n <= 0)
		return;
	for (p = buf + n; p > buf; p--)
		if (p[-1] == '\n' && ++lines > max) {
			start = p;
			break;
		}
	for (p = start; *p == '#'; p = strchr(p, '\n') + 1)
		;
	diag_lines("trace: ", p);
}

#endif /* FC_UTIL_H */

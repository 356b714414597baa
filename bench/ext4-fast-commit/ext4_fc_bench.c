// SPDX-License-Identifier: GPL-2.0
/*
 * ext4 fast commits: what one fsync costs after a 4 KiB append, a create (a new empty file,
 * fsynced), and a rename within a directory (then an fsync of the file, or of the directory),
 * from one thread and from four (each with its own directory and files), on an ext4 made
 * without fast commits ("nofc") and one made with -O fast_commit ("fc").  Case names:
 * <append|create|rename-file|rename-dir>-<1|4>t-<nofc|fc>.
 *
 * The images come from the host's mke2fs (host-setup, make-images), packed on a read-only
 * virtio disk "fcb-pack-<cfg>".  The device measured is a loop device over a sparse tmpfs file
 * (bench/ext4-fast-commit, under icount), or with fcb.dev=virtio on the kernel command line the
 * virtio disk "fcb-raw-<cfg>" (bench/ext4-fast-commit-wall, plain TCG, host cache=none).
 * Every repetition starts from the same file system: the image is written back onto the
 * device, mounted (commit=600: no timed commit; noinit_itable: no lazy inode-table zeroing;
 * the flusher is kept asleep), the case's directories and files are made and synced, then the
 * threads start together and do 200 operations in all, each followed by its fsync.  One
 * warm-up repetition, then 5 (fcb.reps=N); fcb.n=N changes the 200.
 *
 * Per case, per fsync: ns (the report's figure: the median repetition's time over its
 * fsyncs; guest time, which is instructions under icount), and counted around the measured
 * part: 4 KiB blocks written besides the file data (sectors written minus the appends' own
 * 4 KiB) and flush requests, from /sys/block/<dev>/stat; write requests besides the data's;
 * fast commits, their blocks and ineligible ones from /proc/fs/ext4/<dev>/fc_info; full
 * commits from /proc/fs/jbd2/<dev>-8/info.  The floor of a fast commit is one block and one
 * flush besides the data; on a device without FUA (loop, virtio-blk) the block layer sends a
 * FUA write as the write and a flush after it, so the floor is two flush requests there.
 *
 * KTAP: a case fails when an operation fails, when "fc" never fast-commits (a directory's
 * fsync is a full commit in 6.1, so rename-dir is exempt), when "nofc" does, or when "fc" with
 * one thread is above the floor in any repetition (stock is at it).
 *
 *	# BENCH <case> <ns per fsync> ns min= max= reps= fsyncs= fsyncs_per_s= clock=
 *		blocks= flushes= writes= fast_commits= fc_blocks= ineligible= jbd2_commits=
 *		blocks_range= flushes_range= floor_blocks=1 floor_flushes=
 *
 * Usage: ext4_fc_bench [case-glob]   (or $KTEST_CASE)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/loop.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../bench_util.h"

#define MNT		"/mnt/fcb"
#define BLK		4096
#define MAX_THREADS	4

static int n_fsyncs = 200;	/* per repetition, over all threads */
static int n_reps = 5;		/* measured repetitions, after one warm-up */
static const char *dev_kind = "loop";

enum op { APPEND, CREATE, RENAME_FILE, RENAME_DIR, NOPS };
static const char *const op_name[NOPS] = { "append", "create", "rename-file", "rename-dir" };
enum cfg { NOFC, FC, NCFG };
static const char *const cfg_name[NCFG] = { "nofc", "fc" };
static const int thread_counts[] = { 1, 4 };

#define NCASES (NOPS * 2 * NCFG)

/* The block device of each configuration, and the image to write back onto it. */
struct image {
	char dev[32];		/* e.g. loop0, vdc */
	int fua;		/* the device takes FUA writes (else: a flush after the write) */
	char *pack;		/* the packed image, in memory */
	size_t pack_len;
	uint64_t size;
};
static struct image images[NCFG];

struct counters {
	unsigned long long wios, wsect, flushes;
	long fc_commits, fc_inelig, fc_blks;
	unsigned long jtx;
};

struct worker {
	pthread_t th;
	int id, n;
	enum op op;
	int dirfd, fd;		/* its directory; APPEND: its file */
	int *fds;		/* RENAME_FILE: its n files */
	int err;
	char what[96];
};

static pthread_barrier_t start_barrier;
static char buf4k[BLK];

static int read_file(const char *path, char *buf, size_t len)
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
	return 0;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* The virtio disk with the given serial: its name (vdX). */
static int find_disk(const char *serial, char *dev, size_t len)
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
		if (read_file(path, s, sizeof(s)))
			continue;
		s[strcspn(s, "\n ")] = '\0';
		if (strcmp(s, serial))
			continue;
		snprintf(dev, len, "%.31s", de->d_name);
		ret = 0;
		break;
	}
	closedir(d);
	return ret;
}

static int counters_read(const char *dev, struct counters *c)
{
	unsigned long long f[17];
	char path[128], buf[1024], *p = buf, *q;
	int i;

	memset(c, 0, sizeof(*c));
	snprintf(path, sizeof(path), "/sys/block/%s/stat", dev);
	if (read_file(path, buf, sizeof(buf)))
		return -1;
	for (i = 0; i < 17; i++) {
		char *end;

		f[i] = strtoull(p, &end, 10);
		if (end == p)
			return -1;
		p = end;
	}
	c->wios = f[4];
	c->wsect = f[6];
	c->flushes = f[15];
	/* fc_info: "fc stats:\n%ld commits\n%ld ineligible\n%ld numblks\n..." */
	snprintf(path, sizeof(path), "/proc/fs/ext4/%s/fc_info", dev);
	if (!read_file(path, buf, sizeof(buf))) {
		q = strstr(buf, "fc stats:\n");
		if (q && sscanf(q, "fc stats:\n%ld commits\n%ld ineligible\n%ld numblks",
				&c->fc_commits, &c->fc_inelig, &c->fc_blks) != 3)
			return -1;
	}
	/* "%lu transactions (%lu requested), each up to %u blocks" */
	snprintf(path, sizeof(path), "/proc/fs/jbd2/%s-8/info", dev);
	if (!read_file(path, buf, sizeof(buf)))
		sscanf(buf, "%lu transactions", &c->jtx);
	return 0;
}

/* Reads the whole packed image from the virtio disk with that serial into memory. */
static int load_pack(const char *serial, struct image *im)
{
	char dev[32], path[64];
	size_t cap = 1 << 20, len = 0;
	char *p = malloc(cap);
	int fd;
	ssize_t n;

	if (!p || find_disk(serial, dev, sizeof(dev)))
		return -1;
	snprintf(path, sizeof(path), "/dev/%s", dev);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	for (;;) {
		if (len == cap) {
			cap *= 2;
			p = realloc(p, cap);
			if (!p)
				return -1;
		}
		n = read(fd, p + len, cap - len);
		if (n < 0) {
			close(fd);
			return -1;
		}
		if (!n)
			break;
		len += n;
	}
	close(fd);
	if (len < 16 || memcmp(p, "FCBPACK1", 8))
		return -1;
	memcpy(&im->size, p + 8, 8);
	im->pack = p;
	im->pack_len = len;
	return 0;
}

/* Writes the packed image onto the device (through its page cache) and syncs it. */
static int restore_image(struct image *im)
{
	char path[64];
	size_t off = 16;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/dev/%s", im->dev);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	for (;;) {
		uint64_t at, len;

		if (off + 16 > im->pack_len) {
			ret = -1;
			break;
		}
		memcpy(&at, im->pack + off, 8);
		memcpy(&len, im->pack + off + 8, 8);
		off += 16;
		if (!len)
			break;
		if (off + len > im->pack_len ||
		    pwrite(fd, im->pack + off, len, at) != (ssize_t)len) {
			ret = -1;
			break;
		}
		off += len;
	}
	if (fsync(fd))
		ret = -1;
	close(fd);
	return ret;
}

/* A loop device over a sparse tmpfs file of the image's size: its name into im->dev. */
static int make_loop(struct image *im, int cfg)
{
	struct loop_config lc;
	char path[64];
	int ctl, nr, fd, lfd;

	snprintf(path, sizeof(path), "/run/fcb/%s.img", cfg_name[cfg]);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, im->size))
		return -1;
	ctl = open("/dev/loop-control", O_RDWR);
	if (ctl < 0)
		return -1;
	nr = ioctl(ctl, LOOP_CTL_GET_FREE);
	close(ctl);
	if (nr < 0)
		return -1;
	snprintf(path, sizeof(path), "/dev/loop%d", nr);
	lfd = open(path, O_RDWR);
	if (lfd < 0)
		return -1;
	memset(&lc, 0, sizeof(lc));
	lc.fd = fd;
	lc.block_size = BLK;
	if (ioctl(lfd, LOOP_CONFIGURE, &lc)) {
		close(lfd);
		return -1;
	}
	close(lfd);
	close(fd);
	snprintf(im->dev, sizeof(im->dev), "loop%d", nr);
	return 0;
}

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	char a[32], b[32];
	ssize_t n;
	int i, fd;

	pthread_barrier_wait(&start_barrier);
	for (i = 0; i < w->n; i++) {
		switch (w->op) {
		case APPEND:
			n = pwrite(w->fd, buf4k, BLK, (off_t)i * BLK);
			if (n != BLK) {
				w->err = n < 0 ? errno : EIO;
				snprintf(w->what, sizeof(w->what), "pwrite %d", i);
				return NULL;
			}
			if (fsync(w->fd)) {
				w->err = errno;
				snprintf(w->what, sizeof(w->what), "fsync after append %d", i);
				return NULL;
			}
			break;
		case CREATE:
			snprintf(a, sizeof(a), "c%d", i);
			fd = openat(w->dirfd, a, O_WRONLY | O_CREAT | O_EXCL, 0644);
			if (fd < 0) {
				w->err = errno;
				snprintf(w->what, sizeof(w->what), "create %s", a);
				return NULL;
			}
			if (fsync(fd)) {
				w->err = errno;
				snprintf(w->what, sizeof(w->what), "fsync of new %s", a);
				close(fd);
				return NULL;
			}
			close(fd);
			break;
		case RENAME_FILE:
		case RENAME_DIR:
			snprintf(a, sizeof(a), "r%d", i);
			snprintf(b, sizeof(b), "m%d", i);
			if (renameat(w->dirfd, a, w->dirfd, b)) {
				w->err = errno;
				snprintf(w->what, sizeof(w->what), "rename %s %s", a, b);
				return NULL;
			}
			if (fsync(w->op == RENAME_FILE ? w->fds[i] : w->dirfd)) {
				w->err = errno;
				snprintf(w->what, sizeof(w->what), "fsync after rename %d", i);
				return NULL;
			}
			break;
		default:
			break;
		}
	}
	return NULL;
}

struct rep {
	unsigned long long ns;
	struct counters d;	/* after - before */
};

/* Makes the case's directories and files before the measured part. */
static int prepare(struct worker *w, int nthreads, enum op op, int per_thread)
{
	char path[128], name[32];
	int t, i, fd;

	if (mkdir(MNT "/b", 0755))
		return -1;
	for (t = 0; t < nthreads; t++) {
		w[t].id = t;
		w[t].n = per_thread;
		w[t].op = op;
		snprintf(path, sizeof(path), MNT "/b/t%d", t);
		if (mkdir(path, 0755))
			return -1;
		w[t].dirfd = open(path, O_RDONLY | O_DIRECTORY);
		if (w[t].dirfd < 0)
			return -1;
		if (op == APPEND) {
			w[t].fd = openat(w[t].dirfd, "a", O_WRONLY | O_CREAT | O_EXCL, 0644);
			if (w[t].fd < 0)
				return -1;
		}
		if (op == RENAME_FILE || op == RENAME_DIR) {
			if (op == RENAME_FILE) {
				w[t].fds = malloc(per_thread * sizeof(int));
				if (!w[t].fds)
					return -1;
				for (i = 0; i < per_thread; i++)
					w[t].fds[i] = -1;
			}
			for (i = 0; i < per_thread; i++) {
				snprintf(name, sizeof(name), "r%d", i);
				fd = openat(w[t].dirfd, name, O_RDONLY | O_CREAT | O_EXCL, 0644);
				if (fd < 0)
					return -1;
				if (op == RENAME_FILE)
					w[t].fds[i] = fd;
				else
					close(fd);
			}
		}
	}
	fd = open(MNT, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return -1;
	i = syncfs(fd);
	close(fd);
	return i;
}

static void release(struct worker *w, int nthreads)
{
	int t, i;

	for (t = 0; t < nthreads; t++) {
		if (w[t].fd >= 0)
			close(w[t].fd);
		if (w[t].dirfd >= 0)
			close(w[t].dirfd);
		if (w[t].fds) {
			for (i = 0; i < w[t].n && w[t].fds[i] >= 0; i++)
				close(w[t].fds[i]);
			free(w[t].fds);
		}
		w[t].fds = NULL;
	}
}

/* One repetition: fresh image, mount, prepare, measure, unmount.  0 or -1 (message printed). */
static int one_rep(int cfg, enum op op, int nthreads, struct rep *r)
{
	struct worker w[MAX_THREADS];
	struct counters c0, c1;
	struct image *im = &images[cfg];
	char path[64];
	unsigned long long t0, t1;
	int t, ret = 0, per = n_fsyncs / nthreads;

	memset(w, 0, sizeof(w));
	for (t = 0; t < MAX_THREADS; t++)
		w[t].fd = w[t].dirfd = -1;
	snprintf(path, sizeof(path), "/dev/%s", im->dev);
	if (restore_image(im)) {
		printf("# writing the image onto %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (mount(path, MNT, "ext4", 0, "commit=600,noinit_itable")) {
		printf("# mount %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (prepare(w, nthreads, op, per)) {
		printf("# preparing the files: %s\n", strerror(errno));
		ret = -1;
		goto out;
	}
	if (counters_read(im->dev, &c0)) {
		printf("# reading the counters of %s\n", im->dev);
		ret = -1;
		goto out;
	}
	pthread_barrier_init(&start_barrier, NULL, nthreads + 1);
	for (t = 0; t < nthreads; t++) {
		if (pthread_create(&w[t].th, NULL, worker_fn, &w[t])) {
			printf("# pthread_create failed\n");
			exit(1);
		}
	}
	t0 = bench_now_ns();
	pthread_barrier_wait(&start_barrier);
	for (t = 0; t < nthreads; t++)
		pthread_join(w[t].th, NULL);
	t1 = bench_now_ns();
	pthread_barrier_destroy(&start_barrier);
	if (counters_read(im->dev, &c1)) {
		printf("# reading the counters of %s\n", im->dev);
		ret = -1;
		goto out;
	}
	for (t = 0; t < nthreads; t++) {
		if (w[t].err) {
			printf("# thread %d: %s: %s\n", t, w[t].what, strerror(w[t].err));
			ret = -1;
		}
	}
	r->ns = t1 - t0;
	r->d.wios = c1.wios - c0.wios;
	r->d.wsect = c1.wsect - c0.wsect;
	r->d.flushes = c1.flushes - c0.flushes;
	r->d.fc_commits = c1.fc_commits - c0.fc_commits;
	r->d.fc_inelig = c1.fc_inelig - c0.fc_inelig;
	r->d.fc_blks = c1.fc_blks - c0.fc_blks;
	r->d.jtx = c1.jtx - c0.jtx;
out:
	release(w, nthreads);
	if (umount(MNT)) {
		printf("# umount: %s\n", strerror(errno));
		ret = -1;
	}
	return ret;
}

static char case_names[NCASES][48];

static void case_params(int i, enum op *op, int *nthreads, int *cfg)
{
	*op = i / (2 * NCFG);
	*nthreads = thread_counts[(i / NCFG) % 2];
	*cfg = i % NCFG;
}

static const char *case_name(int i)
{
	enum op op;
	int nt, cfg;

	case_params(i, &op, &nt, &cfg);
	snprintf(case_names[i], sizeof(case_names[i]), "%s-%dt-%s", op_name[op], nt, cfg_name[cfg]);
	return case_names[i];
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

/* The median of n values (sorted here). */
static unsigned long long median(unsigned long long *v, int n)
{
	qsort(v, n, sizeof(v[0]), cmp_ull);
	return v[n / 2];
}

/* What the summary at the end shows of each case that ran. */
struct summary {
	bool ran;
	double ns, blocks, flushes;
	int floor_flushes;
};
static struct summary summaries[NCASES];

#define MAX_REPS 16

/* loop on tmpfs runs under icount (ext4-fast-commit), the virtio disk in plain TCG (-wall). */
static const char *clock_name(void)
{
	return strcmp(dev_kind, "virtio") ? "icount" : "wall";
}

static int run_case(int i)
{
	struct rep reps[MAX_REPS + 1];
	unsigned long long ns[MAX_REPS], blocks[MAX_REPS], flushes[MAX_REPS], wios[MAX_REPS];
	unsigned long long fcc[MAX_REPS], fcb[MAX_REPS], jtx[MAX_REPS], inel[MAX_REPS];
	unsigned long long data_sect, data_ios;
	struct summary *sum = &summaries[i];
	enum op op;
	int nt, cfg, k, nf, floor_fl, bad = 0;
	double med;

	case_params(i, &op, &nt, &cfg);
	nf = n_fsyncs / nt * nt;
	/* the file data the case writes: one 4 KiB write per append */
	data_sect = op == APPEND ? (unsigned long long)nf * (BLK / 512) : 0;
	data_ios = op == APPEND ? nf : 0;
	/* a FUA write is a flush after the write on a device without FUA */
	floor_fl = images[cfg].fua ? 1 : 2;
	for (k = 0; k <= n_reps; k++) {
		if (one_rep(cfg, op, nt, &reps[k]))
			return -1;
	}
	/* repetition 0 is the warm-up */
	for (k = 0; k < n_reps; k++) {
		struct rep *r = &reps[k + 1];

		ns[k] = r->ns;
		blocks[k] = (r->d.wsect - data_sect) / (BLK / 512);
		flushes[k] = r->d.flushes;
		wios[k] = r->d.wios - data_ios;
		fcc[k] = r->d.fc_commits;
		fcb[k] = r->d.fc_blks;
		jtx[k] = r->d.jtx;
		inel[k] = r->d.fc_inelig;
		printf("#   rep %d: %llu ns, %llu blocks, %llu flushes, %llu writes besides the data, "
		       "%llu fast commits (%llu blocks, %llu ineligible), %llu jbd2 commits\n", k + 1,
		       ns[k], blocks[k], flushes[k], wios[k], fcc[k], fcb[k], inel[k], jtx[k]);
		if (cfg == NOFC && fcc[k]) {
			printf("# %s: fast commits without the feature\n", case_name(i));
			bad = 1;
		}
		/* a directory's fsync is a full commit in 6.1: ours may do better */
		if (cfg == FC && op != RENAME_DIR && !fcc[k]) {
			printf("# %s: no fast commit\n", case_name(i));
			bad = 1;
		}
	}
	med = (double)median(ns, n_reps) / nf;
	sum->ran = true;
	sum->ns = med;
	sum->blocks = (double)median(blocks, n_reps) / nf;
	sum->flushes = (double)median(flushes, n_reps) / nf;
	sum->floor_flushes = floor_fl;
	printf("# BENCH %s %.1f ns min=%.1f max=%.1f reps=%d fsyncs=%d fsyncs_per_s=%.0f clock=%s "
	       "blocks=%.3f flushes=%.3f writes=%.3f fast_commits=%.3f fc_blocks=%.3f "
	       "ineligible=%.3f jbd2_commits=%.3f blocks_range=%llu-%llu flushes_range=%llu-%llu "
	       "floor_blocks=1 floor_flushes=%d\n",
	       case_name(i), med, (double)ns[0] / nf, (double)ns[n_reps - 1] / nf, n_reps, nf,
	       1e9 / med, clock_name(), sum->blocks, sum->flushes, (double)median(wios, n_reps) / nf,
	       (double)median(fcc, n_reps) / nf, (double)median(fcb, n_reps) / nf,
	       (double)median(inel, n_reps) / nf, (double)median(jtx, n_reps) / nf,
	       blocks[0], blocks[n_reps - 1], flushes[0], flushes[n_reps - 1], floor_fl);
	/*
	 * One thread, an eligible operation: stock 6.1 writes one fast-commit block and sends
	 * one flush (and the FUA write's) per fsync, the floor; every repetition must be there.
	 * (Four threads depend on how they interleave; a directory's fsync is a full commit.)
	 */
	if (cfg == FC && nt == 1 && op != RENAME_DIR &&
	    (blocks[n_reps - 1] > (unsigned long long)nf ||
	     flushes[n_reps - 1] > (unsigned long long)nf * floor_fl)) {
		printf("# %s: above the floor of 1 block and %d flushes per fsync\n",
		       case_name(i), floor_fl);
		bad = 1;
	}
	return bad ? -1 : 0;
}

static void print_summary(void)
{
	int i;

	printf("# per fsync (%s clock): %-20s %10s %10s %16s %16s\n", clock_name(), "case", "ns",
	       "fsyncs/s", "blocks (floor)", "flushes (floor)");
	for (i = 0; i < NCASES; i++) {
		struct summary *s = &summaries[i];

		if (!s->ran)
			continue;
		printf("# per fsync (%s clock): %-20s %10.0f %10.0f %12.3f (1) %12.3f (%d)\n",
		       clock_name(), case_name(i), s->ns, 1e9 / s->ns, s->blocks, s->flushes,
		       s->floor_flushes);
	}
}

static void cmdline_opts(void)
{
	char buf[4096], *p;

	if (read_file("/proc/cmdline", buf, sizeof(buf)))
		return;
	p = strstr(buf, "fcb.n=");
	if (p)
		n_fsyncs = atoi(p + 6);
	p = strstr(buf, "fcb.reps=");
	if (p)
		n_reps = atoi(p + 9);
	if (n_reps > MAX_REPS)
		n_reps = MAX_REPS;
	if (n_reps < 1)
		n_reps = 1;
	if (strstr(buf, "fcb.dev=virtio"))
		dev_kind = "virtio";
}

int main(int argc, char **argv)
{
	const char *glob = bench_glob(argc, argv);
	struct rlimit rl = { 16384, 16384 };
	char serial[64], buf[16];
	int cfg;

	setvbuf(stdout, NULL, _IOLBF, 0);
	cmdline_opts();
	memset(buf4k, 0x5a, sizeof(buf4k));
	setrlimit(RLIMIT_NOFILE, &rl);
	printf("TAP version 13\n");
	if (write_str("/proc/sys/vm/dirty_writeback_centisecs", "360000") ||
	    write_str("/proc/sys/vm/dirty_expire_centisecs", "360000")) {
		printf("Bail out! cannot set the writeback sysctls\n");
		return 1;
	}
	mkdir("/mnt", 0755);
	mkdir(MNT, 0755);
	mkdir("/run/fcb", 0755);
	for (cfg = 0; cfg < NCFG; cfg++) {
		snprintf(serial, sizeof(serial), "fcb-pack-%s", cfg_name[cfg]);
		if (load_pack(serial, &images[cfg])) {
			printf("Bail out! no packed image on a virtio disk with serial %s "
			       "(host-setup attaches it)\n", serial);
			return 1;
		}
		if (!strcmp(dev_kind, "virtio")) {
			snprintf(serial, sizeof(serial), "fcb-raw-%s", cfg_name[cfg]);
			if (find_disk(serial, images[cfg].dev, sizeof(images[cfg].dev))) {
				printf("Bail out! no virtio disk with serial %s\n", serial);
				return 1;
			}
		} else if (make_loop(&images[cfg], cfg)) {
			printf("Bail out! setting up a loop device: %s\n", strerror(errno));
			return 1;
		}
		snprintf(serial, sizeof(serial), "/sys/block/%.16s/queue/fua", images[cfg].dev);
		if (!read_file(serial, buf, sizeof(buf)))
			images[cfg].fua = atoi(buf);
		printf("# %s: %s, %llu MiB image, %zu KiB packed, FUA %s\n", cfg_name[cfg],
		       images[cfg].dev, (unsigned long long)images[cfg].size >> 20,
		       images[cfg].pack_len >> 10, images[cfg].fua ? "yes" : "no (a flush after)");
	}
	printf("# %d fsyncs per repetition, %d repetitions after a warm-up\n", n_fsyncs, n_reps);
	cfg = bench_run_cases(glob, NCASES, case_name, run_case);
	print_summary();
	return cfg;
}

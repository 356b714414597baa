// SPDX-License-Identifier: GPL-2.0
/*
 * zonefs "explicit-open" under random sequences of operations, compared with stock 6.1 step by
 * step.
 *
 * Three zoned null_blk devices are made once (configfs) and formatted with ./mkzonefs:
 *   a  1 MiB zones, 12 zones, one conventional file, at most 3 open and 5 active zones,
 *      files 0640 root:root (uid 1000 gets EACCES)
 *   b  2 MiB zones with a 1 MiB capacity, 10 zones, no conventional file, no open limit and
 *      at most 3 active zones, files 0666 (uid 1000 may write)
 *   c  1 MiB zones, 10 zones, one conventional file, no limits (the option is dropped),
 *      files owned by uid 1000
 * and, where the kernel has NVMe, the NVMe ZNS namespace the group's host-setup attaches
 * (/dev/nvme0n1: 4 MiB zones of 3 MiB capacity, 4 open and 6 active zones; one case in
 * five; without it those cases are left out on that kernel, and so from the comparison).
 * Each case picks a device, resets its sequential zones, mounts it with a random option
 * string (tokens: explicit-open, errors=..., junk, empty items; sometimes read-only), then
 * runs random steps: opens of random files (sequential and conventional) with random flags
 * (O_RDONLY/O_WRONLY/O_RDWR, O_TRUNC, O_DIRECT, O_APPEND), asynchronous direct writes
 * (io_submit: stock's synchronous direct writes fail, patches/fixes/0001), truncates to random
 * sizes by path and by descriptor, closes, fsyncs, remounts with random options, zone
 * commands sent to the block device past zonefs (open, close, finish, reset) and, rarely, a
 * zone made read-only or offline by null_blk; as root or as uid 1000. Then every descriptor is
 * closed and the file system unmounted.
 *
 * After every step one line, compared with stock's line of the same name by
 * scripts/matrix.py:
 *
 *	# obs c<case>.<step> <step> = <result> | cf=<n> wro=<n> act=<n> ro=<0|1> z=<zones>
 *	  sz=<size> [opts=<options /proc/mounts shows>]
 *
 * result: a return value or an errno name; cf: zone closes that failed so far in the mount
 * (seen as zonefs's "Zone management operation ... failed" message during a close); wro, act:
 * /sys/fs/zonefs/<dev>/nr_wro_seq_files and nr_active_seq_files; ro: the file system is
 * read-only; zones: one letter per sequential file's zone (E empty, I/X implicitly/explicitly
 * open, C closed, F full, R read-only, O offline); sz: the size of the file the step used.
 * Nothing depends on timing. Once a zone close failed, the case only closes and unmounts:
 * stock keeps counting the file as a writer after a failed close (our documented difference),
 * so later opens could diverge. So too after a truncate to 0 of a file held for writing whose
 * zone zonefs had not opened (its lines then end with "t0w"): ours opens the zone for the
 * writer, stock 6.1 does not (patches/fixes/0017), and the zone states and active count differ
 * from there. tests/zonefs-explicit-open-fuzz/differences names the three differences.
 *
 * Checked on every kernel (a failure fails the run): while nothing past zonefs touched the
 * device in a case and no close failed, nr_wro_seq_files equals the sequential files held open
 * for writing and nr_active_seq_files the zones the device has active. A last phase (on two
 * CPUs) races open/write/truncate/close of a few files from two threads on an explicit-open
 * mount: afterwards no writer may be counted, no zone left explicitly open, and the active
 * count must match the device.
 *
 * Environment: KTEST_SEED (the seed; random if unset, always printed), KTEST_FUZZ_CASES
 * (default 1000), KTEST_FUZZ_SECONDS (a bound on the run time, default 480 s inside the
 * group's 600 s timeout, four times that on a debug kernel (kmemleak present), whose timeout
 * the harness multiplies by four; a run cut short says how many cases it ran). A case costs
 * about 33 ms on the stock and full kernels under TCG: 10,000 cases take 330 s.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/statvfs.h>

#include "../fuzz_rng.h"
#include "kselftest.h"
#include "../zonefs-explicit-open/zonefs_util.h"

#define MNT		"/mnt/zfz"
#define UNPRIV		1000
#define NSLOTS		8
#define MAX_STEPS	24
#define BUFSZ		(1 << 20)

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

struct devspec {
	const char *name;
	struct nullb_cfg cfg;
	const char *fmt;	/* ./mkzonefs arguments */
};

static const struct devspec specs[] = {
	{ "zfz-a", { .size_mb = 12, .zone_size_mb = 1, .zone_nr_conv = 2, .zone_max_open = 3,
		     .zone_max_active = 5 }, "" },
	{ "zfz-b", { .size_mb = 20, .zone_size_mb = 2, .zone_capacity_mb = 1, .zone_nr_conv = 1,
		     .zone_max_open = 0, .zone_max_active = 3 }, "-f perm=0666" },
	{ "zfz-c", { .size_mb = 10, .zone_size_mb = 1, .zone_nr_conv = 2 }, "-f uid=1000" },
};

#define NDEV	ARRAY_SIZE(specs)

/* the null_blk devices, then the NVMe namespace of host-setup (devs[NDEV]) */
static struct zdev devs[NDEV + 1];
static int have_nvme;
static char *buf;
static int kmsg = -1;

#define ONE_OF(a) ((a)[pick(ARRAY_SIZE(a))])

static const char *err_name(int e)
{
	static char b[4][16];
	static int i;

	switch (e) {
	case 0:			return "0";
	case EPERM:		return "EPERM";
	case ENOENT:		return "ENOENT";
	case EIO:		return "EIO";
	case EBADF:		return "EBADF";
	case EAGAIN:		return "EAGAIN";
	case EACCES:		return "EACCES";
	case EBUSY:		return "EBUSY";
	case EINVAL:		return "EINVAL";
	case EFBIG:		return "EFBIG";
	case ENOSPC:		return "ENOSPC";
	case EROFS:		return "EROFS";
	case EOVERFLOW:		return "EOVERFLOW";
	case ETOOMANYREFS:	return "ETOOMANYREFS";
	case EISDIR:		return "EISDIR";
	case ENOTTY:		return "ENOTTY";
	case EOPNOTSUPP:	return "EOPNOTSUPP";
	case ENODEV:		return "ENODEV";
	default:
		i = (i + 1) % 4;
		snprintf(b[i], sizeof(b[i]), "E%d", e);
		return b[i];
	}
}

/* A return value: negative is -errno (a ring of buffers: several per printf). */
static const char *res(long r)
{
	static char b[4][32];
	static int i;

	if (r < 0)
		return err_name(-r);
	i = (i + 1) % 4;
	snprintf(b[i], sizeof(b[i]), "%ld", r);
	return b[i];
}

/* ---- the case's state -------------------------------------------------------------- */

struct slot {
	int fd;		/* -1: free */
	int cnv;	/* the conventional file, else seq/<file> */
	unsigned int file;
	int flags;
	int user;
};

static struct {
	unsigned long nr;
	unsigned int step;
	struct zdev *d;
	struct slot slots[NSLOTS];
	int mounted;
	int cf;		/* zone closes that failed in this mount */
	int t0w;	/* a truncate to 0 of a file held for writing whose zone zonefs had not opened */
	int tampered;	/* the device was changed past zonefs in this case */
	int injected[64];	/* zone numbers made read-only (1) or offline (2) */
} cs;

static int checks_failed;

static void as_user(void)
{
	if (setgroups(0, NULL) || setresgid(-1, UNPRIV, -1) || setresuid(-1, UNPRIV, -1))
		abort();
}

static void as_root(void)
{
	if (setresuid(-1, 0, -1) || setresgid(-1, 0, -1))
		abort();
}

static const char *file_path(int cnv, unsigned int n)
{
	static char p[64];

	if (cnv)
		snprintf(p, sizeof(p), MNT "/cnv/0");
	else
		snprintf(p, sizeof(p), MNT "/seq/%u", n);
	return p;
}

/* "seq/<n>" or "cnv/0", as the obs lines name files */
static const char *file_name(int cnv, unsigned int n)
{
	static char p[4][16];
	static int i;

	i = (i + 1) % 4;
	if (cnv)
		snprintf(p[i], sizeof(p[i]), "cnv/0");
	else
		snprintf(p[i], sizeof(p[i]), "seq/%u", n);
	return p[i];
}

static long file_size(int cnv, unsigned int n)
{
	struct stat st;

	return stat(file_path(cnv, n), &st) ? -errno : st.st_size;
}

/* The options /proc/mounts shows for MNT ("-" when not mounted). */
static const char *shown_opts(void)
{
	static char line[512], opts[512];
	FILE *f = fopen("/proc/mounts", "r");

	snprintf(opts, sizeof(opts), "-");
	if (!f)
		return opts;
	while (fgets(line, sizeof(line), f)) {
		char dev[128], dir[128], type[64], o[512];

		if (sscanf(line, "%127s %127s %63s %511s", dev, dir, type, o) == 4 &&
		    !strcmp(dir, MNT)) {
			snprintf(opts, sizeof(opts), "%s", o);
			break;
		}
	}
	fclose(f);
	return opts;
}

static int fs_readonly(void)
{
	struct statvfs sv;

	if (statvfs(MNT, &sv))
		return -1;
	return !!(sv.f_flag & ST_RDONLY);
}

/* Seq files held open for writing by the slots (each file once). */
static int writers(void)
{
	unsigned int seen[64] = { 0 };
	int i, n = 0;

	for (i = 0; i < NSLOTS; i++) {
		struct slot *s = &cs.slots[i];

		if (s->fd < 0 || s->cnv || (s->flags & O_ACCMODE) == O_RDONLY)
			continue;
		if (!seen[s->file]++)
			n++;
	}
	return n;
}

/* kmsg: zonefs's "Zone management operation <op> at <sector> failed" since the mark. */
static void kmsg_mark(void)
{
	if (kmsg < 0)
		kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (kmsg >= 0)
		lseek(kmsg, 0, SEEK_END);
}

static int kmsg_mgmt_failed(void)
{
	char rec[1024];
	int n = 0;
	ssize_t r;

	if (kmsg < 0)
		return 0;
	while ((r = read(kmsg, rec, sizeof(rec) - 1)) > 0) {
		rec[r] = 0;
		if (strstr(rec, "Zone management operation") && strstr(rec, "failed"))
			n++;
	}
	return n;
}

/* One observation line for the step just done. */
static void __attribute__((format(printf, 3, 4)))
obs(long result, long size, const char *fmt, ...)
{
	char what[256], conds[128] = "-";
	long wro = -1, act = -1;
	int active = -1;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	zdev_conds(cs.d, conds, &active, NULL);
	if (cs.mounted) {
		wro = zt_sysfs(&cs.d->nb, "nr_wro_seq_files");
		act = zt_sysfs(&cs.d->nb, "nr_active_seq_files");
	}
	printf("# obs c%lu.%u %s = %s | cf=%d wro=%ld act=%ld ro=%d z=%s sz=%s%s%s%s\n",
	       cs.nr, cs.step++, what, res(result), cs.cf, wro, act,
	       cs.mounted ? fs_readonly() : -1, conds, size == LONG_MIN ? "-" : res(size),
	       strncmp(what, "mount", 5) && strncmp(what, "remount", 7) ? "" : " opts=",
	       strncmp(what, "mount", 5) && strncmp(what, "remount", 7) ? "" : shown_opts(),
	       cs.t0w ? " t0w" : "");
	/* The counters against what user space holds, where nothing else interfered. */
	if (cs.mounted && !cs.tampered && !cs.cf && !cs.t0w &&
	    (wro != writers() || act != active)) {
		printf("# check: c%lu.%u: nr_wro_seq_files %ld (writers %d), nr_active_seq_files "
		       "%ld (device %d)\n", cs.nr, cs.step - 1, wro, writers(), act, active);
		checks_failed++;
	}
}

/* ---- steps ------------------------------------------------------------------------- */

static const char *const tokens[] = {
	"explicit-open", "explicit-open", "explicit-open", "errors=remount-ro", "errors=zone-ro",
	"errors=zone-offline", "errors=repair", "", "bogus", "explicit-open=1", "explicit_open",
	"errors=", "Explicit-open",
};

static void make_opts(char *out, size_t len)
{
	size_t off = 0;
	int i, n = pick(4), eo = pick(2) ? pick(n + 1) : -1;

	out[0] = 0;
	for (i = 0; i < n && off < len; i++) {
		if (i == eo) {
			/* half the strings have the option somewhere */
			off += snprintf(out + off, len - off, "%sexplicit-open", i ? "," : "");
			continue;
		}
		/* mostly valid tokens: junk ends the mount, and the case, too often otherwise */
		const char *t = pick(4) ? tokens[pick(8)] : ONE_OF(tokens);

		off += snprintf(out + off, len - off, "%s%s", i ? "," : "", t);
	}
}

static int do_mount(void)
{
	static const char *const fallback[] = { "", "explicit-open", "explicit-open,errors=repair" };
	char opts[256];
	unsigned long flags = pick(10) ? 0 : MS_RDONLY;
	int r;

	make_opts(opts, sizeof(opts));
	r = mount(cs.d->nb.dev, MNT, "zonefs", flags, opts) ? -errno : 0;
	cs.mounted = !r;
	obs(r, LONG_MIN, "mount%s '%s'", flags ? "-ro" : "", opts);
	if (!r)
		return 0;
	snprintf(opts, sizeof(opts), "%s", ONE_OF(fallback));
	r = mount(cs.d->nb.dev, MNT, "zonefs", 0, opts) ? -errno : 0;
	cs.mounted = !r;
	obs(r, LONG_MIN, "mount '%s'", opts);
	return r;
}

static void pick_file(int *cnv, unsigned int *n)
{
	*cnv = cs.d->nr_cnv && !pick(8);
	/* mostly the first few files, so that steps meet the same zones */
	*n = pick(4) ? pick(cs.d->nr_seq < 5 ? cs.d->nr_seq : 5) : pick(cs.d->nr_seq);
	if (*cnv)
		*n = 0;
}

static struct slot *free_slot(void)
{
	int i;

	for (i = 0; i < NSLOTS; i++)
		if (cs.slots[i].fd < 0)
			return &cs.slots[i];
	return NULL;
}

static struct slot *used_slot(void)
{
	int i, n = 0, k;

	for (i = 0; i < NSLOTS; i++)
		n += cs.slots[i].fd >= 0;
	if (!n)
		return NULL;
	k = pick(n);
	for (i = 0; i < NSLOTS; i++)
		if (cs.slots[i].fd >= 0 && !k--)
			return &cs.slots[i];
	return NULL;
}

/* Whether seq/@n is held open for writing by one of the case's descriptors. */
static int held_for_writing(unsigned int n)
{
	int i;

	for (i = 0; i < NSLOTS; i++)
		if (cs.slots[i].fd >= 0 && !cs.slots[i].cnv && cs.slots[i].file == n &&
		    (cs.slots[i].flags & O_ACCMODE) != O_RDONLY)
			return 1;
	return 0;
}

/*
 * A truncate to 0 of a non-empty sequential file held for writing, whose zone zonefs may not
 * have opened (a file full at its write-open, or write-opened before a remount set the
 * option): with explicit-open, ours opens the zone for the
 * writer, or fails the truncate (or the open(O_TRUNC)) with EOVERFLOW when the device has no
 * active zone left, and stock 6.1 does neither (patches/fixes/0017).  From there the results
 * of that step, the counters and the zone states may differ; the case only closes and
 * unmounts, and its lines carry "t0w".
 */
static int t0w_candidate(int cnv, unsigned int n, long before, int writer)
{
	/*
	 * Not decided from the device's zone state: a zone opened behind zonefs' back
	 * (blk-open) shows open too (seed 1910098413 case 638), so any such truncate counts.
	 */
	return !cnv && before > 0 && (writer || held_for_writing(n));
}

static void step_open(void)
{
	static const int acc[] = { O_RDONLY, O_WRONLY, O_WRONLY, O_RDWR };
	struct slot *s = free_slot();
	int cnv, flags, user = !pick(4), fd, t0;
	unsigned int n;
	char fl[64];
	long before;

	if (!s)
		return;
	pick_file(&cnv, &n);
	flags = ONE_OF(acc);
	if (pick(4))
		flags |= O_DIRECT;
	if (!pick(6))
		flags |= O_TRUNC;
	if (!pick(5))
		flags |= O_APPEND;
	snprintf(fl, sizeof(fl), "%s%s%s%s",
		 (flags & O_ACCMODE) == O_RDONLY ? "r" : (flags & O_ACCMODE) == O_WRONLY ? "w" : "rw",
		 flags & O_DIRECT ? "+direct" : "", flags & O_TRUNC ? "+trunc" : "",
		 flags & O_APPEND ? "+append" : "");
	before = file_size(cnv, n);
	if (user)
		as_user();
	fd = open(file_path(cnv, n), flags);
	if (fd < 0)
		fd = -errno;
	if (user)
		as_root();
	/*
	 * O_TRUNC truncates whatever the access mode (O_RDONLY too, on Linux).  Decided from
	 * the state before the open: ours may refuse the open itself (EOVERFLOW: no zone for
	 * the writer) where stock opens, and the case must end the same way on both.
	 */
	t0 = (flags & O_TRUNC) && t0w_candidate(cnv, n, before,
						(flags & O_ACCMODE) != O_RDONLY);
	if (fd >= 0 && !t0) {
		s->fd = fd;
		s->cnv = cnv;
		s->file = n;
		s->flags = flags;
		s->user = user;
	}
	if (t0)
		cs.t0w = 1;
	obs(fd < 0 ? fd : 0, file_size(cnv, n), "open%s %s %s", user ? "-u" : "",
	    file_name(cnv, n), fl);
	/* not kept: a descriptor only one kernel has would shift the closes */
	if (t0 && fd >= 0)
		close(fd);
}

static void step_close(struct slot *s)
{
	const char *name = file_name(s->cnv, s->file);
	int r, f;

	kmsg_mark();
	r = close(s->fd) ? -errno : 0;
	s->fd = -1;
	/* a zone close (or the reset of an unwritten zone) that failed */
	f = kmsg_mgmt_failed();
	cs.cf += f;
	obs(r, file_size(s->cnv, s->file), "close %s%s", name, f ? " (zone command failed)" : "");
}

static void step_write(void)
{
	struct slot *s = used_slot();
	long size, len, off, r;

	if (!s)
		return;
	size = file_size(s->cnv, s->file);
	if (size < 0)
		size = 0;
	switch (pick(6)) {
	case 0: len = 4096; break;
	case 1: len = 8192; break;
	case 2: len = 65536; break;
	case 3: len = 262144; break;
	case 4: len = cs.d->cap_bytes - size; break;	/* to the end: the zone fills */
	default: len = BUFSZ; break;
	}
	if (len <= 0 || len > BUFSZ)
		len = 4096;
	switch (pick(12)) {
	case 0: off = 0; break;
	case 1: off = size + 4096; break;
	default: off = size; break;
	}
	if (s->user)
		as_user();
	r = zt_awrite(s->fd, buf, len, off);
	if (s->user)
		as_root();
	obs(r, file_size(s->cnv, s->file), "write %s %ld@%ld", file_name(s->cnv, s->file), len,
	    off);
}

static void step_truncate(void)
{
	struct slot *s = pick(2) ? used_slot() : NULL;
	int cnv, user = !pick(5), r;
	unsigned int n;
	long size, cur;

	if (s) {
		cnv = s->cnv;
		n = s->file;
		user = s->user;
	} else {
		pick_file(&cnv, &n);
	}
	cur = file_size(cnv, n);
	switch (pick(7)) {
	case 0: case 1: size = 0; break;
	case 2: case 3: size = cs.d->cap_bytes; break;
	case 4: size = cs.d->zone_bytes; break;
	case 5: size = 4096; break;
	default: size = cur < 0 ? 0 : cur; break;
	}
	if (user)
		as_user();
	if (s)
		r = ftruncate(s->fd, size) ? -errno : 0;
	else
		r = truncate(file_path(cnv, n), size) ? -errno : 0;
	if (user)
		as_root();
	/* ours may refuse the truncate (EOVERFLOW: no zone for the writer) where stock does it */
	if (!size && t0w_candidate(cnv, n, cur, 0))
		cs.t0w = 1;
	obs(r, file_size(cnv, n), "%struncate%s %s %ld", s ? "f" : "", user ? "-u" : "",
	    file_name(cnv, n), size);
}

static void step_fsync(void)
{
	struct slot *s = used_slot();
	int r;

	if (!s)
		return;
	r = fsync(s->fd) ? -errno : 0;
	obs(r, file_size(s->cnv, s->file), "fsync %s", file_name(s->cnv, s->file));
}

static void step_remount(void)
{
	unsigned long flags = MS_REMOUNT | (pick(6) ? 0 : MS_RDONLY);
	int user = !pick(8), r;
	char opts[256];

	make_opts(opts, sizeof(opts));
	if (user)
		as_user();
	r = mount(NULL, MNT, NULL, flags, opts) ? -errno : 0;
	if (user)
		as_root();
	obs(r, LONG_MIN, "remount%s%s '%s'", flags & MS_RDONLY ? "-ro" : "", user ? "-u" : "",
	    opts);
}

/* A zone command to the block device, past zonefs. */
static void step_zone_cmd(void)
{
	static const struct { unsigned long op; const char *name; } ops[] = {
		{ BLKOPENZONE, "open" }, { BLKCLOSEZONE, "close" }, { BLKFINISHZONE, "finish" },
		{ BLKRESETZONE, "reset" },
	};
	unsigned int n = pick(cs.d->nr_seq < 5 ? cs.d->nr_seq : 5), k = pick(ARRAY_SIZE(ops));
	int r;

	r = zdev_zone_op(cs.d, ops[k].op, n);
	if (!r)
		cs.tampered = 1;
	obs(r, file_size(0, n), "blk-%s seq/%u", ops[k].name, n);
}

/* null_blk makes a zone read-only or offline (writing the same again restores it). */
static int set_cond(unsigned int n, int kind)
{
	char path[PATH_MAX], v[32];

	snprintf(path, sizeof(path), NULLB_CONFIGFS "/%s/%s", cs.d->nb.name,
		 kind == 1 ? "zone_readonly" : "zone_offline");
	snprintf(v, sizeof(v), "%llu",
		 (unsigned long long)(cs.d->first_seq + n) * cs.d->zone_sectors);
	return ktest_write_str(path, v);
}

static void step_inject(void)
{
	unsigned int n = pick(cs.d->nr_seq < 5 ? cs.d->nr_seq : 5);
	int kind = 1 + pick(2), r;

	if (cs.injected[n] || !cs.d->nb.name[0])	/* null_blk only */
		return;
	r = set_cond(n, kind);
	if (!r) {
		cs.injected[n] = kind;
		cs.tampered = 1;
	}
	obs(r, file_size(0, n), "inject-%s seq/%u", kind == 1 ? "readonly" : "offline", n);
}

/* Reset every sequential zone of the device (zones made read-only or offline restored). */
static int reset_zones(struct zdev *d)
{
	struct blk_zone_range r = {
		.sector = (uint64_t)d->first_seq * d->zone_sectors,
		.nr_sectors = (uint64_t)d->nr_seq * d->zone_sectors,
	};
	int fd, ret = 0;

	fd = open(d->nb.dev, O_RDWR);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, BLKRESETZONE, &r) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static void one_case(unsigned long nr, uint64_t seed)
{
	unsigned int i, k, nsteps;
	int r;

	memset(&cs, 0, sizeof(cs));
	for (i = 0; i < NSLOTS; i++)
		cs.slots[i].fd = -1;
	cs.nr = nr;
	fuzz_seed_case(seed, nr);
	/*
	 * One case in five on the NVMe namespace: drawn the same way whether it exists or not,
	 * and where it does not, the case prints nothing (the comparison takes the cases both
	 * kernels ran).
	 */
	k = pick(5);	/* a 2/5, b 1/5, c 1/5, NVMe 1/5 */
	if (k == 4) {
		if (!have_nvme)
			return;
		k = NDEV;
	} else {
		k %= NDEV;
	}
	cs.d = &devs[k];
	r = reset_zones(cs.d);
	if (r) {
		obs(r, LONG_MIN, "reset %s", cs.d->nb.name);
		return;
	}
	if (do_mount())
		return;
	nsteps = 4 + pick(MAX_STEPS - 3);
	for (i = 0; i < nsteps && !cs.cf && !cs.t0w; i++) {
		unsigned int w = pick(100);
		struct slot *s;

		if (w < 30) {
			step_open();
		} else if (w < 47) {
			s = used_slot();
			if (s)
				step_close(s);
		} else if (w < 73) {
			step_write();
		} else if (w < 85) {
			step_truncate();
		} else if (w < 88) {
			step_fsync();
		} else if (w < 93) {
			step_remount();
		} else if (w < 98) {
			step_zone_cmd();
		} else {
			step_inject();
		}
	}
	/* the end: every descriptor closed, in slot order, then the unmount */
	for (i = 0; i < NSLOTS; i++)
		if (cs.slots[i].fd >= 0)
			step_close(&cs.slots[i]);
	r = umount(MNT) ? -errno : 0;
	cs.mounted = 0;
	obs(r, LONG_MIN, "umount");
	if (r)
		umount2(MNT, MNT_DETACH);
	for (i = 0; i < ARRAY_SIZE(cs.injected); i++)
		if (cs.injected[i])
			set_cond(i, cs.injected[i]);
}

/* ---- the race phase ---------------------------------------------------------------- */

static volatile int race_stop;

static void *racer(void *arg)
{
	uint64_t r = (uintptr_t)arg * 0x9e3779b97f4a7c15ULL + 1;
	char *b;
	long n = 0;

	if (posix_memalign((void **)&b, 4096, 8192))
		return NULL;
	memset(b, 0x5a, 8192);
	while (!race_stop) {
		char path[64];
		unsigned int f;
		int fd;

		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		f = r % 5;
		snprintf(path, sizeof(path), MNT "/seq/%u", f);
		fd = open(path, (r >> 8) % 4 ? O_WRONLY | O_DIRECT : O_RDWR);
		if (fd < 0)
			continue;
		switch ((r >> 12) % 4) {
		case 0: {
			struct stat st;

			if (!fstat(fd, &st))
				zt_awrite(fd, b, 4096, st.st_size);
			break;
		}
		case 1:
			if (ftruncate(fd, 0))
				;
			break;
		case 2:
			if (ftruncate(fd, devs[0].cap_bytes))
				;
			break;
		default:
			break;
		}
		close(fd);
		n++;
	}
	free(b);
	return (void *)n;
}

static int race_phase(unsigned int seconds, char *why, size_t len)
{
	pthread_t t[2];
	void *n0, *n1;
	char conds[128];
	int active = -1, exp = -1, r;
	long wro, act;

	reset_zones(&devs[0]);
	r = zt_mount(devs[0].nb.dev, MNT, 0, "explicit-open,errors=repair");
	if (r) {
		snprintf(why, len, "mount: %s", strerror(-r));
		return -1;
	}
	zt_pin_cpu(-1);	/* both CPUs for the race; the cases ran on CPU 0 (zt_pin_cpu()) */
	race_stop = 0;
	pthread_create(&t[0], NULL, racer, (void *)1);
	pthread_create(&t[1], NULL, racer, (void *)2);
	sleep(seconds);
	race_stop = 1;
	pthread_join(t[0], &n0);
	pthread_join(t[1], &n1);
	/*
	 * A file last referenced by an io_submit write completed on the other CPU is released
	 * a jiffy after its close, from delayed_fput (zt_pin_cpu()): give those releases up to
	 * two seconds.
	 */
	for (r = 0; r < 200; r++) {
		zdev_conds(&devs[0], conds, &active, &exp);
		wro = zt_sysfs(&devs[0].nb, "nr_wro_seq_files");
		act = zt_sysfs(&devs[0].nb, "nr_active_seq_files");
		if (wro == 0 && act == active && exp == 0)
			break;
		usleep(10000);
	}
	snprintf(why, len, "%ld + %ld open/close cycles, zones %s, nr_wro_seq_files %ld, "
		 "nr_active_seq_files %ld (device %d), read-only %d, settled after %d ms",
		 (long)n0, (long)n1, conds, wro, act, active, fs_readonly(), r * 10);
	r = wro == 0 && act == active && exp == 0 && fs_readonly() == 0 ? 0 : -1;
	if (umount(MNT)) {
		snprintf(why + strlen(why), len - strlen(why), ", umount: %s", strerror(errno));
		r = -1;
	}
	zt_cleanup_mount(MNT);
	kmsg = -1;
	return r;
}

int main(void)
{
	const char *s = getenv("KTEST_SEED"), *c = getenv("KTEST_FUZZ_CASES");
	const char *t = getenv("KTEST_FUZZ_SECONDS");
	unsigned long cases = c && *c ? strtoul(c, NULL, 0) : 1000;
	/* debug kernels (make check-debug) have kmemleak and four times the timeout */
	unsigned long limit = t && *t ? strtoul(t, NULL, 0) :
			      access("/sys/kernel/debug/kmemleak", F_OK) ? 480 : 1920;
	unsigned long i, done = 0;
	uint64_t seed = s && *s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL);
	struct timespec t0, t1;
	char why[512];
	unsigned int k;
	int r;

	zt_pin_cpu(0);	/* the cases on CPU 0: zt_pin_cpu() says why */
	ksft_print_header();
	ksft_set_plan(3);
	ksft_print_msg("seed %llu, %lu cases (KTEST_SEED=%llu replays them)\n",
		       (unsigned long long)seed, cases, (unsigned long long)seed);
	if (posix_memalign((void **)&buf, 4096, BUFSZ))
		ksft_exit_fail_msg("posix_memalign\n");
	memset(buf, 0xa5, BUFSZ);
	mkdir(MNT, 0755);
	umount(MNT);
	for (k = 0; k < NDEV; k++) {
		r = zdev_nullb(&devs[k], specs[k].name, &specs[k].cfg);
		if (r == -ENOENT)
			ksft_exit_skip("no configfs null_blk (CONFIG_BLK_DEV_NULL_BLK, CONFIGFS_FS)\n");
		if (r)
			ksft_exit_fail_msg("null_blk %s: %s\n", specs[k].name, strerror(-r));
		if (zt_mkzonefs(devs[k].nb.dev, "%s", specs[k].fmt))
			ksft_exit_fail_msg("mkzonefs %s failed\n", devs[k].nb.dev);
		ksft_print_msg("%s: %u zones of %lld KiB, capacity %lld KiB, %u conventional and "
			       "%u sequential files, max open %u, max active %u\n",
			       devs[k].nb.dev, devs[k].nr_zones, (long long)devs[k].zone_bytes >> 10,
			       (long long)devs[k].cap_bytes >> 10, devs[k].nr_cnv, devs[k].nr_seq,
			       devs[k].max_open, devs[k].max_active);
	}

	r = zdev_nvme(&devs[NDEV], "nvme0n1");
	have_nvme = !r;
	if (have_nvme && zt_mkzonefs(devs[NDEV].nb.dev, NULL))
		ksft_exit_fail_msg("mkzonefs %s failed\n", devs[NDEV].nb.dev);
	if (have_nvme)
		ksft_print_msg("%s: %u zones of %lld KiB, capacity %lld KiB, %u sequential files, "
			       "max open %u, max active %u\n", devs[NDEV].nb.dev,
			       devs[NDEV].nr_zones, (long long)devs[NDEV].zone_bytes >> 10,
			       (long long)devs[NDEV].cap_bytes >> 10, devs[NDEV].nr_seq,
			       devs[NDEV].max_open, devs[NDEV].max_active);
	else
		ksft_print_msg("no NVMe namespace (/dev/nvme0n1: %s): its cases are left out\n",
			       strerror(-r));

	/* The option exists (the baseline kernel refuses it). */
	r = zt_mount(devs[0].nb.dev, MNT, 0, "explicit-open");
	ksft_test_result(!r, "mount -o explicit-open (%s)\n", r ? strerror(-r) : "ok");
	umount(MNT);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < cases; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if ((unsigned long)(t1.tv_sec - t0.tv_sec) > limit)
			break;
		one_case(i, seed);
		fflush(stdout);
		done++;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ksft_test_result(done > 0 && !checks_failed,
			 "%lu of %lu cases in %.1f s, counters checked at every step\n",
			 done, cases, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		ksft_test_result_skip("race phase: needs two CPUs\n");
	} else {
		r = race_phase(10, why, sizeof(why));
		ksft_test_result(!r, "race phase: %s\n", why);
	}
	for (k = 0; k < NDEV; k++)
		nullb_destroy(&devs[k].nb);
	if (have_nvme)
		reset_zones(&devs[NDEV]);
	ksft_finished();
}

// SPDX-License-Identifier: GPL-2.0
/*
 * process_madvise(2): memory hints given to another process through a pidfd.
 *
 * The reference is Debian's 6.1 (upstream's implementation): MADV_COLD, MADV_PAGEOUT,
 * MADV_WILLNEED and MADV_COLLAPSE on up to UIO_MAXIOV ranges, flags must be 0, the caller needs
 * PTRACE_MODE_READ on the target and CAP_SYS_NICE, and the call returns the bytes advised (on
 * partial progress, those of the ranges done before the failing one).
 *
 * Most tests drive a "target" child: a small server that maps, fills, reads, checks and unmaps
 * memory on command, so that the test (the caller) can advise its memory and then look at the
 * effect from outside (/proc/PID/pagemap and smaps, /proc/kpageflags) and from inside (the target
 * runs mincore() and checks its data).  The caller and the target are pinned to one CPU so that the
 * per-CPU LRU batches the kernel drains before advising hold none of the target's pages.
 *
 * Needs root, swap (the group's setup puts it on zram) and an ext4 file system on /mnt/pm-ext4
 * (also made by the setup) for a regular, non-shmem file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/kernel-page-flags.h>
#include <linux/magic.h>

#include "kselftest_harness.h"
#include "pm_util.h"

#ifndef PIDFD_NONBLOCK
#define PIDFD_NONBLOCK	O_NONBLOCK	/* linux/pidfd.h, whose linux/fcntl.h clashes with libc's */
#endif
#define SZ_2M		(2UL << 20)
#define ALIGN_UP(x, a)	(((x) + (a) - 1) & ~((uint64_t)(a) - 1))
#define EXT4_DIR	"/mnt/pm-ext4"
#define TMPFS_DIR	"/tmp"

#define SEED		0x5eed0000cafe0000ULL
#define MEM_PAGES	128		/* pages of the memory-kind tests */

static long ps;

/* ---- the target: a child that works on its own memory on command ---- */

enum target_op {
	OP_MAP = 1,	/* kind, len, path -> address of a new mapping, PROT_NONE around it */
	OP_FILL,	/* addr, len, arg = seed: write the pattern */
	OP_READ,	/* addr, len: read one word of every page (faults file pages in) */
	OP_VERIFY,	/* addr, len, arg = seed -> number of pages not holding the pattern */
	OP_MINCORE,	/* addr, len -> number of resident pages (mincore(2)) */
	OP_MUNMAP,	/* addr, len */
	OP_MPROTECT,	/* addr, len, arg = prot */
	OP_MLOCK,	/* addr, len */
	OP_DROP_PRIVS,	/* arg = uid (and gid); stays dumpable */
	OP_CHURN,	/* addr, len, arg = ms: map, unmap, protect and touch pieces of it */
	OP_EXIT,
};

enum map_kind {
	KIND_ANON,		/* private anonymous, read-write */
	KIND_ANON_2M,		/* the same, 2 MiB aligned: THP eligible */
	KIND_SHARED_ANON,	/* MAP_SHARED | MAP_ANONYMOUS: shmem */
	KIND_MEMFD,		/* a memfd, MAP_SHARED: shmem */
	KIND_FILE,		/* the file at path, MAP_SHARED, read-write */
	KIND_FILE_RO,		/* the file at path, MAP_SHARED, read-only */
	KIND_RESERVE,		/* PROT_NONE, MAP_NORESERVE: address space only */
	KIND_ANON_EXEC,		/* private anonymous, read-write-execute */
};

struct target_cmd {
	int op;
	int kind;
	uint64_t addr;
	uint64_t len;
	uint64_t arg;
	char path[96];
};

struct target_reply {
	int64_t ret;
	int err;
};

struct target {
	pid_t pid;
	int pidfd;
	int cmd_fd;
	int reply_fd;
};

static uint64_t pattern(uint64_t seed, uint64_t word)
{
	return seed + word * 0x9e3779b97f4a7c15ULL;
}

static int64_t target_map(const struct target_cmd *c)
{
	size_t guard = ps, span = c->len + 2 * ps;
	int prot = PROT_READ | PROT_WRITE, flags = MAP_FIXED, fd = -1;
	char *res, *p, *m;

	if (c->kind == KIND_ANON_2M)
		span += SZ_2M;
	res = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (res == MAP_FAILED)
		return -1;
	p = res + guard;
	if (c->kind == KIND_ANON_2M)
		p = (char *)ALIGN_UP((uintptr_t)p, SZ_2M);

	switch (c->kind) {
	case KIND_ANON_EXEC:
		prot |= PROT_EXEC;
		/* fall through */
	case KIND_ANON:
	case KIND_ANON_2M:
		flags |= MAP_PRIVATE | MAP_ANONYMOUS;
		break;
	case KIND_SHARED_ANON:
		flags |= MAP_SHARED | MAP_ANONYMOUS;
		break;
	case KIND_MEMFD:
		fd = memfd_create("pm-target", MFD_CLOEXEC);
		if (fd < 0 || ftruncate(fd, c->len))
			return -1;
		flags |= MAP_SHARED;
		break;
	case KIND_FILE:
	case KIND_FILE_RO:
		fd = open(c->path, (c->kind == KIND_FILE ? O_RDWR : O_RDONLY) | O_CLOEXEC);
		if (fd < 0)
			return -1;
		if (c->kind == KIND_FILE_RO)
			prot = PROT_READ;
		flags |= MAP_SHARED;
		break;
	case KIND_RESERVE:
		return (int64_t)(uintptr_t)p;
	default:
		errno = EINVAL;
		return -1;
	}
	m = mmap(p, c->len, prot, flags, fd, 0);
	if (fd >= 0)
		close(fd);
	if (m == MAP_FAILED)
		return -1;
	return (int64_t)(uintptr_t)m;
}

static int64_t target_pages(const struct target_cmd *c)
{
	volatile uint64_t *w = (volatile uint64_t *)(uintptr_t)c->addr;
	uint64_t i, n = c->len / sizeof(*w), per_page = ps / sizeof(*w), sum = 0, bad = 0;

	for (i = 0; i < n; i++) {
		switch (c->op) {
		case OP_FILL:
			w[i] = pattern(c->arg, i);
			break;
		case OP_READ:
			if (i % per_page == 0)
				sum += w[i];
			break;
		case OP_VERIFY:
			if (w[i] != pattern(c->arg, i)) {
				bad++;
				i = (i / per_page + 1) * per_page - 1;	/* next page */
			}
			break;
		}
	}
	return c->op == OP_VERIFY ? (int64_t)bad : (int64_t)(sum & 0x7fffffff);
}

static int64_t target_mincore(const struct target_cmd *c)
{
	size_t i, n = c->len / ps;
	unsigned char *vec = calloc(n, 1);
	int64_t count = 0;

	if (!vec)
		return -1;
	if (mincore((void *)(uintptr_t)c->addr, c->len, vec)) {
		free(vec);
		return -1;
	}
	for (i = 0; i < n; i++)
		count += vec[i] & 1;
	free(vec);
	return count;
}

static int set_all_cpus(void)
{
	cpu_set_t set;
	long i, n = sysconf(_SC_NPROCESSORS_ONLN);

	CPU_ZERO(&set);
	for (i = 0; i < n && i < CPU_SETSIZE; i++)
		CPU_SET(i, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

/*
 * Change the layout of [addr, addr + len) as fast as possible for arg ms: unmap, map (private
 * or shared anonymous), protect and touch 16-page pieces, and now and then a whole 2 MiB half
 * (so that MADV_COLLAPSE finds something to collapse).  Returns the number of changes.
 */
static int64_t target_churn(const struct target_cmd *c)
{
	size_t piece = 16 * ps, npieces = c->len / piece;
	uint64_t seed = 0x2545f4914f6cdd1dULL ^ getpid(), end = now_ms() + c->arg, n = 0;

	set_all_cpus();
	while (now_ms() < end) {
		uint64_t r = xorshift(&seed);
		char *p = (char *)(uintptr_t)c->addr + (r % npieces) * piece;
		size_t len = piece, i;

		if ((r >> 32) % 16 == 0 && c->len >= 2 * SZ_2M) {
			p = (char *)(uintptr_t)c->addr + ((r >> 40) % 2) * SZ_2M;
			len = SZ_2M;
		}
		switch ((r >> 20) % 6) {
		case 0:
			munmap(p, len);
			break;
		case 1:
		case 2:
			if (mmap(p, len, PROT_READ | PROT_WRITE,
				 MAP_FIXED | MAP_ANONYMOUS |
				 ((r >> 20) % 6 == 1 ? MAP_PRIVATE : MAP_SHARED),
				 -1, 0) == MAP_FAILED)
				return -1;
			for (i = 0; i < len; i += ps)
				p[i] = (char)i;
			break;
		case 3:
			mprotect(p, len, PROT_READ);
			break;
		case 4:
			if (!mprotect(p, len, PROT_READ | PROT_WRITE))
				for (i = 0; i < len; i += ps)
					p[i]++;
			break;
		case 5:
			madvise(p, len, MADV_DONTNEED);
			break;
		}
		n++;
	}
	return n;
}

static int64_t target_do(const struct target_cmd *c)
{
	void *addr = (void *)(uintptr_t)c->addr;

	switch (c->op) {
	case OP_MAP:
		return target_map(c);
	case OP_FILL:
	case OP_READ:
	case OP_VERIFY:
		return target_pages(c);
	case OP_MINCORE:
		return target_mincore(c);
	case OP_MUNMAP:
		return munmap(addr, c->len);
	case OP_MPROTECT:
		return mprotect(addr, c->len, c->arg);
	case OP_MLOCK:
		return mlock(addr, c->len);
	case OP_DROP_PRIVS:
		if (setgroups(0, NULL) || setresgid(c->arg, c->arg, c->arg) ||
		    setresuid(c->arg, c->arg, c->arg))
			return -1;
		/* New credentials made it non-dumpable: same-user ptrace checks would fail. */
		return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	case OP_CHURN:
		return target_churn(c);
	case OP_EXIT:
		return 0;
	}
	errno = EINVAL;
	return -1;
}

static void __attribute__((noreturn)) target_main(int cmd_fd, int reply_fd)
{
	struct target_cmd c;
	struct target_reply r;

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	for (;;) {
		if (read(cmd_fd, &c, sizeof(c)) != sizeof(c))
			_exit(0);
		errno = 0;
		r.ret = target_do(&c);
		r.err = r.ret < 0 ? errno : 0;
		if (write(reply_fd, &r, sizeof(r)) != sizeof(r))
			_exit(1);
		if (c.op == OP_EXIT)
			_exit(0);
	}
}

static int target_start(struct target *t)
{
	int cmd[2], reply[2];

	if (pipe2(cmd, O_CLOEXEC) || pipe2(reply, O_CLOEXEC))
		return -1;
	t->pid = fork();
	if (t->pid < 0)
		return -1;
	if (t->pid == 0) {
		close(cmd[1]);
		close(reply[0]);
		target_main(cmd[0], reply[1]);
	}
	close(cmd[0]);
	close(reply[1]);
	t->cmd_fd = cmd[1];
	t->reply_fd = reply[0];
	t->pidfd = sys_pidfd_open(t->pid, 0);
	return t->pidfd < 0 ? -1 : 0;
}

static int target_send(struct target *t, int op, int kind, uint64_t addr, uint64_t len,
		       uint64_t arg, const char *path)
{
	struct target_cmd c = {
		.op = op, .kind = kind, .addr = addr, .len = len, .arg = arg,
	};

	if (path)
		snprintf(c.path, sizeof(c.path), "%s", path);
	return write(t->cmd_fd, &c, sizeof(c)) == sizeof(c) ? 0 : -1;
}

static int64_t target_wait(struct target *t, int *err)
{
	struct target_reply r;

	if (read(t->reply_fd, &r, sizeof(r)) != sizeof(r)) {
		r.ret = -1;
		r.err = EPIPE;
	}
	if (err)
		*err = r.err;
	errno = r.err;
	return r.ret;
}

/* One command, waiting for its reply: its result, or -1 with errno set to the target's. */
static int64_t target_call(struct target *t, int op, uint64_t addr, uint64_t len, uint64_t arg)
{
	if (target_send(t, op, 0, addr, len, arg, NULL))
		return -1;
	return target_wait(t, NULL);
}

static uint64_t target_map_kind(struct target *t, int kind, uint64_t len, const char *path)
{
	int64_t r;

	if (target_send(t, OP_MAP, kind, 0, len, 0, path))
		return 0;
	r = target_wait(t, NULL);
	return r < 0 ? 0 : (uint64_t)r;
}

static void target_stop(struct target *t)
{
	if (t->pid <= 0)
		return;
	kill(t->pid, SIGKILL);
	waitpid(t->pid, NULL, 0);
	close(t->cmd_fd);
	close(t->reply_fd);
	close(t->pidfd);
	t->pid = 0;
}

/* ---- the caller's side ---- */

struct pm_res {
	long ret;
	int err;
};

static struct pm_res pm(int pidfd, const struct iovec *iov, size_t vlen, int advice,
			unsigned int flags)
{
	struct pm_res r;

	errno = 0;
	r.ret = sys_process_madvise(pidfd, iov, vlen, advice, flags);
	r.err = r.ret < 0 ? errno : 0;
	return r;
}

#define IOV(a, l) ((struct iovec){ (void *)(uintptr_t)(a), (l) })

static const char *errname(int e)
{
	const char *s = e ? strerrorname_np(e) : "0";

	return s ? s : "?";
}

/* The call returned -1 with errno E. */
#define EXPECT_PM_ERR(e, call) do {							\
	struct pm_res __r = (call);							\
	EXPECT_EQ(-1, __r.ret);								\
	EXPECT_EQ(e, __r.err) TH_LOG("%s: expected %s, got %s (ret %ld)", #call,	\
				     errname(e), errname(__r.err), __r.ret);		\
} while (0)

/* The call returned N (bytes advised). */
#define ASSERT_PM_RET(n, call) do {							\
	struct pm_res __r = (call);							\
	ASSERT_EQ((long)(n), __r.ret) TH_LOG("%s: expected %ld, got %ld (%s)", #call,	\
					     (long)(n), __r.ret, errname(__r.err));	\
} while (0)

static int pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/*
 * Move what this CPU's LRU batches (additions, activations, deactivations) hold onto the LRU
 * lists, so that /proc/kpageflags shows the result: madvise(MADV_COLD) starts with
 * lru_add_drain().  (Also what process_madvise() itself does before each range.)
 */
static void lru_drain_this_cpu(void)
{
	static char *scratch;

	if (!scratch) {
		scratch = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		if (scratch == MAP_FAILED) {
			scratch = NULL;
			return;
		}
		scratch[0] = 1;
	}
	madvise(scratch, ps, MADV_COLD);
}

/* The /proc/kpageflags word of the page at PFN; 0 (no flag) if it cannot be read. */
static uint64_t kpageflags(uint64_t pfn)
{
	uint64_t flags = 0;
	int fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (pread(fd, &flags, sizeof(flags), pfn * sizeof(flags)) != sizeof(flags))
			flags = 0;
		close(fd);
	}
	return flags;
}

/*
 * How many of the N pages of PID from ADDR are mapped (present) and have kpageflags bit FLAG
 * set; -1 if the pagemap cannot be read.
 */
static long pages_with_kflag(pid_t pid, uint64_t addr, size_t n, int flag)
{
	uint64_t *ent = calloc(n, sizeof(*ent));
	long count = 0;
	size_t i;

	if (!ent || pagemap_read(pid, addr, n, ent)) {
		free(ent);
		return -1;
	}
	for (i = 0; i < n; i++)
		if ((ent[i] & PM_PRESENT) && (kpageflags(ent[i] & PM_PFN_MASK) >> flag & 1))
			count++;
	free(ent);
	return count;
}

/*
 * Compare the pages of PID from ADDR with what is expected: page i must be swapped out (not
 * present) if WANT_OUT[i], present otherwise.  Returns the index of the first page that differs,
 * or -1 if none does (-2 if the pagemap cannot be read).
 */
static long first_unexpected_page(pid_t pid, uint64_t addr, size_t n, const bool *want_out)
{
	uint64_t *ent = calloc(n, sizeof(*ent));
	long bad = -1;
	size_t i;

	if (!ent || pagemap_read(pid, addr, n, ent)) {
		free(ent);
		return -2;
	}
	for (i = 0; i < n && bad < 0; i++) {
		bool out = (ent[i] & PM_SWAPPED) && !(ent[i] & PM_PRESENT);
		bool in = (ent[i] & PM_PRESENT) && !(ent[i] & PM_SWAPPED);

		if (want_out[i] ? !out : !in)
			bad = i;
	}
	free(ent);
	return bad;
}

/* Write LEN bytes of the pattern to a new file PATH, on disk, with nothing of it cached. */
static int make_pattern_file(const char *path, size_t len)
{
	uint64_t *buf = malloc(len);
	size_t i;
	int fd;

	if (!buf)
		return -1;
	for (i = 0; i < len / sizeof(*buf); i++)
		buf[i] = pattern(SEED, i);
	unlink(path);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len || fsync(fd) ||
	    posix_fadvise(fd, 0, len, POSIX_FADV_DONTNEED)) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	free(buf);
	close(fd);
	return 0;
}

/*
 * Read one byte of every page of PID from ADDR through /proc/PID/mem, TIMES times.  The kernel
 * reads through get_user_pages() with FOLL_TOUCH, so each pass marks every page accessed, as a
 * read(2) of a file does: the first pass sets PG_referenced, the second activates the page (once
 * this CPU's LRU batch is drained), the third sets PG_referenced again.
 */
static int touch_via_proc_mem(pid_t pid, uint64_t addr, size_t len, int times)
{
	char path[64], c;
	size_t off;
	int fd, i, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (i = 0; i < times; i++) {
		for (off = 0; off < len; off += ps)
			if (pread(fd, &c, 1, addr + off) != 1)
				ret = -1;
		lru_drain_this_cpu();
	}
	close(fd);
	return ret;
}

/* Wait up to 2 s for the target to see N of the pages from ADDR resident; the last count. */
static int64_t wait_resident(struct target *t, uint64_t addr, size_t len, int64_t n)
{
	uint64_t end = now_ms() + 2000;
	int64_t got;

	do {
		got = target_call(t, OP_MINCORE, addr, len, 0);
		if (got == n)
			break;
		usleep(10000);
	} while (now_ms() < end);
	return got;
}

/* ---- memory of each kind: the effect of COLD, PAGEOUT and WILLNEED ---- */

FIXTURE(mem) {
	struct target t;
	uint64_t addr;
	size_t len, n;
	char path[96];
};

FIXTURE_VARIANT(mem) {
	int kind;
	const char *dir;	/* for a file: where, and the file system's magic */
	long fs_magic;
};

FIXTURE_VARIANT_ADD(mem, anon) {
	.kind = KIND_ANON,
};

FIXTURE_VARIANT_ADD(mem, shared_anon) {
	.kind = KIND_SHARED_ANON,
};

FIXTURE_VARIANT_ADD(mem, memfd) {
	.kind = KIND_MEMFD,
};

FIXTURE_VARIANT_ADD(mem, tmpfs_file) {
	.kind = KIND_FILE,
	.dir = TMPFS_DIR,
	.fs_magic = TMPFS_MAGIC,
};

FIXTURE_VARIANT_ADD(mem, ext4_file) {
	.kind = KIND_FILE_RO,
	.dir = EXT4_DIR,
	.fs_magic = EXT4_SUPER_MAGIC,
};

FIXTURE_SETUP(mem)
{
	ps = sysconf(_SC_PAGESIZE);
	self->n = MEM_PAGES;
	self->len = self->n * ps;
	ASSERT_EQ(0, pin_cpu0());
	if (variant->dir) {
		struct statfs sfs;

		ASSERT_EQ(0, statfs(variant->dir, &sfs)) TH_LOG("%s: %m", variant->dir);
		ASSERT_EQ(variant->fs_magic, (long)sfs.f_type)
			TH_LOG("%s is not the file system expected (setup not run?)", variant->dir);
		snprintf(self->path, sizeof(self->path), "%s/pm-test-%d", variant->dir, getpid());
		ASSERT_EQ(0, make_pattern_file(self->path, self->len)) TH_LOG("%s: %m", self->path);
	}
	ASSERT_EQ(0, target_start(&self->t));
	self->addr = target_map_kind(&self->t, variant->kind, self->len, self->path);
	ASSERT_NE(0, self->addr) TH_LOG("target mmap: %m");
	if (variant->dir) {
		ASSERT_LE(0, target_call(&self->t, OP_READ, self->addr, self->len, 0));
	} else {
		ASSERT_LE(0, target_call(&self->t, OP_FILL, self->addr, self->len, SEED));
	}
	ASSERT_EQ(self->n, pages_with(self->t.pid, self->addr, self->n, PM_PRESENT));
}

FIXTURE_TEARDOWN(mem)
{
	target_stop(&self->t);
	if (self->path[0])
		unlink(self->path);
}

/* PAGEOUT reclaims the pages: unmapped, not cached, anonymous ones in swap; the data survives. */
TEST_F(mem, pageout)
{
	struct iovec iov = { (void *)(uintptr_t)self->addr, self->len };
	pid_t pid = self->t.pid;

	ASSERT_EQ(self->len / 1024, smaps_kb(pid, self->addr, "Rss"));
	ASSERT_EQ(0, smaps_kb(pid, self->addr, "Swap"));

	ASSERT_PM_RET(self->len, pm(self->t.pidfd, &iov, 1, MADV_PAGEOUT, 0));

	EXPECT_EQ(0, pages_with(pid, self->addr, self->n, PM_PRESENT));
	EXPECT_EQ(0, smaps_kb(pid, self->addr, "Rss"));
	/* Reclaimed, not just unmapped: in neither the page cache nor the swap cache. */
	EXPECT_EQ(0, target_call(&self->t, OP_MINCORE, self->addr, self->len, 0));
	if (variant->kind == KIND_FILE_RO) {
		/* Clean page cache of a regular file: dropped, nothing written to swap. */
		EXPECT_EQ(0, smaps_kb(pid, self->addr, "Swap"));
	} else {
		/* Anonymous and shmem pages went to swap (smaps counts shmem swap too). */
		EXPECT_EQ(self->len / 1024, smaps_kb(pid, self->addr, "Swap"));
		if (variant->kind == KIND_ANON) {
			EXPECT_EQ(self->n, pages_with(pid, self->addr, self->n, PM_SWAPPED));
		}
	}
	/* Reading it back brings every page in again, intact. */
	EXPECT_EQ(0, target_call(&self->t, OP_VERIFY, self->addr, self->len, SEED));
	EXPECT_EQ(self->n, pages_with(pid, self->addr, self->n, PM_PRESENT));
}

/*
 * COLD deactivates the pages without reclaiming them: no longer referenced (PTE young bits and
 * PG_referenced cleared: smaps' Referenced drops to 0), moved to the inactive LRU, still mapped
 * and resident.  Every bit it must clear is set first: the pages (anonymous ones too, which start
 * on the inactive list) are made active and referenced by reading them three times.
 */
TEST_F(mem, cold)
{
	struct iovec iov = { (void *)(uintptr_t)self->addr, self->len };
	pid_t pid = self->t.pid;
	size_t n = self->n;

	ASSERT_EQ(0, touch_via_proc_mem(pid, self->addr, self->len, 3)) TH_LOG("%m");
	ASSERT_EQ(n, pages_with_kflag(pid, self->addr, n, KPF_ACTIVE));
	ASSERT_EQ(n, pages_with_kflag(pid, self->addr, n, KPF_REFERENCED));
	ASSERT_EQ(self->len / 1024, smaps_kb(pid, self->addr, "Referenced"));

	ASSERT_PM_RET(self->len, pm(self->t.pidfd, &iov, 1, MADV_COLD, 0));
	lru_drain_this_cpu();

	EXPECT_EQ(0, smaps_kb(pid, self->addr, "Referenced"));
	EXPECT_EQ(0, pages_with_kflag(pid, self->addr, n, KPF_ACTIVE));
	EXPECT_EQ(0, pages_with_kflag(pid, self->addr, n, KPF_REFERENCED));
	EXPECT_EQ(n, pages_with_kflag(pid, self->addr, n, KPF_LRU));
	/* Not reclaimed. */
	EXPECT_EQ(n, pages_with(pid, self->addr, n, PM_PRESENT));
	EXPECT_EQ(self->len / 1024, smaps_kb(pid, self->addr, "Rss"));
	EXPECT_EQ(0, smaps_kb(pid, self->addr, "Swap"));
	EXPECT_EQ(0, target_call(&self->t, OP_VERIFY, self->addr, self->len, SEED));
}

/*
 * After COLD the target's next access must be seen again: the accessed bits COLD cleared are set
 * by the CPU only if the TLB entries that cached them set were flushed.  The target touches every
 * page before (so the entries exist) and after the call; Referenced must be full again.  The
 * vector is one range per page, in reverse order, so a batched flush must cover all of them.
 */
TEST_F(mem, cold_then_touched_again)
{
	struct iovec iov[MEM_PAGES];
	pid_t pid = self->t.pid;
	size_t i;

	for (i = 0; i < self->n; i++)
		iov[i] = IOV(self->addr + (self->n - 1 - i) * ps, ps);
	ASSERT_LE(0, target_call(&self->t, OP_READ, self->addr, self->len, 0));
	ASSERT_EQ(self->len / 1024, smaps_kb(pid, self->addr, "Referenced"));

	ASSERT_PM_RET(self->len, pm(self->t.pidfd, iov, self->n, MADV_COLD, 0));
	EXPECT_EQ(0, smaps_kb(pid, self->addr, "Referenced"));

	ASSERT_LE(0, target_call(&self->t, OP_READ, self->addr, self->len, 0));
	EXPECT_EQ(self->len / 1024, smaps_kb(pid, self->addr, "Referenced"))
		TH_LOG("accesses after COLD not seen: a TLB entry was not flushed");
	EXPECT_EQ(self->n, pages_with(pid, self->addr, self->n, PM_PRESENT));
}

/*
 * WILLNEED brings reclaimed pages back into memory (the page cache, or the swap cache for
 * anonymous and shmem pages: what mincore(2) sees) without mapping them.  For a regular file it
 * is readahead, which reads at most the file's readahead window (128 KiB by default) per range:
 * the vector has one range per 64 KiB.
 */
TEST_F(mem, willneed)
{
	size_t per = 16 * ps, nr = self->len / per, i;
	struct iovec iov[MEM_PAGES / 16];
	pid_t pid = self->t.pid;

	for (i = 0; i < nr; i++)
		iov[i] = IOV(self->addr + i * per, per);
	ASSERT_PM_RET(self->len, pm(self->t.pidfd, iov, nr, MADV_PAGEOUT, 0));
	ASSERT_EQ(0, target_call(&self->t, OP_MINCORE, self->addr, self->len, 0));

	ASSERT_PM_RET(self->len, pm(self->t.pidfd, iov, nr, MADV_WILLNEED, 0));

	EXPECT_EQ(self->n, wait_resident(&self->t, self->addr, self->len, self->n));
	EXPECT_EQ(0, pages_with(pid, self->addr, self->n, PM_PRESENT));
	if (variant->kind == KIND_ANON) {
		EXPECT_EQ(self->n, pages_with(pid, self->addr, self->n, PM_SWAPPED));
	}
	EXPECT_EQ(0, target_call(&self->t, OP_VERIFY, self->addr, self->len, SEED));
}

/* ---- vectors, ranges, errors: one target with anonymous memory ---- */

FIXTURE(pm) {
	struct target t;
};

FIXTURE_SETUP(pm)
{
	ps = sysconf(_SC_PAGESIZE);
	ASSERT_EQ(0, pin_cpu0());
	ASSERT_EQ(0, target_start(&self->t));
}

FIXTURE_TEARDOWN(pm)
{
	target_stop(&self->t);
}

/* A filled private anonymous mapping of N pages in the target, all present. */
#define ANON_REGION(var, npages) do {							\
	var = target_map_kind(&self->t, KIND_ANON, (npages) * ps, NULL);		\
	ASSERT_NE(0, var) TH_LOG("target mmap: %m");					\
	ASSERT_EQ(0, target_call(&self->t, OP_FILL, var, (npages) * ps, SEED));	\
	ASSERT_EQ((long)(npages), pages_with(self->t.pid, var, npages, PM_PRESENT));	\
} while (0)

/* An address range of N pages that is not mapped in the target. */
#define HOLE(var, npages) do {								\
	var = target_map_kind(&self->t, KIND_ANON, (npages) * ps, NULL);		\
	ASSERT_NE(0, var);								\
	ASSERT_EQ(0, target_call(&self->t, OP_MUNMAP, var, (npages) * ps, 0));		\
} while (0)

/*
 * Each supported advice returns the length of a one-range vector, and does what it says:
 * PAGEOUT swaps the pages out, WILLNEED reads them back into the swap cache, COLLAPSE makes one
 * huge page of the 2 MiB range.  A range smaller than a huge page is accepted by COLLAPSE too
 * (its length is returned, as on 6.1) but collapses nothing.
 */
TEST_F(pm, advice_supported)
{
	static const int advice[] = { MADV_COLD, MADV_PAGEOUT, MADV_WILLNEED, MADV_COLLAPSE };
	size_t n = SZ_2M / ps, i;
	pid_t pid = self->t.pid;
	struct iovec small;
	uint64_t a;

	a = target_map_kind(&self->t, KIND_ANON_2M, SZ_2M, NULL);
	ASSERT_NE(0, a);
	ASSERT_EQ(0, target_call(&self->t, OP_FILL, a, SZ_2M, SEED));
	ASSERT_EQ(0, smaps_kb(pid, a, "AnonHugePages")) TH_LOG("THP mode 'always'?");
	small = IOV(a, 16 * ps);
	ASSERT_PM_RET(16 * ps, pm(self->t.pidfd, &small, 1, MADV_COLLAPSE, 0));
	EXPECT_EQ(0, smaps_kb(pid, a, "AnonHugePages"));

	for (i = 0; i < ARRAY_SIZE(advice); i++) {
		struct iovec iov = IOV(a, SZ_2M);
		struct pm_res r;

		/*
		 * COLLAPSE on pages that are only in the swap cache swaps them in, and the
		 * extra references of the fresh pages make it fail (EINVAL, on 6.1 too):
		 * give it mapped pages, as the target would have after using them.
		 */
		if (advice[i] == MADV_COLLAPSE) {
			ASSERT_EQ(0, target_call(&self->t, OP_FILL, a, SZ_2M, SEED));
		}
		r = pm(self->t.pidfd, &iov, 1, advice[i], 0);

		EXPECT_EQ(SZ_2M, r.ret) TH_LOG("advice %d: %s", advice[i], errname(r.err));
		switch (advice[i]) {
		case MADV_PAGEOUT:
			EXPECT_EQ(n, pages_with(pid, a, n, PM_SWAPPED));
			break;
		case MADV_WILLNEED:
			EXPECT_EQ(n, wait_resident(&self->t, a, SZ_2M, n));
			break;
		case MADV_COLLAPSE:
			EXPECT_EQ(SZ_2M / 1024, smaps_kb(pid, a, "AnonHugePages"));
			break;
		}
	}
	EXPECT_EQ(0, target_call(&self->t, OP_VERIFY, a, SZ_2M, SEED));
}

/*
 * Every other advice is EINVAL, including the destructive ones, and has no effect: the data is
 * still there and nothing was reclaimed.
 */
TEST_F(pm, advice_unsupported)
{
	static const int advice[] = {
		MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL, MADV_DONTNEED, MADV_FREE,
		MADV_REMOVE, MADV_DONTFORK, MADV_DOFORK, MADV_MERGEABLE, MADV_UNMERGEABLE,
		MADV_HUGEPAGE, MADV_NOHUGEPAGE, MADV_DONTDUMP, MADV_DODUMP, MADV_WIPEONFORK,
		MADV_KEEPONFORK, MADV_HWPOISON, 22 /* MADV_POPULATE_READ */,
		23 /* MADV_POPULATE_WRITE */, 24 /* MADV_DONTNEED_LOCKED */, 26, 100, -1,
	};
	uint64_t a;
	size_t i;

	ANON_REGION(a, 8);
	for (i = 0; i < ARRAY_SIZE(advice); i++) {
		struct iovec iov = IOV(a, 8 * ps);
		struct pm_res r = pm(self->t.pidfd, &iov, 1, advice[i], 0);

		EXPECT_EQ(-1, r.ret) TH_LOG("advice %d", advice[i]);
		EXPECT_EQ(EINVAL, r.err) TH_LOG("advice %d: %s", advice[i], errname(r.err));
	}
	EXPECT_EQ(8, pages_with(self->t.pid, a, 8, PM_PRESENT));
	EXPECT_EQ(0, target_call(&self->t, OP_VERIFY, a, 8 * ps, SEED));
}

/* MADV_COLLAPSE makes a THP of a 2 MiB aligned range of small anonymous pages. */
TEST_F(pm, collapse_anon)
{
	size_t n = SZ_2M / ps, i;
	struct iovec iov;
	uint64_t a, *ent;
	pid_t pid = self->t.pid;

	a = target_map_kind(&self->t, KIND_ANON_2M, SZ_2M, NULL);
	ASSERT_NE(0, a);
	ASSERT_EQ(0, a % SZ_2M);
	ASSERT_EQ(0, target_call(&self->t, OP_FILL, a, SZ_2M, SEED));
	ASSERT_EQ(n, pages_with(pid, a, n, PM_PRESENT));
	ASSERT_EQ(0, smaps_kb(pid, a, "AnonHugePages")) TH_LOG("THP mode 'always'?");

	iov = IOV(a, SZ_2M);
	ASSERT_PM_RET(SZ_2M, pm(self->t.pidfd, &iov, 1, MADV_COLLAPSE, 0));

	EXPECT_EQ(SZ_2M / 1024, smaps_kb(pid, a, "AnonHugePages"));
	ent = calloc(n, sizeof(*ent));
	ASSERT_NE(NULL, ent);
	ASSERT_EQ(0, pagemap_read(pid, a, n, ent));
	EXPECT_TRUE(kpageflags(ent[0] & PM_PFN_MASK) >> KPF_THP & 1);
	EXPECT_EQ(0, (ent[0] & PM_PFN_MASK) % n);
	for (i = 1; i < n; i++)
		if ((ent[i] & PM_PFN_MASK) != (ent[0] & PM_PFN_MASK) + i)
			break;
	EXPECT_EQ(n, i) TH_LOG("page %zu is not part of the huge page", i);
	free(ent);
	EXPECT_EQ(0, target_call(&self->t, OP_VERIFY, a, SZ_2M, SEED));

	/* A VMA too small to hold a huge page is not eligible: EINVAL. */
	ANON_REGION(a, 16);
	iov = IOV(a, 16 * ps);
	EXPECT_PM_ERR(EINVAL, pm(self->t.pidfd, &iov, 1, MADV_COLLAPSE, 0));
	EXPECT_EQ(16, pages_with(pid, a, 16, PM_PRESENT));
}

/* The return value counts iov_len as given, not rounded to pages; the last page is advised. */
TEST_F(pm, range_partial_page)
{
	bool out[4] = { true, true, false, false };
	struct iovec iov;
	uint64_t a;

	ANON_REGION(a, 4);
	iov = IOV(a, ps + 1);
	ASSERT_PM_RET(ps + 1, pm(self->t.pidfd, &iov, 1, MADV_PAGEOUT, 0));
	EXPECT_EQ(-1, first_unexpected_page(self->t.pid, a, 4, out));
	iov = IOV(a + 3 * ps, 1);
	ASSERT_PM_RET(1, pm(self->t.pidfd, &iov, 1, MADV_PAGEOUT, 0));
	out[3] = true;
	EXPECT_EQ(-1, first_unexpected_page(self->t.pid, a, 4, out));
}

/* Many ranges: exactly the pages named are paged out (every other page here). */
static void many_ranges(struct __test_metadata *_metadata, struct target *t, size_t nr)
{
	size_t n = 2 * nr, i;
	struct iovec *iov = calloc(nr, sizeof(*iov));
	bool *out = calloc(n, sizeof(*out));
	uint64_t a;

	ASSERT_NE(NULL, iov);
	ASSERT_NE(NULL, out);
	a = target_map_kind(t, KIND_ANON, n * ps, NULL);
	ASSERT_NE(0, a);
	ASSERT_EQ(0, target_call(t, OP_FILL, a, n * ps, SEED));
	for (i = 0; i < nr; i++) {
		/* Not in address order: last range first. */
		iov[i] = IOV(a + 2 * (nr - 1 - i) * ps, ps);
		out[2 * i] = true;
	}
	ASSERT_PM_RET(nr * ps, pm(t->pidfd, iov, nr, MADV_PAGEOUT, 0));
	EXPECT_EQ(-1, first_unexpected_page(t->pid, a, n, out));
	EXPECT_EQ(0, target_call(t, OP_VERIFY, a, n * ps, SEED));
	free(iov);
	free(out);
}

TEST_F(pm, iov_many)
{
	many_ranges(_metadata, &self->t, 37);
}

TEST_F(pm, iov_max)
{
	many_ranges(_metadata, &self->t, PM_UIO_MAXIOV);
}

/*
 * More than UIO_MAXIOV ranges: EINVAL, nothing done.  (6.1 passes vlen on to import_iovec() as
 * an unsigned int, so 2^32 + 1 counts as 1 range: a quirk not tested here.)
 */
TEST_F(pm, iov_too_many)
{
	size_t nr = PM_UIO_MAXIOV + 1, i;
	struct iovec *iov = calloc(nr, sizeof(*iov));
	uint64_t a;

	ASSERT_NE(NULL, iov);
	ANON_REGION(a, 8);
	for (i = 0; i < nr; i++)
		iov[i] = IOV(a + (i % 8) * ps, ps);
	EXPECT_PM_ERR(EINVAL, pm(self->t.pidfd, iov, nr, MADV_PAGEOUT, 0));
	EXPECT_PM_ERR(EINVAL, pm(self->t.pidfd, iov, SIZE_MAX, MADV_PAGEOUT, 0));
	EXPECT_EQ(8, pages_with(self->t.pid, a, 8, PM_PRESENT));
	free(iov);
}

/* No range at all: 0 bytes, whatever the vector pointer. */
TEST_F(pm, iov_empty)
{
	struct iovec iov;
	uint64_t a;

	ANON_REGION(a, 2);
	iov = IOV(a, 2 * ps);
	ASSERT_PM_RET(0, pm(self->t.pidfd, &iov, 0, MADV_PAGEOUT, 0));
	ASSERT_PM_RET(0, pm(self->t.pidfd, NULL, 0, MADV_PAGEOUT, 0));
	EXPECT_EQ(2, pages_with(self->t.pid, a, 2, PM_PRESENT));
}

/*
 * Zero-length ranges add nothing and are never looked up, even at an address that is not mapped;
 * the ranges around them are advised.
 */
TEST_F(pm, iov_zero_length)
{
	bool out[3] = { true, false, true };
	struct iovec iov[4];
	uint64_t a, hole;

	ANON_REGION(a, 3);
	HOLE(hole, 1);
	iov[0] = IOV(a, ps);
	iov[1] = IOV(hole, 0);
	iov[2] = IOV(a + ps, 0);
	iov[3] = IOV(a + 2 * ps, ps);
	ASSERT_PM_RET(2 * ps, pm(self->t.pidfd, iov, 4, MADV_PAGEOUT, 0));
	EXPECT_EQ(-1, first_unexpected_page(self->t.pid, a, 3, out));

	iov[0] = IOV(hole, 0);
	iov[1] = IOV(NULL, 0);
	ASSERT_PM_RET(0, pm(self->t.pidfd, iov, 2, MADV_PAGEOUT, 0));
	EXPECT_EQ(-1, first_unexpected_page(self->t.pid, a, 3, out));
}

/*
 * Empty ranges, row by row, as 6.1 walks its vector (an iov_iter): a vector of no bytes returns 0
 * whatever its addresses; otherwise the first range is checked even when empty (an unaligned
 * one is EINVAL), and an empty range after it is skipped without being looked at, so it neither
 * fails the call nor stops it.  Each row is run with PAGEOUT (and its residency checked) and
 * with COLD.  Address codes: A, B, C are mapped pages, H a hole, K a kernel address, U an
 * unaligned address in A, R 3 GiB of reserved address space (capped at MAX_RW_COUNT, after which
 * every later range is cut to 0).
 */
struct zl_row {
	const char *name;
	int nr;
	char at[4];		/* address code of each range */
	long len[4];		/* length in pages; -1: 1 byte; -3: 3 GiB */
	long ret;		/* in pages, or -errno; -1000: PM_MAX_RW_COUNT */
	const char *out;	/* A B C paged out ('1') or not */
};

static const struct zl_row zl_rows[] = {
	{ "middle unaligned empty", 3, "AUB", { 1, 0, 1 }, 2, "110" },
	{ "alone unaligned empty", 1, "U", { 0 }, 0, "000" },
	{ "alone address 1", 1, "1", { 0 }, 0, "000" },
	{ "two unaligned empty", 2, "U1", { 0, 0 }, 0, "000" },
	{ "three NULL empty", 3, "000", { 0, 0, 0 }, 0, "000" },
	{ "first unaligned empty", 2, "UA", { 0, 1 }, -EINVAL, "000" },
	{ "first address 1 empty", 2, "1B", { 0, 1 }, -EINVAL, "000" },
	{ "first aligned empty", 3, "AUB", { 0, 0, 1 }, 1, "010" },
	{ "first hole empty", 2, "HA", { 0, 1 }, 1, "100" },
	{ "last unaligned empty", 2, "AU", { 1, 0 }, 1, "100" },
	{ "empty then hole", 3, "AUH", { 1, 0, 1 }, 1, "100" },
	{ "empty hole between", 4, "B1HC", { 1, 0, 0, 1 }, 2, "011" },
	{ "first kernel empty", 2, "KA", { 0, 1 }, -EFAULT, "000" },
	{ "later kernel empty", 2, "AK", { 1, 0 }, -EFAULT, "000" },
	{ "partial then empty", 3, "AUB", { -1, 0, 1 }, -1002, "110" },
	{ "capped then unaligned", 3, "RUB", { -3, 1, 1 }, -1000, "000" },
	{ "capped then hole", 3, "RHB", { -3, 1, 1 }, -1000, "000" },
};

TEST_F(pm, iov_empty_ranges_rows)
{
	static const int advice[] = { MADV_PAGEOUT, MADV_COLD };
	uint64_t abc, hole, res;
	size_t r, k;

	res = target_map_kind(&self->t, KIND_RESERVE, 3UL << 30, NULL);
	ASSERT_NE(0, res);
	HOLE(hole, 1);
	for (r = 0; r < ARRAY_SIZE(zl_rows); r++) {
		const struct zl_row *z = &zl_rows[r];

		for (k = 0; k < ARRAY_SIZE(advice); k++) {
			bool out[3];
			struct iovec iov[4];
			long want;
			int i;

			ANON_REGION(abc, 3);
			for (i = 0; i < z->nr; i++) {
				uint64_t base = 0;

				switch (z->at[i]) {
				case 'A': base = abc; break;
				case 'B': base = abc + ps; break;
				case 'C': base = abc + 2 * ps; break;
				case 'U': base = abc + 1; break;
				case 'H': base = hole; break;
				case 'K': base = 0xffff888000000000UL; break;
				case 'R': base = res; break;
				case '1': base = 1; break;
				}
				iov[i] = IOV(base, z->len[i] == -1 ? 1 : z->len[i] == -3 ?
					     3UL << 30 : z->len[i] * ps);
			}
			want = z->ret == -1000 ? PM_MAX_RW_COUNT :
			       z->ret == -1002 ? 1 + ps : z->ret >= 0 ? z->ret * ps : -1;
			{
				struct pm_res got = pm(self->t.pidfd, iov, z->nr, advice[k], 0);

				EXPECT_EQ(want, got.ret) TH_LOG("row '%s', advice %d: %ld (%s)",
								z->name, advice[k], got.ret,
								errname(got.err));
				if (z->ret < 0 && z->ret > -1000) {
					EXPECT_EQ(-z->ret, got.err) TH_LOG("row '%s': %s", z->name,
									   errname(got.err));
				}
			}
			for (i = 0; i < 3; i++)
				out[i] = advice[k] == MADV_PAGEOUT && z->out[i] == '1';
			EXPECT_EQ(-1, first_unexpected_page(self->t.pid, abc, 3, out))
				TH_LOG("row '%s', advice %d", z->name, advice[k]);
			ASSERT_EQ(0, target_call(&self->t, OP_MUNMAP, abc, 3 * ps, 0));
		}
	}
}

/*
 * A vector that alternates between pages of an executable mapping and of a data mapping, for COLD
 * then PAGEOUT: every page of both is deactivated (Referenced 0), accesses after it are seen
 * again (the TLB was flushed for both kinds of mapping), and PAGEOUT swaps out all of them.
 */
TEST_F(pm, exec_and_data_vector)
{
	size_t n = 8, i;
	struct iovec iov[16];
	uint64_t x, d;
	pid_t pid = self->t.pid;

	x = target_map_kind(&self->t, KIND_ANON_EXEC, n * ps, NULL);
	ASSERT_NE(0, x) TH_LOG("target mmap PROT_EXEC: %m");
	ANON_REGION(d, 8);
	ASSERT_EQ(0, target_call(&self->t, OP_FILL, x, n * ps, SEED + 1));
	for (i = 0; i < n; i++) {
		iov[2 * i] = IOV(x + i * ps, ps);
		iov[2 * i + 1] = IOV(d + (n - 1 - i) * ps, ps);
	}
	ASSERT_LE(0, target_call(&self->t, OP_READ, x, n * ps, 0));
	ASSERT_LE(0, target_call(&self->t, OP_READ, d, n * ps, 0));
	ASSERT_EQ(n * ps / 1024, smaps_kb(pid, x, "Referenced"));
	ASSERT_EQ(n * ps / 1024, smaps_kb(pid, d, "Referenced"));

	ASSERT_PM_RET(2 * n * ps, pm(self->t.pidfd, iov, 2 * n, MADV_COLD, 0));
	EXPECT_EQ(0, smaps_kb(pid, x, "Referenced"));
	EXPECT_EQ(0, smaps_kb(pid, d, "Referenced"));
	ASSERT_LE(0, target_call(&self->t, OP_READ, x, n * ps, 0));
	ASSERT_LE(0, target_call(&self->t, OP_READ, d, n * ps, 0));
	EXPECT_EQ(n * ps / 1024, smaps_kb(pid, x, "Referenced"));
	EXPECT_EQ(n * ps / 1024, smaps_kb(pid, d, "Referenced"));

	ASSERT_PM_RET(2 * n * ps, pm(self->t.pidfd, iov, 2 * n, MADV_PAGEOUT, 0));
	EXPECT_EQ(n, pages_with(pid, x, n, PM_SWAPPED));
	EXPECT_EQ(n, pages_with(pid, d, n, PM_SWAPPED));
	EXPECT_EQ(0, target_call(&self->t, OP_VERIFY, x, n * ps, SEED + 1));
	EXPECT_EQ(0, target_call(&self->t, OP_VERIFY, d, n * ps, SEED));
}

/* Overlapping and repeated ranges are each advised and each counted. */
TEST_F(pm, iov_overlap)
{
	bool out[16] = { 0 };
	struct iovec iov[3];
	uint64_t a;
	int i;

	ANON_REGION(a, 16);
	iov[0] = IOV(a, 8 * ps);
	iov[1] = IOV(a + 4 * ps, 8 * ps);
	iov[2] = IOV(a + 4 * ps, 8 * ps);
	ASSERT_PM_RET(24 * ps, pm(self->t.pidfd, iov, 3, MADV_PAGEOUT, 0));
	for (i = 0; i < 12; i++)
		out[i] = true;
	EXPECT_EQ(-1, first_unexpected_page(self->t.pid, a, 16, out));
	EXPECT_EQ(0, target_call(&self->t, OP_VERIFY, a, 16 * ps, SEED));
}

/* One range over three VMAs (different protections) is advised as a whole. */
TEST_F(pm, range_crosses_vmas)
{
	struct iovec iov;
	bool out[12];
	uint64_t a;
	int i;

	ANON_REGION(a, 12);
	ASSERT_EQ(0, target_call(&self->t, OP_MPROTECT, a + 4 * ps, 4 * ps, PROT_READ));
	/* Three VMAs now: smaps sees the middle one alone. */
	ASSERT_EQ(4 * ps / 1024, smaps_kb(self->t.pid, a + 4 * ps, "Rss"));
	iov = IOV(a, 12 * ps);
	ASSERT_PM_RET(12 * ps, pm(self->t.pidfd, &iov, 1, MADV_PAGEOUT, 0));
	for (i = 0; i < 12; i++)
		out[i] = true;
	EXPECT_EQ(-1, first_unexpected_page(self->t.pid, a, 12, out));
	EXPECT_EQ(0, target_call(&self->t, OP_VERIFY, a, 12 * ps, SEED));
}

/*
 * A range with a hole in it fails with ENOMEM, like madvise(2), after advising what is mapped
 * on both sides of the hole.
 */
TEST_F(pm, range_spans_hole)
{
	bool out[12] = { 0 };
	struct iovec iov;
	uint64_t a;
	int i;

	ANON_REGION(a, 12);
	ASSERT_EQ(0, target_call(&self->t, OP_MUNMAP, a + 4 * ps, 4 * ps, 0));
	iov = IOV(a, 12 * ps);
	EXPECT_PM_ERR(ENOMEM, pm(self->t.pidfd, &iov, 1, MADV_PAGEOUT, 0));
	for (i = 0; i < 4; i++)
		out[i] = out[8 + i] = true;
	/* Both sides of the hole are swapped out; the hole is still a hole. */
	EXPECT_EQ(0, pages_with(self->t.pid, a + 4 * ps, 4, PM_PRESENT));
	EXPECT_EQ(0, pages_with(self->t.pid, a + 4 * ps, 4, PM_SWAPPED));
	EXPECT_EQ(-1, first_unexpected_page(self->t.pid, a, 4, out));
	EXPECT_EQ(-1, first_unexpected_page(self->t.pid, a + 8 * ps, 4, out + 8));
}

/*
 * Partial progress: a range that fails ends the call, which returns the bytes of the ranges
 * before it; the ranges after it are not advised.
 */
TEST_F(pm, partial_progress)
{
	bool out[8] = { true, true, true, false, false, false, false, false };
	struct iovec iov[4];
	uint64_t a, hole;

	ANON_REGION(a, 8);
	HOLE(hole, 2);
	iov[0] = IOV(a, 2 * ps);
	iov[1] = IOV(a + 2 * ps, ps - 100);
	iov[2] = IOV(hole, 2 * ps);
	iov[3] = IOV(a + 4 * ps, 4 * ps);
	ASSERT_PM_RET(3 * ps - 100, pm(self->t.pidfd, iov, 4, MADV_PAGEOUT, 0));
	EXPECT_EQ(-1, first_unexpected_page(self->t.pid, a, 8, out));

	/* An unaligned start fails the same way. */
	iov[2] = IOV(a + 5 * ps + 8, ps);
	ASSERT_PM_RET(3 * ps - 100, pm(self->t.pidfd, iov, 4, MADV_PAGEOUT, 0));
	EXPECT_EQ(-1, first_unexpected_page(self->t.pid, a, 8, out));
	EXPECT_EQ(0, target_call(&self->t, OP_VERIFY, a, 8 * ps, SEED));
}

/* When the first range fails there is no progress: -1 and its errno; later ranges untouched. */
TEST_F(pm, first_range_fails)
{
	struct iovec iov[2];
	uint64_t a, hole;

	ANON_REGION(a, 4);
	HOLE(hole, 1);
	iov[0] = IOV(hole, ps);
	iov[1] = IOV(a, 4 * ps);
	EXPECT_PM_ERR(ENOMEM, pm(self->t.pidfd, iov, 2, MADV_PAGEOUT, 0));
	EXPECT_PM_ERR(ENOMEM, pm(self->t.pidfd, iov, 2, MADV_COLD, 0));
	EXPECT_PM_ERR(ENOMEM, pm(self->t.pidfd, iov, 2, MADV_WILLNEED, 0));
	EXPECT_PM_ERR(ENOMEM, pm(self->t.pidfd, iov, 2, MADV_COLLAPSE, 0));
	EXPECT_EQ(4, pages_with(self->t.pid, a, 4, PM_PRESENT));
}

/* Ranges that are not mapped in the target: ENOMEM. */
TEST_F(pm, range_unmapped)
{
	struct iovec iov;
	uint64_t hole;

	HOLE(hole, 4);
	iov = IOV(hole, 4 * ps);
	EXPECT_PM_ERR(ENOMEM, pm(self->t.pidfd, &iov, 1, MADV_PAGEOUT, 0));
	EXPECT_PM_ERR(ENOMEM, pm(self->t.pidfd, &iov, 1, MADV_COLD, 0));
	/* The lowest page and the last user page are not mapped either. */
	iov = IOV(0, ps);
	EXPECT_PM_ERR(ENOMEM, pm(self->t.pidfd, &iov, 1, MADV_PAGEOUT, 0));
	iov = IOV(0x7ffffffff000UL - ps, ps);
	EXPECT_PM_ERR(ENOMEM, pm(self->t.pidfd, &iov, 1, MADV_COLD, 0));
}

/* Addresses are the target's: mapped there but not in the caller works, and the reverse fails. */
TEST_F(pm, range_is_target_address)
{
	unsigned char vec;
	struct iovec iov;
	uint64_t a, hole;
	char *mine;

	ANON_REGION(a, 2);
	ASSERT_EQ(-1, mincore((void *)(uintptr_t)a, ps, &vec));
	ASSERT_EQ(ENOMEM, errno) TH_LOG("the target's address is mapped in the caller");
	iov = IOV(a, 2 * ps);
	ASSERT_PM_RET(2 * ps, pm(self->t.pidfd, &iov, 1, MADV_PAGEOUT, 0));
	EXPECT_EQ(2, pages_with(self->t.pid, a, 2, PM_SWAPPED));

	HOLE(hole, 2);
	mine = mmap((void *)(uintptr_t)hole, 2 * ps, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ASSERT_EQ((void *)(uintptr_t)hole, mine)
		TH_LOG("the target's hole is mapped in the caller");
	memset(mine, 1, 2 * ps);
	iov = IOV(mine, 2 * ps);
	EXPECT_PM_ERR(ENOMEM, pm(self->t.pidfd, &iov, 1, MADV_PAGEOUT, 0));
	EXPECT_EQ(2, pages_with(getpid(), (uintptr_t)mine, 2, PM_PRESENT));
	munmap(mine, 2 * ps);
}

/* Bad range starts and lengths. */
TEST_F(pm, range_invalid)
{
	struct iovec iov;
	uint64_t a;

	ANON_REGION(a, 4);
	/* Start not page aligned: EINVAL. */
	iov = IOV(a + 1, ps);
	EXPECT_PM_ERR(EINVAL, pm(self->t.pidfd, &iov, 1, MADV_PAGEOUT, 0));
	/* A length that is negative as ssize_t: EINVAL (checked when the vector is copied in). */
	iov = IOV(a, (size_t)-ps);
	EXPECT_PM_ERR(EINVAL, pm(self->t.pidfd, &iov, 1, MADV_PAGEOUT, 0));
	/* Not user addresses, or a range that runs past the end of user space: EFAULT. */
	iov = IOV(0xffff888000000000UL, ps);
	EXPECT_PM_ERR(EFAULT, pm(self->t.pidfd, &iov, 1, MADV_COLD, 0));
	iov = IOV(0xffffffffff600000UL, ps);	/* the vsyscall page */
	EXPECT_PM_ERR(EFAULT, pm(self->t.pidfd, &iov, 1, MADV_COLD, 0));
	iov = IOV(a, 0x800000000000UL);
	EXPECT_PM_ERR(EFAULT, pm(self->t.pidfd, &iov, 1, MADV_COLD, 0));
	EXPECT_EQ(4, pages_with(self->t.pid, a, 4, PM_PRESENT));
	EXPECT_EQ(0, target_call(&self->t, OP_VERIFY, a, 4 * ps, SEED));
}

/* Locked pages cannot be deactivated or reclaimed: EINVAL, and they stay. */
TEST_F(pm, range_mlocked)
{
	struct iovec iov;
	uint64_t a;

	ANON_REGION(a, 4);
	ASSERT_EQ(0, target_call(&self->t, OP_MLOCK, a, 4 * ps, 0));
	iov = IOV(a, 4 * ps);
	EXPECT_PM_ERR(EINVAL, pm(self->t.pidfd, &iov, 1, MADV_PAGEOUT, 0));
	EXPECT_PM_ERR(EINVAL, pm(self->t.pidfd, &iov, 1, MADV_COLD, 0));
	EXPECT_EQ(4, pages_with(self->t.pid, a, 4, PM_PRESENT));
	EXPECT_EQ(0, pages_with(self->t.pid, a, 4, PM_SWAPPED));
}

/*
 * The byte count is capped like every vectored call's, at MAX_RW_COUNT: a 3 GiB range of
 * reserved address space is advised as its first MAX_RW_COUNT bytes.
 */
TEST_F(pm, range_capped_at_max_rw_count)
{
	uint64_t len = 3UL << 30, a;
	struct iovec iov[2];

	a = target_map_kind(&self->t, KIND_RESERVE, len, NULL);
	ASSERT_NE(0, a);
	iov[0] = IOV(a, len);
	ASSERT_PM_RET(PM_MAX_RW_COUNT, pm(self->t.pidfd, iov, 1, MADV_COLD, 0));
	iov[0] = IOV(a, 1UL << 30);
	iov[1] = IOV(a + (1UL << 30), 2UL << 30);
	ASSERT_PM_RET(PM_MAX_RW_COUNT, pm(self->t.pidfd, iov, 2, MADV_PAGEOUT, 0));
}

/* The vector itself must be readable by the caller: EFAULT, nothing done. */
TEST_F(pm, iovec_fault)
{
	struct iovec *iov;
	uint64_t a;

	ANON_REGION(a, 2);
	EXPECT_PM_ERR(EFAULT, pm(self->t.pidfd, NULL, 1, MADV_PAGEOUT, 0));
	iov = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, iov);
	ASSERT_EQ(0, munmap((char *)iov + ps, ps));
	/* Unmapped memory. */
	EXPECT_PM_ERR(EFAULT, pm(self->t.pidfd, (struct iovec *)((char *)iov + ps), 1,
				 MADV_PAGEOUT, 0));
	/* A vector whose last element runs into the unmapped page. */
	iov = (struct iovec *)((char *)iov + ps) - 2;
	iov[0] = IOV(a, ps);
	iov[1] = IOV(a + ps, ps);
	ASSERT_PM_RET(2 * ps, pm(self->t.pidfd, iov, 2, MADV_COLD, 0));
	EXPECT_PM_ERR(EFAULT, pm(self->t.pidfd, iov, 3, MADV_PAGEOUT, 0));
	/* Not readable. */
	ASSERT_EQ(0, mprotect((char *)iov - ps + 2 * sizeof(*iov), ps, PROT_NONE));
	EXPECT_PM_ERR(EFAULT, pm(self->t.pidfd, iov, 2, MADV_PAGEOUT, 0));
	/* A kernel address. */
	EXPECT_PM_ERR(EFAULT, pm(self->t.pidfd, (struct iovec *)0xffff888000000000UL, 1,
				 MADV_PAGEOUT, 0));
	EXPECT_EQ(2, pages_with(self->t.pid, a, 2, PM_PRESENT));
	munmap((char *)iov - ps + 2 * sizeof(*iov), ps);
}

/* flags is reserved: anything but 0 is EINVAL, before anything else is looked at. */
TEST_F(pm, flags_nonzero)
{
	static const unsigned int flags[] = { 1, 2, 0x80, 0x80000000u, ~0u };
	struct iovec iov;
	uint64_t a;
	size_t i;

	ANON_REGION(a, 2);
	iov = IOV(a, 2 * ps);
	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		EXPECT_PM_ERR(EINVAL, pm(self->t.pidfd, &iov, 1, MADV_PAGEOUT, flags[i]));
	}
	EXPECT_EQ(2, pages_with(self->t.pid, a, 2, PM_PRESENT));
}

/* A process may advise itself through its own pidfd: same advice, same rules. */
TEST(self_pidfd)
{
	struct iovec iov;
	int pidfd;
	char *p;

	ps = sysconf(_SC_PAGESIZE);
	ASSERT_EQ(0, pin_cpu0());
	pidfd = sys_pidfd_open(getpid(), 0);
	ASSERT_LE(0, pidfd);
	p = mmap(NULL, 8 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 0x5a, 8 * ps);
	iov = IOV(p, 8 * ps);
	ASSERT_PM_RET(8 * ps, pm(pidfd, &iov, 1, MADV_PAGEOUT, 0));
	EXPECT_EQ(8, pages_with(getpid(), (uintptr_t)p, 8, PM_SWAPPED));
	EXPECT_EQ(0x5a, p[3 * ps]);
	/* Not even for itself does it accept madvise(2)'s other advice. */
	EXPECT_PM_ERR(EINVAL, pm(pidfd, &iov, 1, MADV_DONTNEED, 0));
	EXPECT_EQ(0x5a, p[7 * ps]);
	close(pidfd);

	/* A non-blocking pidfd is just as good. */
	pidfd = sys_pidfd_open(getpid(), PIDFD_NONBLOCK);
	ASSERT_LE(0, pidfd);
	ASSERT_PM_RET(8 * ps, pm(pidfd, &iov, 1, MADV_PAGEOUT, 0));
	EXPECT_EQ(8, pages_with(getpid(), (uintptr_t)p, 8, PM_SWAPPED));
	EXPECT_EQ(0x5a, p[5 * ps]);
	munmap(p, 8 * ps);
	close(pidfd);
}

/* ---- which processes, and who may ---- */

/* A file descriptor that is not open: EBADF. */
TEST(pidfd_closed)
{
	struct iovec iov = IOV(0x10000, 4096);
	int fd = sys_pidfd_open(getpid(), 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, close(fd));
	EXPECT_PM_ERR(EBADF, pm(fd, &iov, 1, MADV_COLD, 0));
	EXPECT_PM_ERR(EBADF, pm(-1, &iov, 1, MADV_COLD, 0));
	EXPECT_PM_ERR(EBADF, pm(INT32_MAX, &iov, 1, MADV_COLD, 0));
}

/* A file descriptor that is not a pidfd (even /proc/PID of the process): EBADF. */
TEST(pidfd_not_a_pidfd)
{
	struct iovec iov = IOV(0x10000, 4096);
	char path[32];
	int fd, p[2];

	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_PM_ERR(EBADF, pm(fd, &iov, 1, MADV_COLD, 0));
	close(fd);
	snprintf(path, sizeof(path), "/proc/%d", getpid());
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_PM_ERR(EBADF, pm(fd, &iov, 1, MADV_COLD, 0));
	close(fd);
	ASSERT_EQ(0, pipe(p));
	EXPECT_PM_ERR(EBADF, pm(p[0], &iov, 1, MADV_PAGEOUT, 0));
	close(p[0]);
	close(p[1]);
}

/* A child that has exited: ESRCH whether it is still a zombie (no mm) or reaped. */
TEST(target_exited)
{
	struct iovec iov = IOV(0x10000, 4096);
	siginfo_t si = { 0 };
	int pidfd;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(0);
	pidfd = sys_pidfd_open(pid, 0);
	ASSERT_LE(0, pidfd);
	/* Wait for the exit without reaping it. */
	ASSERT_EQ(0, waitid(P_PID, pid, &si, WEXITED | WNOWAIT));
	ASSERT_EQ(pid, si.si_pid);
	EXPECT_PM_ERR(ESRCH, pm(pidfd, &iov, 1, MADV_COLD, 0));
	EXPECT_PM_ERR(ESRCH, pm(pidfd, &iov, 0, MADV_PAGEOUT, 0));
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
	EXPECT_PM_ERR(ESRCH, pm(pidfd, &iov, 1, MADV_COLD, 0));
	EXPECT_PM_ERR(ESRCH, pm(pidfd, &iov, 1, MADV_PAGEOUT, 0));
	close(pidfd);
}

/* A kernel thread (kthreadd, pid 2) has no mm: ESRCH. */
TEST(target_kthread)
{
	struct iovec iov = IOV(0x10000, 4096);
	char comm[32] = "";
	int pidfd, fd;

	fd = open("/proc/2/comm", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_LT(0, read(fd, comm, sizeof(comm) - 1));
	close(fd);
	ASSERT_STREQ("kthreadd\n", comm);
	pidfd = sys_pidfd_open(2, 0);
	ASSERT_LE(0, pidfd) TH_LOG("pidfd_open(2): %m");
	EXPECT_PM_ERR(ESRCH, pm(pidfd, &iov, 1, MADV_COLD, 0));
	EXPECT_PM_ERR(ESRCH, pm(pidfd, &iov, 1, MADV_PAGEOUT, 0));
	close(pidfd);
}


/* process_madvise() from a child running with CREDS; ret -2 if the credentials failed. */
static struct pm_res pm_as(enum pm_creds creds, int pidfd, const struct iovec *iov, size_t vlen,
			   int advice)
{
	struct pm_res r = { -2, EPIPE };
	int p[2];
	pid_t pid;

	if (pipe(p))
		return r;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (pm_set_creds(creds))
			r.err = errno;
		else
			r = pm(pidfd, iov, vlen, advice, 0);
		if (write(p[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &r, sizeof(r)) != sizeof(r))
		r.ret = -2;
	close(p[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return r;
}

/* Another user's (root's) process: no PTRACE_MODE_READ, EACCES, with or without CAP_SYS_NICE. */
TEST_F(pm, caller_other_user)
{
	struct iovec iov;
	uint64_t a;

	ANON_REGION(a, 4);
	iov = IOV(a, 4 * ps);
	EXPECT_PM_ERR(EACCES, pm_as(PM_USER, self->t.pidfd, &iov, 1, MADV_PAGEOUT));
	EXPECT_PM_ERR(EACCES, pm_as(PM_USER_NICE, self->t.pidfd, &iov, 1, MADV_PAGEOUT));
	EXPECT_PM_ERR(EACCES, pm_as(PM_USER, self->t.pidfd, &iov, 1, MADV_COLD));
	EXPECT_EQ(4, pages_with(self->t.pid, a, 4, PM_PRESENT));
}

/* The same user, allowed to ptrace-read it, but without CAP_SYS_NICE: EPERM. */
TEST_F(pm, caller_without_cap_sys_nice)
{
	struct iovec iov;
	uint64_t a;

	ANON_REGION(a, 4);
	iov = IOV(a, 4 * ps);
	EXPECT_PM_ERR(EPERM, pm_as(PM_ROOT_NOT_NICE, self->t.pidfd, &iov, 1, MADV_PAGEOUT));
	ASSERT_EQ(0, target_call(&self->t, OP_DROP_PRIVS, 0, 0, PM_UNPRIV_ID));
	EXPECT_PM_ERR(EPERM, pm_as(PM_USER, self->t.pidfd, &iov, 1, MADV_PAGEOUT));
	EXPECT_PM_ERR(EPERM, pm_as(PM_USER, self->t.pidfd, &iov, 1, MADV_COLD));
	EXPECT_EQ(4, pages_with(self->t.pid, a, 4, PM_PRESENT));
}

/* The same user with CAP_SYS_NICE (and nothing else) may. */
TEST_F(pm, caller_same_user_with_cap_sys_nice)
{
	struct iovec iov;
	uint64_t a;

	ANON_REGION(a, 4);
	ASSERT_EQ(0, target_call(&self->t, OP_DROP_PRIVS, 0, 0, PM_UNPRIV_ID));
	iov = IOV(a, 4 * ps);
	ASSERT_PM_RET(4 * ps, pm_as(PM_USER_NICE, self->t.pidfd, &iov, 1, MADV_PAGEOUT));
	EXPECT_EQ(4, pages_with(self->t.pid, a, 4, PM_SWAPPED));
	EXPECT_EQ(0, target_call(&self->t, OP_VERIFY, a, 4 * ps, SEED));
}

/*
 * The pageout side channel: a caller that may not write a file (uid 1000 with CAP_SYS_NICE, a
 * root-owned 0644 file) must not be able to push its pages out of the page cache through a
 * target that maps it, and then time the target's faults.  PAGEOUT passes such a mapping over:
 * it returns the length, and the pages stay mapped and cached.  Root (the file's owner) can.
 */
TEST_F(pm, pageout_file_caller_cannot_write)
{
	size_t n = 16, len = n * ps;
	char path[96];
	struct iovec iov;
	uint64_t a;
	pid_t pid = self->t.pid;

	snprintf(path, sizeof(path), "%s/pm-guard-%d", EXT4_DIR, getpid());
	ASSERT_EQ(0, make_pattern_file(path, len)) TH_LOG("%s: %m", path);
	a = target_map_kind(&self->t, KIND_FILE_RO, len, path);
	ASSERT_NE(0, a) TH_LOG("target mmap: %m");
	ASSERT_LE(0, target_call(&self->t, OP_READ, a, len, 0));
	ASSERT_EQ(0, target_call(&self->t, OP_DROP_PRIVS, 0, 0, PM_UNPRIV_ID));
	ASSERT_EQ(n, pages_with(pid, a, n, PM_PRESENT));
	iov = IOV(a, len);

	ASSERT_PM_RET(len, pm_as(PM_USER_NICE, self->t.pidfd, &iov, 1, MADV_PAGEOUT));
	EXPECT_EQ(n, pages_with(pid, a, n, PM_PRESENT));
	EXPECT_EQ(n, target_call(&self->t, OP_MINCORE, a, len, 0));

	/* The owner may: the same call as root unmaps them, so the check above can fail. */
	ASSERT_PM_RET(len, pm(self->t.pidfd, &iov, 1, MADV_PAGEOUT, 0));
	EXPECT_EQ(0, pages_with(pid, a, n, PM_PRESENT));
	unlink(path);
}

/*
 * Which error wins when several apply, as in 6.1: flags, then the vector (length, then
 * contents), then the pidfd, then the advice, then the target's mm and the ptrace check, then
 * CAP_SYS_NICE, and only then the ranges.
 */
TEST_F(pm, errno_precedence)
{
	struct iovec iov, bad = IOV(0xffff888000000000UL, 4096), big[PM_UIO_MAXIOV + 1];
	uint64_t a, hole;
	int kthread;

	ANON_REGION(a, 1);
	HOLE(hole, 1);
	iov = IOV(hole, ps);
	memset(big, 0, sizeof(big));
	kthread = sys_pidfd_open(2, 0);
	ASSERT_LE(0, kthread);

	EXPECT_PM_ERR(EINVAL, pm(-1, NULL, 1, MADV_DONTNEED, 1));
	EXPECT_PM_ERR(EINVAL, pm(-1, big, PM_UIO_MAXIOV + 1, MADV_DONTNEED, 0));
	EXPECT_PM_ERR(EFAULT, pm(-1, NULL, 1, MADV_DONTNEED, 0));
	EXPECT_PM_ERR(EFAULT, pm(-1, &bad, 1, MADV_DONTNEED, 0));
	EXPECT_PM_ERR(EBADF, pm(-1, &iov, 1, MADV_DONTNEED, 0));
	EXPECT_PM_ERR(EINVAL, pm(kthread, &iov, 1, MADV_DONTNEED, 0));
	EXPECT_PM_ERR(ESRCH, pm(kthread, &iov, 1, MADV_COLD, 0));
	EXPECT_PM_ERR(EINVAL, pm_as(PM_USER, self->t.pidfd, &iov, 1, MADV_DONTNEED));
	EXPECT_PM_ERR(EACCES, pm_as(PM_USER, self->t.pidfd, &iov, 1, MADV_COLD));
	EXPECT_PM_ERR(EPERM, pm_as(PM_ROOT_NOT_NICE, self->t.pidfd, &iov, 1, MADV_COLD));
	EXPECT_PM_ERR(ENOMEM, pm(self->t.pidfd, &iov, 1, MADV_COLD, 0));
	close(kthread);
}

/* ---- races ---- */

/*
 * The target maps, unmaps, protects and touches pieces of a 4 MiB range as fast as it can for
 * 2 s, on another CPU, while the caller advises random vectors of ranges in it with every
 * supported advice.  Every call must come back promptly with the bytes of a prefix of the
 * vector or an error a changing address space explains: ENOMEM (a hole) for any advice, EINVAL
 * and EAGAIN only for COLLAPSE (a vma that cannot hold a huge page, a page it cannot take now).
 * Each vector also names a few ranges of a 2 MiB region the target never changes; its data
 * must be intact at the end, and every page of it that the last calls paged out must read back.
 */
TEST_F_TIMEOUT(pm, concurrent_layout_changes, 60)
{
	static const int advice[] = { MADV_COLD, MADV_PAGEOUT, MADV_WILLNEED, MADV_COLLAPSE };
	uint64_t len = 2 * SZ_2M, a, stable, seed = 0x9e3779b97f4a7c15ULL, slowest = 0, end;
	long calls = 0, full = 0, partial = 0, failed = 0;
	struct pollfd pfd;
	int64_t churned;

	ASSERT_EQ(0, set_all_cpus());
	a = target_map_kind(&self->t, KIND_ANON_2M, len, NULL);
	ASSERT_NE(0, a);
	ASSERT_EQ(0, target_call(&self->t, OP_FILL, a, len, SEED));
	stable = target_map_kind(&self->t, KIND_ANON_2M, SZ_2M, NULL);
	ASSERT_NE(0, stable);
	ASSERT_EQ(0, target_call(&self->t, OP_FILL, stable, SZ_2M, SEED + 7));
	ASSERT_EQ(0, target_send(&self->t, OP_CHURN, 0, a, len, 2000, NULL));
	pfd.fd = self->t.reply_fd;
	pfd.events = POLLIN;
	end = now_ms() + 10000;
	while (poll(&pfd, 1, 0) == 0 && now_ms() < end) {
		struct iovec iov[8];
		uint64_t prefix[8], total = 0, t0, took;
		size_t nr = 1 + xorshift(&seed) % 8, i;
		int adv = advice[calls % 4];
		struct pm_res r;
		bool ok;

		for (i = 0; i < nr; i++) {
			uint64_t r1 = xorshift(&seed), first = r1 % (len / ps);
			uint64_t n = 1 + (r1 >> 32) % 64;

			if (adv == MADV_COLLAPSE && i == 0) {
				first = (r1 >> 16) % 2 * (SZ_2M / ps);
				n = SZ_2M / ps;
			}
			if (first + n > len / ps)
				n = len / ps - first;
			iov[i] = IOV(a + first * ps, n * ps);
			if ((r1 >> 24) % 3 == 0) {
				/* A range of the region that does not change. */
				first = (r1 >> 8) % (SZ_2M / ps - 64);
				n = n > 64 ? 64 : n;
				iov[i] = IOV(stable + first * ps, n * ps);
			}
			total += n * ps;
			prefix[i] = total;
		}
		t0 = now_ms();
		r = pm(self->t.pidfd, iov, nr, adv, 0);
		took = now_ms() - t0;
		slowest = took > slowest ? took : slowest;
		calls++;
		if (r.ret == (long)total) {
			full++;
			continue;
		}
		ok = false;
		if (r.ret > 0) {
			for (i = 0; i + 1 < nr; i++)
				ok |= r.ret == (long)prefix[i];
			partial++;
		} else if (r.ret == -1) {
			ok = r.err == ENOMEM ||
			     (adv == MADV_COLLAPSE && (r.err == EINVAL || r.err == EAGAIN));
			failed++;
		}
		ASSERT_TRUE(ok) TH_LOG("advice %d on %zu ranges (%lu bytes): ret %ld, %s", adv, nr,
				       (unsigned long)total, r.ret, errname(r.err));
	}
	churned = target_wait(&self->t, NULL);
	TH_LOG("%ld calls: %ld whole, %ld partial, %ld failed; slowest %lu ms; %ld layout changes",
	       calls, full, partial, failed, (unsigned long)slowest, (long)churned);
	ASSERT_LT(0, churned);
	EXPECT_LT(20, calls);
	EXPECT_LT(0, full);
	EXPECT_GT(5000, slowest);
	EXPECT_EQ(0, target_call(&self->t, OP_VERIFY, stable, SZ_2M, SEED + 7));
}

/*
 * The target is killed while the caller advises it: every call returns all its bytes or, once
 * the target is gone, ESRCH (also while it is an unreaped zombie).
 */
TEST_F_TIMEOUT(pm, concurrent_exit, 60)
{
	uint64_t len = 256 * ps, a, t0 = now_ms(), end = t0 + 10000;
	long calls = 0, done = 0, gone = 0;
	bool killed = false;
	struct iovec iov;

	ASSERT_EQ(0, set_all_cpus());
	a = target_map_kind(&self->t, KIND_ANON, len, NULL);
	ASSERT_NE(0, a);
	ASSERT_EQ(0, target_call(&self->t, OP_FILL, a, len, SEED));
	/* Keep it busy touching its memory until it is killed. */
	ASSERT_EQ(0, target_send(&self->t, OP_CHURN, 0, a, len, 20000, NULL));
	iov = IOV(a, len);
	while (now_ms() < end) {
		struct pm_res r = pm(self->t.pidfd, &iov, 1, calls % 2 ? MADV_COLD : MADV_PAGEOUT,
				     0);

		calls++;
		if (r.ret == -1 && r.err == ESRCH) {
			gone++;
			if (gone > 10)
				break;
			continue;
		}
		/* One range: all of it or nothing; it may be partly unmapped (ENOMEM). */
		ASSERT_TRUE(r.ret == (long)len ||
			    (r.ret == -1 && r.err == ENOMEM))
			TH_LOG("ret %ld, %s", r.ret, errname(r.err));
		ASSERT_EQ(0, gone) TH_LOG("advised a process already gone");
		done++;
		if (!killed && now_ms() - t0 > 300) {
			ASSERT_EQ(0, kill(self->t.pid, SIGKILL));
			killed = true;
		}
	}
	TH_LOG("%ld calls, %ld before the target was gone", calls, done);
	EXPECT_TRUE(killed);
	EXPECT_LT(10, gone);
	ASSERT_EQ(self->t.pid, waitpid(self->t.pid, NULL, 0));
	EXPECT_PM_ERR(ESRCH, pm(self->t.pidfd, &iov, 1, MADV_COLD, 0));
	close(self->t.cmd_fd);
	close(self->t.reply_fd);
	close(self->t.pidfd);
	self->t.pid = 0;
}

/* ---- READ, not ATTACH: the 5.12 rule, visible only with an LSM that tells them apart ---- */

#define YAMA_SCOPE "/proc/sys/kernel/yama/ptrace_scope"

static int write_scope(int scope)
{
	char c = '0' + scope;
	int fd = open(YAMA_SCOPE, O_WRONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -1;
	ret = write(fd, &c, 1) == 1 ? 0 : -1;
	close(fd);
	return ret;
}

/* PTRACE_SEIZE of PID from a child running as uid 1000 (no capability); its errno, 0 if it could. */
static int seize_as_user(pid_t pid)
{
	int p[2], err = EPIPE;
	pid_t child;

	if (pipe(p))
		return errno;
	child = fork();
	if (child == 0) {
		close(p[0]);
		err = 0;
		if (pm_set_creds(PM_USER))
			err = ENOTRECOVERABLE;
		else if (ptrace(PTRACE_SEIZE, pid, 0, 0))
			err = errno;
		else
			ptrace(PTRACE_DETACH, pid, 0, 0);
		if (write(p[1], &err, sizeof(err)) != sizeof(err))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (child < 0 || read(p[0], &err, sizeof(err)) != sizeof(err))
		err = EPIPE;
	close(p[0]);
	if (child > 0)
		waitpid(child, NULL, 0);
	return err;
}

/*
 * process_madvise() asks for PTRACE_MODE_READ (5.12), not ATTACH (5.10).  Without an LSM the two
 * modes give the same answer, so this needs Yama: with ptrace_scope 1 (attach only to
 * descendants), 2 (attach only with CAP_SYS_PTRACE) and 3 (no attach at all) a same-user caller
 * with CAP_SYS_NICE that is not the target's ancestor cannot attach to it, but may still advise
 * it.  Scope 3 cannot be undone, so this runs last.
 */
TEST_F(pm, ptrace_read_not_attach_yama)
{
	static const int scopes[] = { 1, 2, 3 };
	struct iovec iov;
	uint64_t a;
	size_t i;

	ASSERT_EQ(0, access(YAMA_SCOPE, W_OK)) TH_LOG("no Yama (CONFIG_SECURITY_YAMA): %m");
	ANON_REGION(a, 4);
	ASSERT_EQ(0, target_call(&self->t, OP_DROP_PRIVS, 0, 0, PM_UNPRIV_ID));
	iov = IOV(a, 4 * ps);
	for (i = 0; i < ARRAY_SIZE(scopes); i++) {
		ASSERT_EQ(0, write_scope(scopes[i])) TH_LOG("scope %d: %m", scopes[i]);
		/* Yama is in force: a same-user attach is refused. */
		EXPECT_EQ(EPERM, seize_as_user(self->t.pid)) TH_LOG("scope %d", scopes[i]);
		ASSERT_PM_RET(4 * ps, pm_as(PM_USER_NICE, self->t.pidfd, &iov, 1, MADV_PAGEOUT));
		EXPECT_EQ(4, pages_with(self->t.pid, a, 4, PM_SWAPPED)) TH_LOG("scope %d", scopes[i]);
		ASSERT_PM_RET(4 * ps, pm_as(PM_USER_NICE, self->t.pidfd, &iov, 1, MADV_WILLNEED));
		EXPECT_EQ(0, target_call(&self->t, OP_VERIFY, a, 4 * ps, SEED));
	}
}

TEST_HARNESS_MAIN

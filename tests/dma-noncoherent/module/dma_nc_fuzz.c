// SPDX-License-Identifier: GPL-2.0
/*
 * Seeded fuzz of dma_alloc_noncoherent(): random sizes, DMA masks, directions
 * and GFP flags, with allocations, partial syncs, device transfers through
 * QEMU's edu device and frees in a random order over up to 8 live buffers.
 *
 * Each case appends one observation line ("<case> <what the caller saw>")
 * to /sys/kernel/debug/dma_nc_fuzz/obs; the group's script prints them as
 * "# obs" lines, which the check compares between stock and full for the
 * same seed.  Addresses never appear in them: only whether an allocation
 * succeeded and satisfied its mask, zeroing, and whether data went through
 * the device intact.
 *
 * Parameters: seed, cases, seconds (a time bound: the case count reached is
 * reported).  The group's script checks dma-debug's error count around the
 * load: nothing may be counted.
 */
#include <kunit/test.h>
#include <linux/debugfs.h>
#include <linux/dma-mapping.h>
#include <linux/fs.h>
#include <linux/iommu.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/prandom.h>
#include <linux/sizes.h>
#include <linux/vmalloc.h>

#include "edu.h"

static unsigned int seed = 1;
module_param(seed, uint, 0444);
static unsigned int cases = 1000;
module_param(cases, uint, 0444);
static unsigned int seconds = 120;
module_param(seconds, uint, 0444);

#define OBS_SIZE	SZ_4M
#define LIVE		8

static char *obs_buf;
static struct debugfs_blob_wrapper obs_blob;
static struct dentry *obs_dir;

struct fz_buf {
	void *cpu;
	dma_addr_t handle;
	size_t size;
	unsigned int bits;
	enum dma_data_direction dir;
};

static __printf(1, 2) void obs(const char *fmt, ...)
{
	va_list ap;
	int n;

	if (obs_blob.size >= OBS_SIZE - 256)
		return;
	va_start(ap, fmt);
	n = vscnprintf(obs_buf + obs_blob.size, OBS_SIZE - obs_blob.size, fmt, ap);
	va_end(ap);
	obs_blob.size += n;
}

/*
 * Every step draws the same number of values whatever it does, so that the
 * sequence of operations depends on the seed alone, never on an outcome.
 */
struct fz_step {
	u32 v[8];
};

static size_t fz_size(const struct fz_step *s, unsigned int bits, bool wait)
{
	u32 k = s->v[2] % 100;
	size_t size;

	if (k < 50)
		size = 1 + s->v[3] % (4 * PAGE_SIZE);
	else if (k < 85)
		size = 1 + s->v[3] % SZ_256K;
	else if (k < 97)
		size = 1 + s->v[3] % SZ_4M;
	else	/* past the largest block the page allocator has */
		return SZ_4M + 1 + s->v[3] % SZ_64M;
	/*
	 * Keep what must succeed deterministic: 16 MiB of ZONE_DMA holds 1 MiB
	 * blocks, and allocations that cannot reclaim stay small.
	 */
	if (bits <= 24)
		size = min_t(size_t, size, SZ_1M);
	if (!wait)
		size = min_t(size_t, size, SZ_64K);
	return size;
}

/*
 * The device's own mask (28 bits) and DMA_BIDIRECTIONAL come more often:
 * only such buffers go through the device (see fz_dma()).
 */
static const unsigned int fz_bits[] = { 24, 28, 28, 28, 30, 32, 36, 40, 48, 64 };
static const enum dma_data_direction fz_dirs[] = {
	DMA_BIDIRECTIONAL, DMA_BIDIRECTIONAL, DMA_TO_DEVICE, DMA_FROM_DEVICE,
};

static const gfp_t fz_gfps[] = { GFP_KERNEL, GFP_NOWAIT, GFP_ATOMIC };

static void fz_free(struct device *dev, struct fz_buf *b)
{
	dma_free_noncoherent(dev, b->size, b->cpu, b->handle, b->dir);
	b->cpu = NULL;
}

static void fz_alloc(struct device *dev, const struct fz_step *s, struct fz_buf *b,
		     unsigned int n)
{
	gfp_t gfp = fz_gfps[s->v[4] % ARRAY_SIZE(fz_gfps)];
	unsigned int bits = fz_bits[s->v[5] % ARRAY_SIZE(fz_bits)];
	enum dma_data_direction dir = fz_dirs[s->v[6] % ARRAY_SIZE(fz_dirs)];
	bool wait = gfp & __GFP_DIRECT_RECLAIM;
	size_t size = fz_size(s, bits, wait);
	bool zero = s->v[7] & 1;
	bool inmask, allzero = true;

	if (b->cpu)
		fz_free(dev, b);
	/* __GFP_NOWARN always: a failed huge allocation is an answer here. */
	gfp |= __GFP_NOWARN | (zero ? __GFP_ZERO : 0);
	if (dma_set_mask_and_coherent(dev, DMA_BIT_MASK(bits))) {
		obs("%u alloc bits=%u setmask-fail\n", n, bits);
		return;
	}
	b->cpu = dma_alloc_noncoherent(dev, size, &b->handle, dir, gfp);
	dma_set_mask_and_coherent(dev, DMA_BIT_MASK(EDU_DMA_BITS));
	if (!b->cpu) {
		obs("%u alloc size=%zu bits=%u dir=%d wait=%d zero=%d -> null\n", n,
		    size, bits, dir, wait, zero);
		return;
	}
	b->size = size;
	b->bits = bits;
	b->dir = dir;
	inmask = (u64)b->handle + size - 1 <= DMA_BIT_MASK(bits) &&
		 PAGE_ALIGNED(b->cpu) && virt_addr_valid(b->cpu);
	if (zero)
		allzero = !memchr_inv(b->cpu, 0, size);
	obs("%u alloc size=%zu bits=%u dir=%d wait=%d zero=%d -> ok inmask=%d zeroed=%d\n",
	    n, size, bits, dir, wait, zero, inmask, allzero);
	memset(b->cpu, n & 0xff, size);
}

static void fz_sync(struct device *dev, const struct fz_step *s, struct fz_buf *b,
		    unsigned int n)
{
	size_t off = s->v[2] % b->size;
	size_t len = 1 + s->v[3] % (b->size - off);

	if (s->v[4] & 1)
		dma_sync_single_for_device(dev, b->handle + off, len, b->dir);
	else
		dma_sync_single_for_cpu(dev, b->handle + off, len, b->dir);
	obs("%u sync\n", n);
}

/* Out through the device and back into the same buffer, right after it. */
static void fz_dma(struct device *dev, const struct fz_step *s, struct fz_buf *b,
		   unsigned int n, u8 *scratch)
{
	size_t len = 1 + s->v[2] % EDU_DMA_MAX;
	struct rnd_state data;
	size_t off;
	bool same;

	/*
	 * Whether to transfer depends on the seed alone: a buffer allocated
	 * under a mask wider than the device's may or may not land within its
	 * reach, and that depends on where memory happened to be free, which
	 * differs between two kernels.  One allocated within the device's mask
	 * must be reachable.
	 */
	if (b->dir != DMA_BIDIRECTIONAL || b->size < 2 * len ||
	    b->bits > EDU_DMA_BITS) {
		obs("%u dma skipped\n", n);
		return;
	}
	if ((u64)b->handle + b->size - 1 > DMA_BIT_MASK(EDU_DMA_BITS)) {
		obs("%u dma unreachable\n", n);
		return;
	}
	off = s->v[3] % (b->size - 2 * len + 1);
	prandom_seed_state(&data, s->v[4]);
	prandom_bytes_state(&data, scratch, len);
	memcpy(b->cpu + off, scratch, len);
	dma_sync_single_for_device(dev, b->handle, b->size, DMA_BIDIRECTIONAL);
	if (edu_dma(b->handle + off, 0, len, false) ||
	    edu_dma(b->handle + off + len, 0, len, true)) {
		obs("%u dma timeout\n", n);
		return;
	}
	dma_sync_single_for_cpu(dev, b->handle, b->size, DMA_BIDIRECTIONAL);
	same = !memcmp(b->cpu + off + len, scratch, len);
	obs("%u dma len=%zu -> %s\n", n, len, same ? "same" : "DIFFERENT");
}

static void fuzz(struct kunit *test)
{
	struct fz_buf live[LIVE] = {};
	unsigned long deadline = jiffies + seconds * HZ;
	struct rnd_state r;
	struct device *dev;
	unsigned int n;
	u8 *scratch;
	int k;

	if (!edu_pdev)
		kunit_skip(test, "no edu PCI device");
	dev = &edu_pdev->dev;
	scratch = kunit_kmalloc(test, EDU_DMA_MAX, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, scratch);
	prandom_seed_state(&r, seed);
	for (n = 0; n < cases && time_before(jiffies, deadline); n++) {
		struct fz_step st;
		struct fz_buf *b;

		prandom_bytes_state(&r, &st, sizeof(st));
		b = &live[st.v[0] % LIVE];
		switch (st.v[1] % 8) {
		case 0 ... 2:
			fz_alloc(dev, &st, b, n);
			break;
		case 3 ... 5:
			if (!b->cpu)
				obs("%u empty\n", n);
			else if (st.v[1] % 8 == 3)
				fz_sync(dev, &st, b, n);
			else
				fz_dma(dev, &st, b, n, scratch);
			break;
		default:
			if (b->cpu)
				fz_free(dev, b);
			obs("%u free\n", n);
		}
		cond_resched();
	}
	for (k = 0; k < LIVE; k++)
		if (live[k].cpu)
			fz_free(dev, &live[k]);
	kunit_info(test, "seed %u: %u of %u cases\n", seed, n, cases);
	KUNIT_EXPECT_NULL(test, strstr(obs_buf, "DIFFERENT"));
	KUNIT_EXPECT_NULL(test, strstr(obs_buf, "timeout"));
	KUNIT_EXPECT_NULL(test, strstr(obs_buf, "unreachable"));
	KUNIT_EXPECT_NULL(test, strstr(obs_buf, "inmask=0"));
	KUNIT_EXPECT_NULL(test, strstr(obs_buf, "zeroed=0"));
}

static int fz_suite_init(struct kunit_suite *suite)
{
	obs_buf = vzalloc(OBS_SIZE);
	if (!obs_buf)
		return -ENOMEM;
	obs_blob.data = obs_buf;
	obs_blob.size = 0;
	obs_dir = debugfs_create_dir("dma_nc_fuzz", NULL);
	debugfs_create_blob("obs", 0400, obs_dir, &obs_blob);
	return edu_suite_init(suite);
}

static void fz_suite_exit(struct kunit_suite *suite)
{
	edu_suite_exit(suite);
}

static struct kunit_case fuzz_cases[] = {
	KUNIT_CASE(fuzz),
	{}
};

static struct kunit_suite fuzz_suite = {
	.name = "dma_noncoherent_fuzz",
	.suite_init = fz_suite_init,
	.suite_exit = fz_suite_exit,
	.test_cases = fuzz_cases,
};

static struct kunit_suite *fz_suites[] = { &fuzz_suite };

/* From init, after the parameters are parsed (see KDEV_KUNIT_SUITES_AT_INIT). */
static int __init fz_init(void)
{
	return __kunit_test_suites_init(fz_suites, ARRAY_SIZE(fz_suites));
}
module_init(fz_init);

/* The observations stay readable until the module is removed. */
static void __exit fz_exit(void)
{
	__kunit_test_suites_exit(fz_suites, ARRAY_SIZE(fz_suites));
	debugfs_remove_recursive(obs_dir);
	vfree(obs_buf);
}
module_exit(fz_exit);

MODULE_DESCRIPTION("Seeded fuzz of dma_alloc_noncoherent() on QEMU's edu device");
MODULE_LICENSE("GPL");

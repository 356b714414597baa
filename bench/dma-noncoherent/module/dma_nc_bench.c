// SPDX-License-Identifier: GPL-2.0
/*
 * dma_alloc_noncoherent() benchmark, run at module load on QEMU's edu device
 * (so on the path the guest booted with: dma-direct, swiotlb=force or an
 * IOMMU):
 *
 *   alloc-free-4k, -64k, -2m  one dma_alloc_noncoherent() + dma_free_noncoherent()
 *                             of that size, with one sync each way in between
 *   pages-free-4k             the same through dma_alloc_pages()/dma_free_pages(),
 *                             which stock has too: the control for what is not ours
 *   edu-roundtrip-4k          4095 bytes (the most the device takes) to the
 *                             device and back into a second buffer,
 *                             with the syncs (dominated by the device's own
 *                             100 ms DMA timer: a check that nothing is lost)
 *
 * One warm-up round, then REPS rounds of a fixed number of cycles; the figure
 * is the median round divided by the cycles, in guest nanoseconds (under
 * icount, an instruction count).  Results go to the kernel log as
 * "dma_nc_bench: BENCH <case> <ns> ns min=<ns> max=<ns> reps=<n>" lines,
 * which the group's script turns into the report's "# BENCH" lines.
 * Parameter case=<name> runs one case only.
 */
#include <linux/dma-mapping.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/sizes.h>
#include <linux/sort.h>

#include "edu.h"

static char *only;
module_param_named(case, only, charp, 0444);

#define REPS	11

struct bench_case {
	const char *name;
	size_t size;
	unsigned int cycles;
	bool edu;
	bool pages;	/* dma_alloc_pages()/dma_free_pages(): the control */
};

static const struct bench_case cases[] = {
	{ "alloc-free-4k", SZ_4K, 400 },
	{ "alloc-free-64k", SZ_64K, 100 },
	{ "alloc-free-2m", SZ_2M, 10 },
	{ "edu-roundtrip-4k", EDU_DMA_MAX, 1, true },
	{ "pages-free-4k", SZ_4K, 400, false, true },
};

static int cmp_u64(const void *a, const void *b)
{
	const u64 *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

static int alloc_free(struct device *dev, const struct bench_case *c)
{
	unsigned int i;
	dma_addr_t h;
	void *cpu;

	for (i = 0; i < c->cycles; i++) {
		if (c->pages) {
			struct page *page;

			page = dma_alloc_pages(dev, c->size, &h, DMA_BIDIRECTIONAL,
					       GFP_KERNEL);
			if (!page)
				return -ENOMEM;
			dma_sync_single_for_device(dev, h, c->size, DMA_BIDIRECTIONAL);
			dma_sync_single_for_cpu(dev, h, c->size, DMA_BIDIRECTIONAL);
			dma_free_pages(dev, c->size, page, h, DMA_BIDIRECTIONAL);
			continue;
		}
		cpu = dma_alloc_noncoherent(dev, c->size, &h, DMA_BIDIRECTIONAL,
					    GFP_KERNEL);
		if (!cpu)
			return -ENOMEM;
		dma_sync_single_for_device(dev, h, c->size, DMA_BIDIRECTIONAL);
		dma_sync_single_for_cpu(dev, h, c->size, DMA_BIDIRECTIONAL);
		dma_free_noncoherent(dev, c->size, cpu, h, DMA_BIDIRECTIONAL);
	}
	return 0;
}

static int roundtrip(struct device *dev, const struct bench_case *c)
{
	dma_addr_t ha, hb;
	void *a, *b;
	int ret;

	a = dma_alloc_noncoherent(dev, c->size, &ha, DMA_TO_DEVICE, GFP_KERNEL);
	b = dma_alloc_noncoherent(dev, c->size, &hb, DMA_FROM_DEVICE, GFP_KERNEL);
	ret = -ENOMEM;
	if (!a || !b)
		goto out;
	memset(a, 0x5a, c->size);
	dma_sync_single_for_device(dev, ha, c->size, DMA_TO_DEVICE);
	ret = edu_dma(ha, 0, c->size, false);
	if (ret)
		goto out;
	dma_sync_single_for_device(dev, hb, c->size, DMA_FROM_DEVICE);
	ret = edu_dma(hb, 0, c->size, true);
	if (ret)
		goto out;
	dma_sync_single_for_cpu(dev, hb, c->size, DMA_FROM_DEVICE);
	ret = memcmp(a, b, c->size) ? -EIO : 0;
out:
	if (b)
		dma_free_noncoherent(dev, c->size, b, hb, DMA_FROM_DEVICE);
	if (a)
		dma_free_noncoherent(dev, c->size, a, ha, DMA_TO_DEVICE);
	return ret;
}

static int run_case(struct device *dev, const struct bench_case *c)
{
	int (*fn)(struct device *dev, const struct bench_case *c);
	u64 t[REPS], start;
	int r, ret, reps = c->edu ? 3 : REPS;

	fn = c->edu ? roundtrip : alloc_free;
	ret = fn(dev, c);	/* warm-up */
	for (r = 0; !ret && r < reps; r++) {
		start = ktime_get_ns();
		ret = fn(dev, c);
		t[r] = (ktime_get_ns() - start) / c->cycles;
	}
	if (ret) {
		pr_info("dma_nc_bench: FAIL %s %d\n", c->name, ret);
		return ret;
	}
	sort(t, reps, sizeof(t[0]), cmp_u64, NULL);
	pr_info("dma_nc_bench: BENCH %s %llu ns min=%llu max=%llu reps=%d\n",
		c->name, t[reps / 2], t[0], t[reps - 1], reps);
	return 0;
}

static int __init bench_init(void)
{
	int i, ret;

	ret = edu_get();
	if (ret)
		return ret;
	if (!edu_pdev) {
		pr_info("dma_nc_bench: FAIL no edu device\n");
	} else {
		for (i = 0; i < ARRAY_SIZE(cases); i++)
			if (!only || !strcmp(only, cases[i].name))
				run_case(&edu_pdev->dev, &cases[i]);
	}
	edu_put();
	return 0;
}
module_init(bench_init);

static void __exit bench_exit(void)
{
}
module_exit(bench_exit);

MODULE_DESCRIPTION("dma_alloc_noncoherent() benchmark on QEMU's edu device");
MODULE_LICENSE("GPL");

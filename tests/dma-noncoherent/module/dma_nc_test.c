// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of dma_alloc_noncoherent() / dma_free_noncoherent(), run on
 * QEMU's edu PCI device so that the allocations take the path the guest was
 * booted with (dma-direct, swiotlb=force, or an Intel IOMMU) and so that the
 * device can really move data through them.
 *
 * dma_noncoherent_alloc  masks, sizes, directions, GFP flags, the direct map,
 *                        memory returned after 10,000 cycles
 * dma_noncoherent_edu    DMA into and out of the buffers, with the syncs
 *
 * dma-debug's side is dma_nc_debug.c.
 */
#include <kunit/test.h>
#include <linux/dma-direct.h>
#include <linux/dma-mapping.h>
#include <linux/iommu.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/swiotlb.h>
#include <linux/delay.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/sizes.h>
#include <linux/vmstat.h>

#include "edu.h"

/* The path the guest was booted for: direct, iommu or swiotlb (none: path_taken skips). */
static char *path;
module_param(path, charp, 0444);
MODULE_PARM_DESC(path, "the DMA path path_taken must find: direct, iommu or swiotlb");

static struct device *nc_dev(struct kunit *test)
{
	if (!edu_pdev)
		kunit_skip(test, "no edu PCI device");
	return &edu_pdev->dev;
}

static void nc_set_mask(struct kunit *test, struct device *dev, unsigned int bits)
{
	KUNIT_ASSERT_EQ(test, dma_set_mask_and_coherent(dev, DMA_BIT_MASK(bits)), 0);
}

static void nc_restore_mask(struct device *dev)
{
	dma_set_mask_and_coherent(dev, DMA_BIT_MASK(EDU_DMA_BITS));
}

/* What every successful allocation must satisfy, whatever the path. */
static void nc_check(struct kunit *test, struct device *dev, void *cpu,
		     dma_addr_t handle, size_t size, unsigned int bits)
{
	u64 mask = DMA_BIT_MASK(bits);
	struct page *page;

	KUNIT_EXPECT_TRUE(test, PAGE_ALIGNED(cpu));
	KUNIT_EXPECT_EQ(test, handle & (PAGE_SIZE - 1), 0);
	KUNIT_EXPECT_LE_MSG(test, (u64)handle + size - 1, mask,
			    "handle %pad size %zu outside a %u-bit mask", &handle, size, bits);
	/* In the direct map: virt_to_page() works and comes back. */
	KUNIT_EXPECT_TRUE(test, virt_addr_valid(cpu));
	page = virt_to_page(cpu);
	KUNIT_EXPECT_PTR_EQ(test, page_address(page), cpu);
	if (!device_iommu_mapped(dev)) {
		/* No translation: the device address is the memory itself. */
		KUNIT_EXPECT_EQ(test, (u64)handle, (u64)page_to_phys(page));
		KUNIT_EXPECT_LE(test, (u64)page_to_phys(page) + size - 1, mask);
	}
	/* The whole size is usable memory. */
	memset(cpu, 0xa5, size);
	KUNIT_EXPECT_EQ(test, ((u8 *)cpu)[size - 1], 0xa5);
}

struct nc_mask_param {
	unsigned int bits;
	size_t max;
};

static const struct nc_mask_param nc_masks[] = {
	{ 24, SZ_1M },	/* ZONE_DMA: 16 MiB in all */
	{ 28, SZ_4M },	/* the edu device's own mask */
	{ 32, SZ_4M },
	{ 64, SZ_4M },
};

static void nc_mask_desc(const struct nc_mask_param *p, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%u-bit", p->bits);
}

KUNIT_ARRAY_PARAM(nc_mask, nc_masks, nc_mask_desc);

static void alloc_within_mask(struct kunit *test)
{
	const struct nc_mask_param *p = test->param_value;
	static const size_t sizes[] = {
		1, 100, PAGE_SIZE - 1, PAGE_SIZE, PAGE_SIZE + 1, 3 * PAGE_SIZE + 7,
		SZ_64K, SZ_64K + 3, SZ_1M - 1, SZ_1M, SZ_2M, SZ_4M,
	};
	struct device *dev = nc_dev(test);
	dma_addr_t handle;
	void *cpu;
	int i;

	nc_set_mask(test, dev, p->bits);
	for (i = 0; i < ARRAY_SIZE(sizes) && sizes[i] <= p->max; i++) {
		handle = 0;
		cpu = dma_alloc_noncoherent(dev, sizes[i], &handle,
					    DMA_BIDIRECTIONAL, GFP_KERNEL);
		KUNIT_EXPECT_NOT_NULL_MSG(test, cpu, "size %zu", sizes[i]);
		if (!cpu)
			continue;
		nc_check(test, dev, cpu, handle, sizes[i], p->bits);
		dma_free_noncoherent(dev, sizes[i], cpu, handle, DMA_BIDIRECTIONAL);
	}
	nc_restore_mask(dev);
}

static void each_direction(struct kunit *test)
{
	static const enum dma_data_direction dirs[] = {
		DMA_BIDIRECTIONAL, DMA_TO_DEVICE, DMA_FROM_DEVICE,
	};
	struct device *dev = nc_dev(test);
	dma_addr_t handle;
	void *cpu;
	int i;

	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		cpu = dma_alloc_noncoherent(dev, 2 * PAGE_SIZE, &handle, dirs[i],
					    GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, cpu);
		nc_check(test, dev, cpu, handle, 2 * PAGE_SIZE, EDU_DMA_BITS);
		dma_sync_single_for_device(dev, handle, 2 * PAGE_SIZE, dirs[i]);
		dma_sync_single_for_cpu(dev, handle, 2 * PAGE_SIZE, dirs[i]);
		/* A part of the buffer can be synced on its own. */
		dma_sync_single_for_device(dev, handle + 10, 100, dirs[i]);
		dma_sync_single_for_cpu(dev, handle + 10, 100, dirs[i]);
		dma_free_noncoherent(dev, 2 * PAGE_SIZE, cpu, handle, dirs[i]);
	}
}

static void gfp_flags(struct kunit *test)
{
	static const gfp_t flags[] = {
		GFP_KERNEL, GFP_NOWAIT, GFP_ATOMIC, GFP_KERNEL | __GFP_NOWARN,
		GFP_KERNEL | __GFP_RETRY_MAYFAIL, GFP_KERNEL | __GFP_NORETRY,
	};
	struct device *dev = nc_dev(test);
	dma_addr_t handle;
	size_t i, j;
	u8 *cpu;

	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		cpu = dma_alloc_noncoherent(dev, PAGE_SIZE, &handle, DMA_TO_DEVICE,
					    flags[i]);
		KUNIT_EXPECT_NOT_NULL_MSG(test, cpu, "gfp %pGg", &flags[i]);
		if (cpu) {
			nc_check(test, dev, cpu, handle, PAGE_SIZE, EDU_DMA_BITS);
			dma_free_noncoherent(dev, PAGE_SIZE, cpu, handle, DMA_TO_DEVICE);
		}
	}
	/* __GFP_ZERO: every byte zero, with the buffer dirtied in between. */
	for (i = 0; i < 8; i++) {
		cpu = dma_alloc_noncoherent(dev, 3 * PAGE_SIZE, &handle,
					    DMA_FROM_DEVICE, GFP_KERNEL | __GFP_ZERO);
		KUNIT_ASSERT_NOT_NULL(test, cpu);
		for (j = 0; j < 3 * PAGE_SIZE; j++)
			if (cpu[j])
				break;
		KUNIT_EXPECT_EQ_MSG(test, j, 3 * PAGE_SIZE, "byte %zu not zero", j);
		memset(cpu, 0xff, 3 * PAGE_SIZE);
		dma_free_noncoherent(dev, 3 * PAGE_SIZE, cpu, handle, DMA_FROM_DEVICE);
	}
}

static void too_large_fails(struct kunit *test)
{
	struct device *dev = nc_dev(test);
	dma_addr_t handle = 0;
	void *cpu;

	/* Beyond the page allocator's largest block: NULL, no warning asked. */
	cpu = dma_alloc_noncoherent(dev, SZ_64M, &handle, DMA_BIDIRECTIONAL,
				    GFP_KERNEL | __GFP_NOWARN);
	KUNIT_EXPECT_NULL(test, cpu);
	if (cpu)
		dma_free_noncoherent(dev, SZ_64M, cpu, handle, DMA_BIDIRECTIONAL);
}

/*
 * Refused: zone modifiers (the DMA mask decides the zone) and a device that
 * has no coherent DMA mask.  Each is a WARN_ON_ONCE in the allocator, on stock
 * as on ours: group.conf's EXPECTED_WARN names the function.
 */
static void refused_arguments(struct kunit *test)
{
	static const gfp_t zones[] = { __GFP_DMA, __GFP_DMA32, __GFP_HIGHMEM };
	struct device *dev = nc_dev(test);
	struct device *bare;
	dma_addr_t handle;
	gfp_t gfp;
	void *cpu;
	int i;

	for (i = 0; i < ARRAY_SIZE(zones); i++) {
		gfp = GFP_KERNEL | zones[i];
		cpu = dma_alloc_noncoherent(dev, PAGE_SIZE, &handle, DMA_BIDIRECTIONAL, gfp);
		KUNIT_EXPECT_NULL_MSG(test, cpu, "gfp %pGg", &gfp);
		if (cpu)
			dma_free_noncoherent(dev, PAGE_SIZE, cpu, handle, DMA_BIDIRECTIONAL);
	}
	bare = kunit_kzalloc(test, sizeof(*bare), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, bare);
	cpu = dma_alloc_noncoherent(bare, PAGE_SIZE, &handle, DMA_BIDIRECTIONAL, GFP_KERNEL);
	KUNIT_EXPECT_NULL(test, cpu);
}

/*
 * Free pages, after the RCU callbacks queued so far have run (dma-debug frees
 * the nodes of its cacheline tree through RCU, and a burst of cycles leaves
 * many of them waiting) and after an IOMMU's flush queue has had time to
 * free the page-table pages it holds (its timer runs every 10 ms).  Pages on
 * the per-CPU lists are free too but not in NR_FREE_PAGES: they are added,
 * every CPU's, so that the count does not depend on which CPU the test ran on
 * (a run that moved to the other CPU half way filled a second list, 2,862
 * pages, and looked like a leak).
 */
static unsigned long nc_free_pages(void)
{
	unsigned long pages = 0;
	struct zone *zone;
	int nid, z, cpu;

	msleep(50);
	rcu_barrier();
	for_each_online_node(nid) {
		for (z = 0; z < MAX_NR_ZONES; z++) {
			zone = &NODE_DATA(nid)->node_zones[z];
			if (!populated_zone(zone))
				continue;
			for_each_possible_cpu(cpu)
				pages += READ_ONCE(per_cpu_ptr(zone->per_cpu_pageset, cpu)->count);
		}
	}
	return pages + global_zone_page_state(NR_FREE_PAGES);
}

static unsigned long nc_slab_pages(void)
{
	return global_node_page_state_pages(NR_SLAB_UNRECLAIMABLE_B) +
	       global_node_page_state_pages(NR_SLAB_RECLAIMABLE_B);
}

/*
 * 10,000 alloc/free cycles.  Each freed buffer's first page must have no
 * reference left right after the free (another CPU may have taken it again at
 * once: a few such cycles are allowed), and the count of free (per-CPU lists
 * included) and slab pages must not fall during the second 5,000 cycles, once
 * caches that grow on first use (IOVA magazines, page tables) have grown in
 * the first 5,000.  Slab counts too because a debug kernel's KASAN
 * quarantine keeps freed objects (dma-debug's) in slab pages for a while.
 * A leak of even one page a cycle would take 5,000 pages in the second half.
 */
static void cycles_return_memory(struct kunit *test)
{
	static const size_t sizes[] = { PAGE_SIZE, 2 * PAGE_SIZE + 1, SZ_64K };
	struct device *dev = nc_dev(test);
	unsigned long start, mid = 0, end;
	unsigned int held = 0;
	struct page *page;
	dma_addr_t handle;
	void *cpu;
	int i;

	start = nc_free_pages() + nc_slab_pages();
	for (i = 0; i < 10000; i++) {
		if (i == 5000)
			mid = nc_free_pages() + nc_slab_pages();
		cpu = dma_alloc_noncoherent(dev, sizes[i % 3], &handle,
					    DMA_BIDIRECTIONAL, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL_MSG(test, cpu, "cycle %d", i);
		page = virt_to_page(cpu);
		dma_free_noncoherent(dev, sizes[i % 3], cpu, handle, DMA_BIDIRECTIONAL);
		held += page_ref_count(page) != 0;
	}
	end = nc_free_pages() + nc_slab_pages();
	kunit_info(test, "free+pcp+slab pages: %lu at 0, %lu at 5000, %lu at 10000 cycles (slab %lu)\n",
		   start, mid, end, nc_slab_pages());
	KUNIT_EXPECT_LT_MSG(test, held, 100U, "%u of 10000 freed buffers still referenced", held);
	KUNIT_EXPECT_LT_MSG(test, (long)(mid - end), 256L,
			    "the second 5000 cycles took %ld pages", (long)(mid - end));
}

/*
 * The group runs on the path its boot options promise, and not silently on
 * another: an IOMMU DMA domain that translates the allocation's handle to its
 * pages, streaming mappings bounced through swiotlb (while the noncoherent
 * allocation itself is not), or neither with the handle the physical address.
 */
static void path_taken(struct kunit *test)
{
	struct device *dev = nc_dev(test);
	struct iommu_domain *dom = iommu_get_domain_for_dev(dev);
	bool translated = device_iommu_mapped(dev), bounced = is_swiotlb_force_bounce(dev);
	phys_addr_t phys;
	dma_addr_t h, sh;
	void *cpu, *buf;

	if (!path)
		kunit_skip(test, "no path= given");
	/*
	 * The edu device's own 28 bits reach no swiotlb slot of a 2 GiB guest
	 * (they sit below 4 GiB, not below 256 MiB): map with 32.
	 */
	nc_set_mask(test, dev, 32);
	cpu = dma_alloc_noncoherent(dev, SZ_8K, &h, DMA_BIDIRECTIONAL, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cpu);
	phys = page_to_phys(virt_to_page(cpu));
	buf = kmalloc(SZ_1K, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	sh = dma_map_single(dev, buf, SZ_1K, DMA_TO_DEVICE);
	KUNIT_ASSERT_FALSE(test, dma_mapping_error(dev, sh));
	kunit_info(test, "path=%s: iommu %s (domain type %#x), swiotlb force_bounce %d, handle %pad of %pa\n",
		   path, translated ? "mapped" : "none", dom ? dom->type : 0, bounced, &h, &phys);

	if (!strcmp(path, "iommu")) {
		KUNIT_EXPECT_TRUE(test, translated);
		KUNIT_ASSERT_NOT_NULL(test, dom);
		KUNIT_EXPECT_TRUE(test, dom->type & __IOMMU_DOMAIN_DMA_API);
		KUNIT_EXPECT_EQ(test, (u64)iommu_iova_to_phys(dom, h), (u64)phys);
		KUNIT_EXPECT_EQ(test, (u64)iommu_iova_to_phys(dom, sh), (u64)virt_to_phys(buf));
	} else if (!strcmp(path, "swiotlb")) {
		KUNIT_EXPECT_FALSE(test, translated);
		KUNIT_EXPECT_TRUE(test, bounced);
		KUNIT_EXPECT_TRUE(test, is_swiotlb_buffer(dev, dma_to_phys(dev, sh)));
		KUNIT_EXPECT_FALSE(test, is_swiotlb_buffer(dev, dma_to_phys(dev, h)));
		KUNIT_EXPECT_EQ(test, (u64)dma_to_phys(dev, h), (u64)phys);
	} else {
		KUNIT_EXPECT_STREQ(test, path, "direct");
		KUNIT_EXPECT_FALSE(test, translated);
		KUNIT_EXPECT_FALSE(test, bounced);
		KUNIT_EXPECT_EQ(test, (u64)dma_to_phys(dev, h), (u64)phys);
		KUNIT_EXPECT_EQ(test, (u64)dma_to_phys(dev, sh), (u64)virt_to_phys(buf));
	}
	dma_unmap_single(dev, sh, SZ_1K, DMA_TO_DEVICE);
	kfree(buf);
	dma_free_noncoherent(dev, SZ_8K, cpu, h, DMA_BIDIRECTIONAL);
	nc_restore_mask(dev);
}

static struct kunit_case alloc_cases[] = {
	KUNIT_CASE(path_taken),
	KUNIT_CASE_PARAM(alloc_within_mask, nc_mask_gen_params),
	KUNIT_CASE(each_direction),
	KUNIT_CASE(gfp_flags),
	KUNIT_CASE(too_large_fails),
	KUNIT_CASE(refused_arguments),
	KUNIT_CASE(cycles_return_memory),
	{}
};

static struct kunit_suite alloc_suite = {
	.name = "dma_noncoherent_alloc",
	.suite_init = edu_suite_init,
	.suite_exit = edu_suite_exit,
	.test_cases = alloc_cases,
};

/* Real DMA through the edu device: up to EDU_DMA_MAX bytes at a time. */

static void nc_fill(u8 *p, size_t len, u32 seed)
{
	size_t i;

	for (i = 0; i < len; i++) {
		seed = seed * 1103515245 + 12345;
		p[i] = seed >> 16;
	}
}

static void edu_to_device_and_back(struct kunit *test)
{
	struct device *dev = nc_dev(test);
	dma_addr_t ha, hb;
	u8 *a, *b;

	a = dma_alloc_noncoherent(dev, EDU_DMA_MAX, &ha, DMA_TO_DEVICE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	b = dma_alloc_noncoherent(dev, EDU_DMA_MAX, &hb, DMA_FROM_DEVICE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b);
	nc_fill(a, EDU_DMA_MAX, 1);
	memset(b, 0, EDU_DMA_MAX);

	dma_sync_single_for_device(dev, ha, EDU_DMA_MAX, DMA_TO_DEVICE);
	KUNIT_ASSERT_EQ(test, edu_dma(ha, 0, EDU_DMA_MAX, false), 0);
	dma_sync_single_for_device(dev, hb, EDU_DMA_MAX, DMA_FROM_DEVICE);
	KUNIT_ASSERT_EQ(test, edu_dma(hb, 0, EDU_DMA_MAX, true), 0);
	dma_sync_single_for_cpu(dev, hb, EDU_DMA_MAX, DMA_FROM_DEVICE);
	KUNIT_EXPECT_EQ(test, memcmp(a, b, EDU_DMA_MAX), 0);

	/* Again with new data: the device really wrote b, not a stale copy. */
	nc_fill(a, EDU_DMA_MAX, 2);
	dma_sync_single_for_device(dev, ha, EDU_DMA_MAX, DMA_TO_DEVICE);
	KUNIT_ASSERT_EQ(test, edu_dma(ha, 0, EDU_DMA_MAX, false), 0);
	dma_sync_single_for_device(dev, hb, EDU_DMA_MAX, DMA_FROM_DEVICE);
	KUNIT_ASSERT_EQ(test, edu_dma(hb, 0, EDU_DMA_MAX, true), 0);
	dma_sync_single_for_cpu(dev, hb, EDU_DMA_MAX, DMA_FROM_DEVICE);
	KUNIT_EXPECT_EQ(test, memcmp(a, b, EDU_DMA_MAX), 0);

	dma_free_noncoherent(dev, EDU_DMA_MAX, b, hb, DMA_FROM_DEVICE);
	dma_free_noncoherent(dev, EDU_DMA_MAX, a, ha, DMA_TO_DEVICE);
}

static void edu_bidirectional_in_place(struct kunit *test)
{
	struct device *dev = nc_dev(test);
	size_t size = 2 * EDU_DMA_MAX + 123;
	dma_addr_t h;
	u8 *c;

	c = dma_alloc_noncoherent(dev, size, &h, DMA_BIDIRECTIONAL, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	nc_fill(c, EDU_DMA_MAX, 3);
	memset(c + EDU_DMA_MAX, 0, size - EDU_DMA_MAX);
	dma_sync_single_for_device(dev, h, size, DMA_BIDIRECTIONAL);
	KUNIT_ASSERT_EQ(test, edu_dma(h, 0, EDU_DMA_MAX, false), 0);
	/* Copy it back right after it, and again 123 bytes further. */
	KUNIT_ASSERT_EQ(test, edu_dma(h + EDU_DMA_MAX, 0, EDU_DMA_MAX, true), 0);
	KUNIT_ASSERT_EQ(test, edu_dma(h + EDU_DMA_MAX + 123, 0, EDU_DMA_MAX, true), 0);
	dma_sync_single_for_cpu(dev, h, size, DMA_BIDIRECTIONAL);
	KUNIT_EXPECT_EQ(test, memcmp(c, c + EDU_DMA_MAX + 123, EDU_DMA_MAX), 0);
	KUNIT_EXPECT_EQ(test, memcmp(c, c + EDU_DMA_MAX, 123), 0);
	dma_free_noncoherent(dev, size, c, h, DMA_BIDIRECTIONAL);
}

static void edu_partial_transfers(struct kunit *test)
{
	static const unsigned int lens[] = { 1, 7, 64, 511, 1000, EDU_DMA_MAX };
	struct device *dev = nc_dev(test);
	size_t size = SZ_16K;
	dma_addr_t ha, hb;
	unsigned int off;
	u8 *a, *b;
	int i;

	a = dma_alloc_noncoherent(dev, size, &ha, DMA_TO_DEVICE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	b = dma_alloc_noncoherent(dev, size, &hb, DMA_FROM_DEVICE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b);
	nc_fill(a, size, 4);
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		off = (i * 2749) % (size - lens[i]);
		memset(b, 0, size);
		dma_sync_single_for_device(dev, ha + off, lens[i], DMA_TO_DEVICE);
		KUNIT_ASSERT_EQ(test, edu_dma(ha + off, 0, lens[i], false), 0);
		dma_sync_single_for_device(dev, hb, size, DMA_FROM_DEVICE);
		KUNIT_ASSERT_EQ(test, edu_dma(hb + size - lens[i], 0, lens[i], true), 0);
		dma_sync_single_for_cpu(dev, hb, size, DMA_FROM_DEVICE);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(a + off, b + size - lens[i], lens[i]), 0,
				    "len %u at %u", lens[i], off);
		/* Nothing before the transfer was touched. */
		KUNIT_EXPECT_NULL(test, memchr_inv(b, 0, size - lens[i]));
	}
	dma_free_noncoherent(dev, size, b, hb, DMA_FROM_DEVICE);
	dma_free_noncoherent(dev, size, a, ha, DMA_TO_DEVICE);
}

static struct kunit_case edu_cases[] = {
	KUNIT_CASE(edu_to_device_and_back),
	KUNIT_CASE(edu_bidirectional_in_place),
	KUNIT_CASE(edu_partial_transfers),
	{}
};

static struct kunit_suite edu_suite = {
	.name = "dma_noncoherent_edu",
	.suite_init = edu_suite_init,
	.suite_exit = edu_suite_exit,
	.test_cases = edu_cases,
};

KDEV_KUNIT_SUITES_AT_INIT(&alloc_suite, &edu_suite);

MODULE_DESCRIPTION("KUnit tests of dma_alloc_noncoherent() on QEMU's edu device");
MODULE_LICENSE("GPL");

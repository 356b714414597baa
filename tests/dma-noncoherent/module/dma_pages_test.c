// SPDX-License-Identifier: GPL-2.0
/*
 * dma_alloc_pages() under CONFIG_DMA_API_DEBUG: a correct allocation and free
 * must not be counted as an error, while a free or sync that does not match
 * the allocation must be.  The regression test of patches/fixes/0002: 6.1
 * counts every correct free as "device driver failed to check map error".
 *
 * The three misuses that need the allocation's own entry type (6.1 typed it
 * "single", mainline's 7e2368a21741 "noncoherent") must each be reported with
 * their own message: pages swapped between two frees, an allocation released
 * with dma_unmap_page(), a dma_map_page() mapping released with
 * dma_free_pages().  A grown error count would not tell them apart from 6.1's
 * spurious report.
 *
 * The script loads the module once per case (only=<case>: the others skip)
 * and compares /sys/kernel/debug/dma-api/error_count before and after, and
 * looks in the kernel log for the message the case expects (or for none).
 * The cases themselves check only the allocations.
 */
#include <kunit/test.h>
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/swiotlb.h>

#include "edu.h"

static char *only;
module_param(only, charp, 0444);
MODULE_PARM_DESC(only, "run only this case (the others skip)");

static struct device *pages_dev(struct kunit *test)
{
	if (only && strcmp(only, test->name))
		kunit_skip(test, "not selected");
	if (!edu_pdev)
		kunit_skip(test, "no edu PCI device");
	return &edu_pdev->dev;
}

static void free_is_not_reported(struct kunit *test)
{
	struct device *dev = pages_dev(test);
	static const size_t sizes[] = { 1, PAGE_SIZE, 3 * PAGE_SIZE + 5, SZ_1M };
	dma_addr_t handle;
	struct page *page;
	int i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		page = dma_alloc_pages(dev, sizes[i], &handle, DMA_BIDIRECTIONAL,
				       GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, page);
		dma_sync_single_for_device(dev, handle, sizes[i], DMA_BIDIRECTIONAL);
		dma_sync_single_for_cpu(dev, handle, sizes[i], DMA_BIDIRECTIONAL);
		dma_free_pages(dev, sizes[i], page, handle, DMA_BIDIRECTIONAL);
	}
}

static void wrong_direction_free_is_reported(struct kunit *test)
{
	struct device *dev = pages_dev(test);
	dma_addr_t handle;
	struct page *page;

	page = dma_alloc_pages(dev, PAGE_SIZE, &handle, DMA_TO_DEVICE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	dma_free_pages(dev, PAGE_SIZE, page, handle, DMA_FROM_DEVICE);
}

static void wrong_size_free_is_reported(struct kunit *test)
{
	struct device *dev = pages_dev(test);
	dma_addr_t handle;
	struct page *page;

	/* 100 and 200 bytes are both one page: the pages are freed right. */
	page = dma_alloc_pages(dev, 100, &handle, DMA_TO_DEVICE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	dma_free_pages(dev, 200, page, handle, DMA_TO_DEVICE);
}

/*
 * The misuses below free or unmap with the wrong call on purpose; on the
 * direct path without bouncing, what that does to the memory is known and
 * undone by the case.  Behind an IOMMU or with swiotlb=force it would leave
 * an IOVA or a bounce slot behind.
 */
static void skip_unless_direct(struct kunit *test, struct device *dev)
{
	if (device_iommu_mapped(dev))
		kunit_skip(test, "behind an IOMMU");
	if (is_swiotlb_force_bounce(dev))
		kunit_skip(test, "swiotlb=force");
}

/*
 * Expected: "frees DMA memory with different CPU address", twice.  The
 * direct path frees by page and ignores the handle: each page still goes
 * back to the allocator once.  Runs behind an IOMMU too: dma-iommu unmaps
 * by handle and frees by page, so the swap is harmless there as well.
 */
static void swapped_pages_reported(struct kunit *test)
{
	struct device *dev = pages_dev(test);
	dma_addr_t ha, hb;
	struct page *a, *b;

	a = dma_alloc_pages(dev, PAGE_SIZE, &ha, DMA_BIDIRECTIONAL, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	b = dma_alloc_pages(dev, PAGE_SIZE, &hb, DMA_BIDIRECTIONAL, GFP_KERNEL);
	if (!b)
		dma_free_pages(dev, PAGE_SIZE, a, ha, DMA_BIDIRECTIONAL);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_EXPECT_NE(test, ha, hb);
	dma_free_pages(dev, PAGE_SIZE, b, ha, DMA_BIDIRECTIONAL);
	dma_free_pages(dev, PAGE_SIZE, a, hb, DMA_BIDIRECTIONAL);
}

/*
 * Expected: "wrong function ... [mapped as noncoherent] [unmapped as
 * single]".  dma_unmap_page() leaves the pages allocated; the entry is gone
 * after it, so they go back with __free_pages() (no CMA in this kernel: the
 * direct path took them from the page allocator).
 */
static void unmap_page_of_allocation_reported(struct kunit *test)
{
	struct device *dev = pages_dev(test);
	dma_addr_t handle;
	struct page *page;

	skip_unless_direct(test, dev);
	page = dma_alloc_pages(dev, 2 * PAGE_SIZE, &handle, DMA_TO_DEVICE,
			       GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	dma_unmap_page(dev, handle, 2 * PAGE_SIZE, DMA_TO_DEVICE);
	__free_pages(page, get_order(2 * PAGE_SIZE));
}

/*
 * Expected: "wrong function ... [mapped as single] [unmapped as
 * noncoherent]".  The mapping's error is checked, so a "failed to check map
 * error" report would be a bug of its own.  dma_free_pages() on the direct
 * path drops one reference to the page: the case holds a second one.
 */
static void free_pages_of_mapping_reported(struct kunit *test)
{
	struct device *dev = pages_dev(test);
	dma_addr_t handle;
	struct page *page;

	skip_unless_direct(test, dev);
	page = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	handle = dma_map_page(dev, page, 0, PAGE_SIZE, DMA_FROM_DEVICE);
	if (dma_mapping_error(dev, handle)) {
		__free_page(page);
		KUNIT_FAIL(test, "dma_map_page() failed");
		return;
	}
	get_page(page);
	dma_free_pages(dev, PAGE_SIZE, page, handle, DMA_FROM_DEVICE);
	KUNIT_EXPECT_EQ(test, page_ref_count(page), 1);
	__free_page(page);
}

static struct kunit_case pages_cases[] = {
	KUNIT_CASE(free_is_not_reported),
	KUNIT_CASE(wrong_direction_free_is_reported),
	KUNIT_CASE(wrong_size_free_is_reported),
	KUNIT_CASE(swapped_pages_reported),
	KUNIT_CASE(unmap_page_of_allocation_reported),
	KUNIT_CASE(free_pages_of_mapping_reported),
	{}
};

static struct kunit_suite pages_suite = {
	.name = "dma_pages_debug",
	.suite_init = edu_suite_init,
	.suite_exit = edu_suite_exit,
	.test_cases = pages_cases,
};

KDEV_KUNIT_SUITES_AT_INIT(&pages_suite);

MODULE_DESCRIPTION("dma_alloc_pages() and dma-debug, on QEMU's edu device");
MODULE_LICENSE("GPL");

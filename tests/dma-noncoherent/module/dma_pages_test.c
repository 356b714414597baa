// SPDX-License-Identifier: GPL-2.0
/*
 * dma_alloc_pages() under CONFIG_DMA_API_DEBUG: a correct allocation and free
 * must not be counted as an error, while a free or sync that does not match
 * the allocation must be.  The regression test of patches/fixes/0002: 6.1
 * counts every correct free as "device driver failed to check map error".
 *
 * The script loads the module once per case (only=<case>: the others skip)
 * and compares /sys/kernel/debug/dma-api/error_count before and after; it
 * sets dma-debug's driver filter so that errors are counted without a WARNING
 * on the console.  The cases themselves check only the allocations.
 */
#include <kunit/test.h>
#include <linux/dma-mapping.h>
#include <linux/mm.h>

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

static struct kunit_case pages_cases[] = {
	KUNIT_CASE(free_is_not_reported),
	KUNIT_CASE(wrong_direction_free_is_reported),
	KUNIT_CASE(wrong_size_free_is_reported),
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

// SPDX-License-Identifier: GPL-2.0
/*
 * dma_alloc_noncoherent() under CONFIG_DMA_API_DEBUG: correct use must not
 * be counted as an error; a sync or free that does not match the allocation
 * (direction, size) and a second free of the same buffer must be.
 *
 * The group's script loads the module once per case (only=<case>: the others
 * skip) and compares /sys/kernel/debug/dma-api/error_count before and after
 * (debugfs attributes cannot be read from the kernel with kernel_read()); it
 * sets dma-debug's driver filter so that errors are counted without a WARNING
 * on the console.  The cases check the allocations and the page references.
 */
#include <kunit/test.h>
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/sizes.h>

#include "edu.h"

static char *only;
module_param(only, charp, 0444);
MODULE_PARM_DESC(only, "run only this case (the others skip)");

static struct device *debug_dev(struct kunit *test)
{
	if (only && strcmp(only, test->name))
		kunit_skip(test, "not selected");
	if (!edu_pdev)
		kunit_skip(test, "no edu PCI device");
	return &edu_pdev->dev;
}

/* Expected: no error counted. */
static void correct_use_silent(struct kunit *test)
{
	struct device *dev = debug_dev(test);
	dma_addr_t h;
	void *cpu;

	cpu = dma_alloc_noncoherent(dev, SZ_16K + 1, &h, DMA_TO_DEVICE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cpu);
	dma_sync_single_for_device(dev, h, SZ_16K + 1, DMA_TO_DEVICE);
	dma_sync_single_for_cpu(dev, h + 100, 200, DMA_TO_DEVICE);
	dma_free_noncoherent(dev, SZ_16K + 1, cpu, h, DMA_TO_DEVICE);
}

/* Expected: counted (a sync and a free in the other direction). */
static void wrong_direction(struct kunit *test)
{
	struct device *dev = debug_dev(test);
	dma_addr_t h;
	void *cpu;

	cpu = dma_alloc_noncoherent(dev, PAGE_SIZE, &h, DMA_TO_DEVICE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cpu);
	dma_sync_single_for_cpu(dev, h, PAGE_SIZE, DMA_FROM_DEVICE);
	dma_free_noncoherent(dev, PAGE_SIZE, cpu, h, DMA_FROM_DEVICE);
}

/* Expected: counted (a sync and a free of 2000 bytes of a 1000-byte buffer). */
static void wrong_size(struct kunit *test)
{
	struct device *dev = debug_dev(test);
	dma_addr_t h;
	void *cpu;

	cpu = dma_alloc_noncoherent(dev, 1000, &h, DMA_BIDIRECTIONAL, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cpu);
	/* Beyond the 1000 bytes allocated, inside the page: the right page is freed. */
	dma_sync_single_for_device(dev, h, 2000, DMA_BIDIRECTIONAL);
	dma_free_noncoherent(dev, 2000, cpu, h, DMA_BIDIRECTIONAL);
}

/* Expected: counted (the second free). */
static void double_free(struct kunit *test)
{
	struct device *dev = debug_dev(test);
	struct page *page;
	dma_addr_t h;
	void *cpu;

	/* An IOMMU would warn about unmapping an IOVA twice: direct paths only. */
	if (device_iommu_mapped(dev))
		kunit_skip(test, "behind an IOMMU");
	cpu = dma_alloc_noncoherent(dev, PAGE_SIZE, &h, DMA_BIDIRECTIONAL, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cpu);
	/* A second reference keeps the page allocator out of it: only dma-debug sees it. */
	page = virt_to_page(cpu);
	get_page(page);
	dma_free_noncoherent(dev, PAGE_SIZE, cpu, h, DMA_BIDIRECTIONAL);
	KUNIT_EXPECT_EQ(test, page_ref_count(page), 1);
	/* This one drops the last reference: the page is free afterwards. */
	dma_free_noncoherent(dev, PAGE_SIZE, cpu, h, DMA_BIDIRECTIONAL);
}

static struct kunit_case debug_cases[] = {
	KUNIT_CASE(correct_use_silent),
	KUNIT_CASE(wrong_direction),
	KUNIT_CASE(wrong_size),
	KUNIT_CASE(double_free),
	{}
};

static struct kunit_suite debug_suite = {
	.name = "dma_noncoherent_debug",
	.suite_init = edu_suite_init,
	.suite_exit = edu_suite_exit,
	.test_cases = debug_cases,
};

KDEV_KUNIT_SUITES_AT_INIT(&debug_suite);

MODULE_DESCRIPTION("dma_alloc_noncoherent() and dma-debug, on QEMU's edu device");
MODULE_LICENSE("GPL");

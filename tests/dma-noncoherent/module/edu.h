/* SPDX-License-Identifier: GPL-2.0 */
/*
 * QEMU's "edu" PCI device (hw/misc/edu.c, 1234:11e8) as a DMA engine for the
 * tests: a 4 KiB buffer inside the device, and a DMA unit that copies between
 * it and memory at a bus address.  Its own DMA mask is 28 bits.  A transfer
 * completes on a virtual-clock timer (about 100 ms); the driver polls.
 *
 * Included by each test module of the group; only one is loaded at a time.
 * dma-debug's error count is read by the group's script around each load
 * (debugfs attributes cannot be read with kernel_read()).
 */
#ifndef KDEV_EDU_H
#define KDEV_EDU_H

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/module.h>
#include <linux/pci.h>

#define EDU_VENDOR	0x1234
#define EDU_DEVICE	0x11e8
#define EDU_ID		0x00
#define EDU_DMA_SRC	0x80
#define EDU_DMA_DST	0x88
#define EDU_DMA_CNT	0x90
#define EDU_DMA_CMD	0x98
#define EDU_CMD_RUN	0x1
#define EDU_CMD_TO_RAM	0x2
#define EDU_BUF		0x40000	/* the device buffer, in the device's DMA space */
#define EDU_BUF_SIZE	4096
/*
 * QEMU's range check (edu_check_range()) wants the end of a transfer strictly
 * inside the buffer, and aborts QEMU otherwise: at most 4095 bytes, from 0.
 */
#define EDU_DMA_MAX	(EDU_BUF_SIZE - 1)
#define EDU_DMA_BITS	28

static struct pci_dev *edu_pdev;
static void __iomem *edu_regs;
static int edu_users;

/*
 * Take the edu device for a suite: no driver is bound (KUnit runs a module's
 * suites before its init function, too early to register one); the device is
 * enabled, its registers mapped and bus mastering turned on by hand, and
 * given back in edu_put().  Returns 0 also when there is no such device: the
 * cases then skip.
 */
static int __maybe_unused edu_get(void)
{
	struct pci_dev *pdev;
	int ret;

	if (edu_users++)
		return 0;
	pdev = pci_get_device(EDU_VENDOR, EDU_DEVICE, NULL);
	if (!pdev)
		return 0;
	ret = pci_enable_device(pdev);
	if (ret)
		goto put;
	ret = pci_request_region(pdev, 0, KBUILD_MODNAME);
	if (ret)
		goto disable;
	edu_regs = pci_iomap(pdev, 0, 0);
	ret = -ENOMEM;
	if (!edu_regs)
		goto release;
	ret = -ENODEV;
	if ((readl(edu_regs + EDU_ID) & 0xffff) != 0x00ed)
		goto unmap;
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(EDU_DMA_BITS));
	if (ret)
		goto unmap;
	pci_set_master(pdev);
	edu_pdev = pdev;
	return 0;
unmap:
	pci_iounmap(pdev, edu_regs);
	edu_regs = NULL;
release:
	pci_release_region(pdev, 0);
disable:
	pci_disable_device(pdev);
put:
	pci_dev_put(pdev);
	edu_users--;
	return ret;
}

static void __maybe_unused edu_put(void)
{
	struct pci_dev *pdev = edu_pdev;

	if (--edu_users || !pdev)
		return;
	pci_clear_master(pdev);
	pci_iounmap(pdev, edu_regs);
	pci_release_region(pdev, 0);
	pci_disable_device(pdev);
	pci_dev_put(pdev);
	edu_pdev = NULL;
	edu_regs = NULL;
}

static int __maybe_unused edu_suite_init(struct kunit_suite *suite)
{
	return edu_get();
}

static void __maybe_unused edu_suite_exit(struct kunit_suite *suite)
{
	edu_put();
}

/*
 * KUnit's kunit_test_suites() runs a module's suites when the module is
 * coming, before its parameters are parsed.  Modules whose cases read
 * parameters run their suites from module init instead, with this; the
 * results are in /sys/kernel/debug/kunit/<suite>/results until unload.
 */
#define KDEV_KUNIT_SUITES_AT_INIT(...)						\
	static struct kunit_suite *kdev_suites[] = { __VA_ARGS__ };		\
	static int __init kdev_suites_init(void)				\
	{									\
		return __kunit_test_suites_init(kdev_suites,			\
						ARRAY_SIZE(kdev_suites));	\
	}									\
	module_init(kdev_suites_init);						\
	static void __exit kdev_suites_exit(void)				\
	{									\
		__kunit_test_suites_exit(kdev_suites, ARRAY_SIZE(kdev_suites));\
	}									\
	module_exit(kdev_suites_exit)

/*
 * Copy @len bytes between memory at bus address @bus and offset @off of the
 * device buffer: into the device when @to_ram is false, out of it otherwise.
 * Returns 0, or -ETIMEDOUT when the device does not finish within 5 s.
 */
static int __maybe_unused edu_dma(dma_addr_t bus, unsigned int off, unsigned int len, bool to_ram)
{
	int i;

	if (to_ram) {
		writeq(EDU_BUF + off, edu_regs + EDU_DMA_SRC);
		writeq(bus, edu_regs + EDU_DMA_DST);
	} else {
		writeq(bus, edu_regs + EDU_DMA_SRC);
		writeq(EDU_BUF + off, edu_regs + EDU_DMA_DST);
	}
	writeq(len, edu_regs + EDU_DMA_CNT);
	writeq(EDU_CMD_RUN | (to_ram ? EDU_CMD_TO_RAM : 0), edu_regs + EDU_DMA_CMD);
	for (i = 0; i < 5000; i++) {
		if (!(readq(edu_regs + EDU_DMA_CMD) & EDU_CMD_RUN))
			return 0;
		usleep_range(500, 1000);
	}
	return -ETIMEDOUT;
}

#endif

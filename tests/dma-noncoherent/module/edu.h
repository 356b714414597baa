/* SPDX-License-Identifier: GPL-2.0 */
/*
 * QEMU's "edu" PCI device (hw/misc/edu.c, 1234:11e8) as a DMA engine for the
 * tests: a 4 KiB buffer inside the device, and a DMA unit that copies between
 * it and memory at a bus address.  Its own DMA mask is 28 bits.  A transfer
 * completes on a virtual-clock timer (about 100 ms); the driver polls.
 *
 * Included by each test module of the group; only one is loaded at a time.
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
#define EDU_DMA_BITS	28

static struct pci_dev *edu_pdev;
static void __iomem *edu_regs;

static int edu_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	int ret;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	ret = pcim_iomap_regions(pdev, BIT(0), KBUILD_MODNAME);
	if (ret)
		return ret;
	pci_set_master(pdev);
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(EDU_DMA_BITS));
	if (ret)
		return ret;
	edu_regs = pcim_iomap_table(pdev)[0];
	if ((readl(edu_regs + EDU_ID) & 0xffff) != 0x00ed)
		return -ENODEV;
	edu_pdev = pdev;
	return 0;
}

static void edu_remove(struct pci_dev *pdev)
{
	edu_pdev = NULL;
	edu_regs = NULL;
}

static const struct pci_device_id edu_ids[] = {
	{ PCI_DEVICE(EDU_VENDOR, EDU_DEVICE) },
	{ }
};

static struct pci_driver edu_driver = {
	.name = KBUILD_MODNAME,
	.id_table = edu_ids,
	.probe = edu_probe,
	.remove = edu_remove,
};

/*
 * KUnit runs a module's suites before its init function: each suite binds the
 * driver in its suite_init and unbinds it in suite_exit.  A suite without the
 * device still runs; its cases skip.
 */
static int __maybe_unused edu_suite_init(struct kunit_suite *suite)
{
	return pci_register_driver(&edu_driver);
}

static void __maybe_unused edu_suite_exit(struct kunit_suite *suite)
{
	pci_unregister_driver(&edu_driver);
}

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

/* dma-debug's error count (debugfs), or -1 when it cannot be read. */
static long __maybe_unused dma_debug_errors(void)
{
	char buf[24] = {};
	struct file *f;
	loff_t pos = 0;
	long v;

	f = filp_open("/sys/kernel/debug/dma-api/error_count", O_RDONLY, 0);
	if (IS_ERR(f))
		return -1;
	if (kernel_read(f, buf, sizeof(buf) - 1, &pos) <= 0)
		v = -1;
	else if (kstrtol(strim(buf), 10, &v))
		v = -1;
	filp_close(f, NULL);
	return v;
}

#endif

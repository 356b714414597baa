// SPDX-License-Identifier: GPL-2.0
/*
 * Harness self-test only: loaded inside the guest to make the kernel report a WARN or an oops,
 * so the host can check that it fails the run and names the cause.
 */
#include <linux/bug.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

static char *what = "warn";
module_param(what, charp, 0444);

static int __init ktest_trigger_init(void)
{
	if (!strcmp(what, "warn")) {
		WARN(1, "ktest_trigger: deliberate warning\n");
	} else if (!strcmp(what, "oops")) {
		int *volatile p = NULL;

		pr_info("ktest_trigger: dereferencing NULL\n");
		*p = 1;
	}
	return 0;
}

static void __exit ktest_trigger_exit(void)
{
}

module_init(ktest_trigger_init);
module_exit(ktest_trigger_exit);
MODULE_DESCRIPTION("Trigger kernel failure reports for the test harness self-test");
MODULE_LICENSE("GPL");

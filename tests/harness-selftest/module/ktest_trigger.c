// SPDX-License-Identifier: GPL-2.0
/*
 * Harness self-test only: loaded inside the guest to make the kernel report a WARN, an oops or
 * (on kmemleak kernels) a leak, so the host can check that it fails the run and names the cause.
 */
#include <linux/bug.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/string.h>

static char *what = "warn";
module_param(what, charp, 0444);

/*
 * Overwrite the stack below the caller's frame, where kmalloc() and its callees left copies of
 * the pointers they returned: kmemleak scans stacks (and the cached stacks of exited tasks), and
 * a stale copy there would keep the leaked objects "referenced".
 */
static noinline void ktest_scrub_stack(void)
{
	char buf[2048];

	memset(buf, 0, sizeof(buf));
	barrier_data(buf);
}

static int __init ktest_trigger_init(void)
{
	if (!strcmp(what, "warn")) {
		WARN(1, "ktest_trigger: deliberate warning\n");
	} else if (!strcmp(what, "oops")) {
		int *volatile p = NULL;

		pr_info("ktest_trigger: dereferencing NULL\n");
		*p = 1;
	} else if (!strcmp(what, "leak")) {
		int i;

		/* four objects nothing points to once this function returns */
		for (i = 0; i < 4; i++) {
			char *volatile leak = kmalloc(128, GFP_KERNEL);

			if (leak)
				leak[0] = 1;
			pr_info("ktest_trigger: leaking %p\n", leak);
			leak = NULL;
		}
		ktest_scrub_stack();
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

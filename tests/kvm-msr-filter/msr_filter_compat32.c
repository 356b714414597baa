// SPDX-License-Identifier: GPL-2.0
/*
 * KVM_X86_SET_MSR_FILTER from a 32-bit process (the compat ioctl): built with gcc -m32
 * -static, without the KVM selftest library, so that the ioctl number and struct
 * kvm_msr_filter come from the i386 layout (4-byte bitmap pointers, 16-byte ranges).
 * A vCPU in real mode runs "rdmsr; hlt" on an MSR KVM does not know, with exits to user space
 * for FILTER and UNKNOWN: the exit's reason tells whether KVM took the range and its bitmap
 * from the 32-bit structure.  Errors: an unmapped bitmap and NULL are EFAULT, unknown flags
 * EINVAL, DEFAULT_DENY without ranges EINVAL (stock 6.1's kvm_arch_vm_compat_ioctl()).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/kvm.h>
#include "kselftest.h"

#define MSR_TEST	0xdeadbeefu
#define CODE_GPA	0x1000

static int vm, vcpu;
static struct kvm_run *run;

static int set_filter(struct kvm_msr_filter *f)
{
	return ioctl(vm, KVM_X86_SET_MSR_FILTER, f) ? -errno : 0;
}

/* Run "rdmsr" once from the start: the exit's msr.reason, 0 if none, -1 on errors. */
static int run_rdmsr(void)
{
	struct kvm_regs regs;

	if (ioctl(vcpu, KVM_GET_REGS, &regs))
		return -1;
	regs.rip = 0;
	regs.rflags = 2;
	if (ioctl(vcpu, KVM_SET_REGS, &regs) || ioctl(vcpu, KVM_RUN, 0))
		return -1;
	if (run->exit_reason == KVM_EXIT_HLT)
		return 0;
	if (run->exit_reason != KVM_EXIT_X86_RDMSR || run->msr.index != MSR_TEST)
		return -1;
	run->msr.data = 0;
	run->msr.error = 0;
	if (ioctl(vcpu, KVM_RUN, 0) || run->exit_reason != KVM_EXIT_HLT)
		return -1;
	return run->msr.reason ? (int)run->msr.reason : -1;
}

static int setup(void)
{
	static const uint8_t code[] = {
		0x66, 0xb9, 0xef, 0xbe, 0xad, 0xde,	/* mov $0xdeadbeef, %ecx */
		0x0f, 0x32,				/* rdmsr */
		0xf4,					/* hlt */
	};
	struct kvm_userspace_memory_region mem = { .slot = 0, .guest_phys_addr = CODE_GPA,
						   .memory_size = 0x1000 };
	struct kvm_enable_cap cap = { .cap = KVM_CAP_X86_USER_SPACE_MSR,
				      .args = { KVM_MSR_EXIT_REASON_FILTER |
						KVM_MSR_EXIT_REASON_UNKNOWN } };
	struct kvm_sregs sregs;
	void *page;
	int kvm, size;

	kvm = open("/dev/kvm", O_RDWR);
	if (kvm < 0)
		return -1;
	if (ioctl(kvm, KVM_CHECK_EXTENSION, KVM_CAP_X86_MSR_FILTER) != 1)
		return -1;
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0)
		return -1;
	page = mmap(NULL, 0x1000, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return -1;
	memcpy(page, code, sizeof(code));
	mem.userspace_addr = (uintptr_t)page;
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &mem) || ioctl(vm, KVM_ENABLE_CAP, &cap))
		return -1;
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (vcpu < 0 || size <= 0)
		return -1;
	run = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	if (run == MAP_FAILED || ioctl(vcpu, KVM_GET_SREGS, &sregs))
		return -1;
	/* Real mode, CS at the code's page. */
	sregs.cs.base = CODE_GPA;
	sregs.cs.selector = CODE_GPA >> 4;
	return ioctl(vcpu, KVM_SET_SREGS, &sregs);
}

int main(void)
{
	static uint8_t deny[8], allow[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct kvm_msr_filter f;
	void *unmapped;
	int r;

	ksft_print_header();
	if (sizeof(void *) != 4 || sizeof(struct kvm_msr_filter_range) != 16)
		ksft_exit_fail_msg("not an i386 build\n");
	if (setup())
		ksft_exit_fail_msg("VM setup: %s\n", strerror(errno));
	/* Inaccessible but reserved, so that no later mapping can take its address. */
	unmapped = mmap(NULL, 0x1000, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ksft_set_plan(9);
	ksft_print_msg("compat KVM_X86_SET_MSR_FILTER = %#lx (struct of %zu bytes)\n",
		       (unsigned long)KVM_X86_SET_MSR_FILTER, sizeof(f));

	ksft_test_result(run_rdmsr() == KVM_MSR_EXIT_REASON_UNKNOWN, "no filter: UNKNOWN\n");

	memset(&f, 0, sizeof(f));
	f.ranges[0] = (struct kvm_msr_filter_range){ .flags = KVM_MSR_FILTER_READ,
		.nmsrs = 1, .base = MSR_TEST, .bitmap = deny };
	r = set_filter(&f);
	ksft_test_result(r == 0, "valid bitmap: %d\n", r);
	ksft_test_result(run_rdmsr() == KVM_MSR_EXIT_REASON_FILTER, "denied: FILTER\n");

	/* The bitmap is read through the 32-bit pointer: an allowing one allows. */
	f.ranges[0].bitmap = allow;
	f.flags = KVM_MSR_FILTER_DEFAULT_DENY;
	r = set_filter(&f);
	ksft_test_result(r == 0 && run_rdmsr() == KVM_MSR_EXIT_REASON_UNKNOWN,
			 "allowed by the bitmap: %d\n", r);

	f.ranges[0].bitmap = unmapped;
	r = set_filter(&f);
	ksft_test_result(r == -EFAULT, "unmapped bitmap: %d (want %d)\n", r, -EFAULT);
	f.ranges[0].bitmap = NULL;
	r = set_filter(&f);
	ksft_test_result(r == -EFAULT, "NULL bitmap: %d (want %d)\n", r, -EFAULT);
	/* The refused filters left the allowing one in force. */
	ksft_test_result(run_rdmsr() == KVM_MSR_EXIT_REASON_UNKNOWN, "old filter kept\n");

	f.ranges[0].bitmap = deny;
	f.flags = 2;
	r = set_filter(&f);
	ksft_test_result(r == -EINVAL, "unknown flags: %d (want %d)\n", r, -EINVAL);
	memset(&f, 0, sizeof(f));
	f.flags = KVM_MSR_FILTER_DEFAULT_DENY;
	r = set_filter(&f);
	ksft_test_result(r == -EINVAL, "DEFAULT_DENY without ranges: %d (want %d)\n", r,
			 -EINVAL);
	ksft_finished();
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Cost of MSR exits to user space and of the MSR filter (patches/kvm-user-msr,
 * patches/kvm-msr-filter), in a real-mode guest of a VM of this (nested) KVM:
 *
 *   rdmsr-unknown-exit     RDMSR of an MSR KVM does not know, with UNKNOWN
 *                          exits: one round trip to user space per access
 *   rdmsr-filtered-exit    RDMSR denied by a one-range filter, FILTER exits
 *   wrmsr-filtered-exit    the same for WRMSR
 *   rdmsr-kvm-no-filter    RDMSR of an MSR KVM emulates (APIC base), no filter
 *   rdmsr-kvm-filter-16    the same with a 16-range filter installed; only
 *                          the last range covers (and allows) the MSR
 *   wrmsr-kvm-filter-16    WRMSR of an emulated MSR (EFER, same value) with
 *                          the 16-range filter
 *
 * The guest runs LOOPS accesses and halts; a case's time is the median over
 * REPS runs after one warm-up, per access.  Output is KTAP, one result per
 * case, each preceded by the line scripts/bench-report.py parses:
 *   # BENCH <case> <median ns per access> ns min=<ns> max=<ns> reps=<n>
 *
 * Usage: kvm_msr_bench [CASE-GLOB]   (the glob also comes from $KTEST_CASE)
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include "../bench_util.h"

#define LOOPS		2000
#define REPS		11
#define MEM_SIZE	0x10000
#define CODE_GPA	0x1000

#define MSR_UNKNOWN	0x4b564d7fu	/* no MSR of KVM's */
#define MSR_APIC_BASE	0x1bu
#define MSR_EFER	0xc0000080u

enum kind { UNKNOWN_EXIT, FILTERED_EXIT, KVM_NO_FILTER, KVM_FILTER16 };

struct bench_case {
	const char *name;
	enum kind kind;
	int write;
	uint32_t msr;
};

static const struct bench_case cases[] = {
	{ "rdmsr-unknown-exit", UNKNOWN_EXIT, 0, MSR_UNKNOWN },
	{ "rdmsr-filtered-exit", FILTERED_EXIT, 0, MSR_APIC_BASE },
	{ "wrmsr-filtered-exit", FILTERED_EXIT, 1, MSR_APIC_BASE },
	{ "rdmsr-kvm-no-filter", KVM_NO_FILTER, 0, MSR_APIC_BASE },
	{ "rdmsr-kvm-filter-16", KVM_FILTER16, 0, MSR_APIC_BASE },
	{ "wrmsr-kvm-filter-16", KVM_FILTER16, 1, MSR_EFER },
};

static int kvm_fd;
static uint8_t filter_bits[16][8];

struct vm {
	int fd, vcpu;
	struct kvm_run *run;
	uint8_t *mem;
};

/*
 * Real mode, at CODE_GPA:  mov ecx, msr; mov ebx, LOOPS; [xor eax,eax;
 * xor edx,edx | rdmsr once for WRMSR]; 1: rdmsr|wrmsr; dec ebx; jnz 1b; hlt
 */
static size_t guest_code(uint8_t *p, uint32_t msr, int write)
{
	size_t n = 0;

	p[n++] = 0x66; p[n++] = 0xb9;		/* mov ecx, imm32 */
	memcpy(p + n, &msr, 4); n += 4;
	p[n++] = 0x66; p[n++] = 0xbb;		/* mov ebx, imm32 */
	*(uint32_t *)(p + n) = LOOPS; n += 4;
	if (write) {				/* write back what is there */
		p[n++] = 0x0f; p[n++] = 0x32;	/* rdmsr */
	}
	p[n++] = 0x0f; p[n++] = write ? 0x30 : 0x32;	/* 1: wrmsr / rdmsr */
	p[n++] = 0x66; p[n++] = 0x4b;		/* dec ebx */
	p[n++] = 0x75; p[n++] = 0xfa;		/* jnz 1b */
	p[n++] = 0xf4;				/* hlt */
	return n;
}

static int vm_create(struct vm *vm, const struct bench_case *c)
{
	struct kvm_userspace_memory_region region = { 0 };
	struct kvm_sregs sregs;
	struct kvm_regs regs = { 0 };
	int size;

	vm->fd = ioctl(kvm_fd, KVM_CREATE_VM, 0);
	if (vm->fd < 0)
		return -1;
	vm->mem = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (vm->mem == MAP_FAILED)
		return -1;
	region.memory_size = MEM_SIZE;
	region.userspace_addr = (uintptr_t)vm->mem;
	if (ioctl(vm->fd, KVM_SET_USER_MEMORY_REGION, &region))
		return -1;
	guest_code(vm->mem + CODE_GPA, c->msr, c->write);
	vm->vcpu = ioctl(vm->fd, KVM_CREATE_VCPU, 0);
	size = ioctl(kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (vm->vcpu < 0 || size <= 0)
		return -1;
	vm->run = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, vm->vcpu, 0);
	if (vm->run == MAP_FAILED)
		return -1;
	if (ioctl(vm->vcpu, KVM_GET_SREGS, &sregs))
		return -1;
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (ioctl(vm->vcpu, KVM_SET_SREGS, &sregs))
		return -1;
	regs.rip = CODE_GPA;
	regs.rflags = 2;
	return ioctl(vm->vcpu, KVM_SET_REGS, &regs);
}

static int vm_setup_msrs(struct vm *vm, const struct bench_case *c)
{
	struct kvm_enable_cap cap = { .cap = KVM_CAP_X86_USER_SPACE_MSR };
	struct kvm_msr_filter f = { .flags = KVM_MSR_FILTER_DEFAULT_ALLOW };
	int i;

	switch (c->kind) {
	case UNKNOWN_EXIT:
		cap.args[0] = KVM_MSR_EXIT_REASON_UNKNOWN;
		return ioctl(vm->fd, KVM_ENABLE_CAP, &cap);
	case FILTERED_EXIT:
		cap.args[0] = KVM_MSR_EXIT_REASON_FILTER;
		if (ioctl(vm->fd, KVM_ENABLE_CAP, &cap))
			return -1;
		/* One range, the MSR's bit clear: denied. */
		memset(filter_bits[0], 0, sizeof(filter_bits[0]));
		f.ranges[0] = (struct kvm_msr_filter_range) {
			.flags = KVM_MSR_FILTER_READ | KVM_MSR_FILTER_WRITE,
			.nmsrs = 1, .base = c->msr, .bitmap = filter_bits[0] };
		return ioctl(vm->fd, KVM_X86_SET_MSR_FILTER, &f);
	case KVM_NO_FILTER:
		return 0;
	case KVM_FILTER16:
		/* 15 ranges elsewhere, then one that allows the MSR. */
		for (i = 0; i < 16; i++) {
			memset(filter_bits[i], 0xff, sizeof(filter_bits[i]));
			f.ranges[i] = (struct kvm_msr_filter_range) {
				.flags = KVM_MSR_FILTER_READ | KVM_MSR_FILTER_WRITE,
				.nmsrs = 64, .base = 0x40000000u + i * 0x1000,
				.bitmap = filter_bits[i] };
		}
		f.ranges[15].base = c->msr;
		return ioctl(vm->fd, KVM_X86_SET_MSR_FILTER, &f);
	}
	return -1;
}

static void vm_destroy(struct vm *vm)
{
	close(vm->vcpu);
	close(vm->fd);
	munmap(vm->mem, MEM_SIZE);
}

/* Run the guest to its HLT, answering every MSR exit; -1 on a surprise. */
static int guest_run(struct vm *vm, const struct bench_case *c)
{
	unsigned int want = c->write ? KVM_EXIT_X86_WRMSR : KVM_EXIT_X86_RDMSR;
	struct kvm_regs regs = { .rip = CODE_GPA, .rflags = 2 };
	int exits = 0;

	if (ioctl(vm->vcpu, KVM_SET_REGS, &regs))
		return -1;
	for (;;) {
		if (ioctl(vm->vcpu, KVM_RUN, 0))
			return -1;
		if (vm->run->exit_reason == KVM_EXIT_HLT)
			break;
		if (vm->run->exit_reason != want && !(c->write && exits == 0 &&
		    vm->run->exit_reason == KVM_EXIT_X86_RDMSR))
			return -1;
		vm->run->msr.error = 0;
		vm->run->msr.data = 0;
		exits++;
	}
	/* The exit cases exit once per access (and once for WRMSR's first read). */
	if (c->kind <= FILTERED_EXIT && exits != LOOPS + c->write)
		return -1;
	if (c->kind > FILTERED_EXIT && exits)
		return -1;
	return 0;
}

static int run_case(int i)
{
	const struct bench_case *c = &cases[i];
	unsigned long long t[REPS], t0;
	struct vm vm;
	int r;

	if (vm_create(&vm, c) || vm_setup_msrs(&vm, c)) {
		printf("# %s: VM setup failed: %s\n", c->name, strerror(errno));
		return -1;
	}
	if (guest_run(&vm, c)) {
		printf("# %s: warm-up run failed (exit %u)\n", c->name, vm.run->exit_reason);
		vm_destroy(&vm);
		return -1;
	}
	for (r = 0; r < REPS; r++) {
		t0 = bench_now_ns();
		if (guest_run(&vm, c)) {
			printf("# %s: run failed (exit %u)\n", c->name, vm.run->exit_reason);
			vm_destroy(&vm);
			return -1;
		}
		t[r] = bench_now_ns() - t0;
	}
	bench_report(c->name, t, REPS, LOOPS);
	vm_destroy(&vm);
	return 0;
}

static const char *case_name(int i)
{
	return cases[i].name;
}

int main(int argc, char **argv)
{
	kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm_fd < 0) {
		printf("1..0 # SKIP /dev/kvm: %s\n", strerror(errno));
		return 4;
	}
	return bench_run_cases(bench_glob(argc, argv), sizeof(cases) / sizeof(cases[0]),
			       case_name, run_case);
}

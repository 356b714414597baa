/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the KVM MSR test programs (tests/kvm-user-msr, tests/kvm-msr-filter and
 * tests/kvm-msr-filter-fuzz), on the flavour tree's KVM selftest library (libkvm.a).
 *
 * The guest runs a batch of MSR accesses that user space puts into g_ops[] (RDMSR or
 * WRMSR, optionally behind the forced emulation prefix so that KVM's instruction emulator
 * handles it), each with a recovery address in r11: the guest's own #GP handler
 * (installed with vm_install_exception_handler()) records the vector and continues there.
 * Results go to g_res[], then GUEST_SYNC(n) hands them to user space.  User space answers
 * KVM_EXIT_X86_RDMSR/WRMSR exits through a callback and records every exit.
 */
#ifndef KVM_MSR_UTIL_H
#define KVM_MSR_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "kvm_util.h"
#include "processor.h"

/* Forced emulation prefix: the instruction after it goes through KVM's emulator. */
#define KVM_FEP "ud2; .byte 'k', 'v', 'm';"

/* An index that nothing in KVM knows about. */
#define MSR_UNKNOWN	0xdeadbeefu
#define MSR_UNKNOWN2	0x00abcdefu

#ifndef MSR_TSC_AUX
#define MSR_TSC_AUX	0xc0000103
#endif
#ifndef MSR_IA32_SYSENTER_CS
#define MSR_IA32_SYSENTER_CS	0x174
#define MSR_IA32_SYSENTER_ESP	0x175
#define MSR_IA32_SYSENTER_EIP	0x176
#endif
#define MSR_X2APIC_ID		0x802
#define MSR_X2APIC_LVR		0x803
#define MSR_X2APIC_TPR		0x808

/*
 * In a kselftest harness TEST: @cap reads 1 from KVM_CHECK_EXTENSION on both
 * /dev/kvm and a new VM.
 */
#define ASSERT_CAP_ON_KVM_AND_VM(cap) do {					\
	struct kvm_vcpu *__vcpu;						\
	struct kvm_vm *__vm;							\
										\
	ASSERT_EQ(1, kvm_check_cap(cap));					\
	__vm = vm_create_with_one_vcpu(&__vcpu, guest_code);			\
	ASSERT_EQ(1, vm_check_cap(__vm, cap));					\
	kvm_vm_free(__vm);							\
} while (0)

#define MAX_OPS		64
#define MAX_EXITS	64

struct msr_op {
	uint32_t index;
	uint32_t write;		/* WRMSR of value, else RDMSR */
	uint32_t fep;		/* behind the forced emulation prefix */
	uint32_t pad;
	uint64_t value;
};

struct msr_res {
	uint64_t value;		/* RDMSR: edx:eax (0 after a fault) */
	uint64_t vector;	/* 0, or the exception the guest took */
};

static struct msr_op g_ops[MAX_OPS];
static struct msr_res g_res[MAX_OPS];
static uint32_t g_nops;
/* The guest loops over the batch g_loops times (the concurrency tests), counting faults. */
static uint32_t g_loops = 1;
static uint64_t g_gp_count;

/* The guest's #GP handler: record the fault, continue at the recovery address (r11). */
static void guest_gp_handler(struct ex_regs *regs)
{
	regs->r10 = regs->vector;
	regs->rax = 0;
	regs->rdx = 0;
	regs->rip = regs->r11;
	g_gp_count++;
}

#define GUEST_MSR_INSN(prefix, insn, a, d, c, vec)				\
	asm volatile("lea 1f(%%rip), %%r11\n\t"					\
		     "xor %%r10d, %%r10d\n\t"					\
		     prefix insn "\n\t"						\
		     "1: mov %%r10, %[v]\n\t"					\
		     : "+a"(a), "+d"(d), [v] "=r"(vec)				\
		     : "c"(c)							\
		     : "r10", "r11", "memory")

static inline void guest_msr_op(const struct msr_op *op, struct msr_res *res)
{
	uint32_t a = op->write ? (uint32_t)op->value : 0;
	uint32_t d = op->write ? (uint32_t)(op->value >> 32) : 0;
	uint32_t c = op->index;
	uint64_t vec;

	if (op->write && op->fep)
		GUEST_MSR_INSN(KVM_FEP, "wrmsr", a, d, c, vec);
	else if (op->write)
		GUEST_MSR_INSN("", "wrmsr", a, d, c, vec);
	else if (op->fep)
		GUEST_MSR_INSN(KVM_FEP, "rdmsr", a, d, c, vec);
	else
		GUEST_MSR_INSN("", "rdmsr", a, d, c, vec);
	res->vector = vec;
	res->value = op->write ? 0 : ((uint64_t)d << 32 | a);
}

static void guest_code(void)
{
	for (;;) {
		uint32_t n = READ_ONCE(g_nops), loops = READ_ONCE(g_loops), i, l;

		for (l = 0; l < loops; l++)
			for (i = 0; i < n; i++)
				guest_msr_op(&g_ops[i], &g_res[i]);
		GUEST_SYNC(n);
	}
}

/* One MSR exit as user space saw it. */
struct msr_exit {
	uint32_t exit_reason;	/* KVM_EXIT_X86_RDMSR or KVM_EXIT_X86_WRMSR */
	uint32_t reason;
	uint32_t index;
	uint8_t error;		/* as the kernel left it (it clears it) */
	uint8_t pad_nonzero;
	uint64_t data;
};

struct msr_ctx;
/* Fill run->msr.error (and run->msr.data for RDMSR) to answer an exit. */
typedef void (*msr_answer_fn)(struct msr_ctx *ctx, struct kvm_run *run);

struct msr_ctx {
	struct kvm_vm *vm;
	struct kvm_vcpu *vcpu;
	msr_answer_fn answer;
	uint8_t answer_error;	/* the default answer */
	uint64_t answer_data;
	void *priv;
	unsigned int nexits;	/* exits of the last batch (only the first MAX_EXITS kept) */
	struct msr_exit exits[MAX_EXITS];
	unsigned long total_exits;
};

static void msr_default_answer(struct msr_ctx *ctx, struct kvm_run *run)
{
	run->msr.error = ctx->answer_error;
	if (run->exit_reason == KVM_EXIT_X86_RDMSR)
		run->msr.data = ctx->answer_data;
}

static void msr_ctx_init(struct msr_ctx *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->answer = msr_default_answer;
	g_loops = 1;
	ctx->vm = vm_create_with_one_vcpu(&ctx->vcpu, guest_code);
	vm_init_descriptor_tables(ctx->vm);
	vcpu_init_descriptor_tables(ctx->vcpu);
	vm_install_exception_handler(ctx->vm, GP_VECTOR, guest_gp_handler);
}

static inline void msr_ctx_free(struct msr_ctx *ctx)
{
	if (ctx->vm)
		kvm_vm_free(ctx->vm);
	ctx->vm = NULL;
}

/*
 * Run the batch @ops (n entries, each g_loops times) in the guest; answer its MSR exits;
 * results into @res.  Returns 0, or -1 if KVM_RUN failed (errno set) or the vCPU stopped for
 * anything but an MSR exit or the batch's GUEST_SYNC.
 */
static int msr_run_ops(struct msr_ctx *ctx, const struct msr_op *ops, unsigned int n,
		       struct msr_res *res)
{
	struct kvm_run *run = ctx->vcpu->run;
	struct ucall uc;

	TEST_ASSERT(n <= MAX_OPS, "too many ops");
	memcpy(g_ops, ops, n * sizeof(*ops));
	memset(g_res, 0xa5, sizeof(g_res));
	g_nops = n;
	sync_global_to_guest(ctx->vm, g_ops);
	sync_global_to_guest(ctx->vm, g_res);
	sync_global_to_guest(ctx->vm, g_nops);
	sync_global_to_guest(ctx->vm, g_loops);
	ctx->nexits = 0;
	for (;;) {
		if (_vcpu_run(ctx->vcpu))
			return -1;
		switch (run->exit_reason) {
		case KVM_EXIT_X86_RDMSR:
		case KVM_EXIT_X86_WRMSR:
			if (ctx->nexits < MAX_EXITS) {
				struct msr_exit *e = &ctx->exits[ctx->nexits];
				unsigned int i;

				e->exit_reason = run->exit_reason;
				e->reason = run->msr.reason;
				e->index = run->msr.index;
				e->data = run->msr.data;
				e->error = run->msr.error;
				e->pad_nonzero = 0;
				for (i = 0; i < sizeof(run->msr.pad); i++)
					e->pad_nonzero |= run->msr.pad[i];
			}
			ctx->nexits++;
			ctx->total_exits++;
			ctx->answer(ctx, run);
			continue;
		case KVM_EXIT_IO:
			switch (get_ucall(ctx->vcpu, &uc)) {
			case UCALL_SYNC:
				sync_global_from_guest(ctx->vm, g_res);
				if (res)
					memcpy(res, g_res, n * sizeof(*res));
				return 0;
			case UCALL_ABORT:
				REPORT_GUEST_ASSERT(uc);
				return -1;
			default:
				break;
			}
			/* fall through */
		default:
			fprintf(stderr, "# unexpected exit %u (%s)\n", run->exit_reason,
				exit_reason_str(run->exit_reason));
			errno = 0;
			return -1;
		}
	}
}

/* One access; returns the guest's vector (0: no fault), the value read in *val. */
static inline int msr_access(struct msr_ctx *ctx, bool write, uint32_t index, uint64_t value,
		      bool fep, uint64_t *val)
{
	struct msr_op op = { .index = index, .write = write, .fep = fep, .value = value };
	struct msr_res res;

	if (msr_run_ops(ctx, &op, 1, &res))
		return -1;
	if (val)
		*val = res.value;
	return (int)res.vector;
}

static inline int msr_rd(struct msr_ctx *ctx, uint32_t index, uint64_t *val)
{
	return msr_access(ctx, false, index, 0, false, val);
}

static inline int msr_wr(struct msr_ctx *ctx, uint32_t index, uint64_t value)
{
	return msr_access(ctx, true, index, value, false, NULL);
}

/* Whether kvm.force_emulation_prefix is set (the FEP cases need it). */
static inline bool fep_enabled(void)
{
	char c = 0;
	int fd = open("/sys/module/kvm/parameters/force_emulation_prefix", O_RDONLY);

	if (fd < 0)
		return false;
	if (read(fd, &c, 1) != 1)
		c = 0;
	close(fd);
	return c == 'Y' || c == '1';
}

/* KVM_ENABLE_CAP(KVM_CAP_X86_USER_SPACE_MSR): 0 or -errno. */
static inline int set_user_msr(struct kvm_vm *vm, uint64_t mask)
{
	struct kvm_enable_cap cap = { .cap = KVM_CAP_X86_USER_SPACE_MSR, .args = { mask } };

	return ioctl(vm->fd, KVM_ENABLE_CAP, &cap) ? -errno : 0;
}

/* KVM_X86_SET_MSR_FILTER: 0 or -errno. */
static inline int set_filter(struct kvm_vm *vm, struct kvm_msr_filter *f)
{
	return ioctl(vm->fd, KVM_X86_SET_MSR_FILTER, f) ? -errno : 0;
}

/*
 * KVM_X86_SET_MSR_FILTER from another thread while the main one creates a vCPU (the race
 * of fixes/0009): the thread waits for @go, then @delay_ns more, then sets @f on @vm.
 */
struct create_race {
	struct kvm_vm *vm;
	struct kvm_msr_filter *f;
	volatile int go;
	uint64_t delay_ns;
	int err;
};

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline void *set_after_delay(void *arg)
{
	struct create_race *t = arg;
	uint64_t start;

	while (!t->go)
		;
	start = now_ns();
	while (now_ns() - start < t->delay_ns)
		;
	t->err = set_filter(t->vm, t->f);
	return NULL;
}

#endif

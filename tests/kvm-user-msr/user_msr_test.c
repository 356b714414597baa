// SPDX-License-Identifier: GPL-2.0
/*
 * KVM_CAP_X86_USER_SPACE_MSR (patches/kvm-user-msr): the capability, KVM_ENABLE_CAP's
 * masks and errors, MSR accesses that KVM does not know (KVM_MSR_EXIT_REASON_UNKNOWN) or
 * rejects (KVM_MSR_EXIT_REASON_INVAL) with and without exits to user space, user space's
 * answers (data, error -> #GP seen by the guest's own handler), the exit's fields, the
 * emulator's path (forced emulation prefix), and the capability changed after vCPU creation,
 * from another thread and while the vCPU runs.  Every expectation is stock 6.1's behaviour.
 */
#include "../kvm_msr_util.h"
#undef ASSERT_EQ	/* test_util.h's; the harness has its own */
#include "kselftest_harness.h"

#define INVAL	KVM_MSR_EXIT_REASON_INVAL
#define UNKNOWN	KVM_MSR_EXIT_REASON_UNKNOWN
#define FILTER	KVM_MSR_EXIT_REASON_FILTER

/* A PAT value with a reserved memory type (8) in every entry: KVM refuses it. */
#define PAT_INVALID	0x0808080808080808ull
#define PAT_DEFAULT	0x0007040600070406ull

FIXTURE(umsr) {
	struct msr_ctx c;
};

FIXTURE_SETUP(umsr)
{
	msr_ctx_init(&self->c);
}

FIXTURE_TEARDOWN(umsr)
{
	msr_ctx_free(&self->c);
}

static uint64_t guest_gp_count(struct msr_ctx *c)
{
	sync_global_from_guest(c->vm, g_gp_count);
	return g_gp_count;
}

TEST(cap_check)
{
	ASSERT_CAP_ON_KVM_AND_VM(KVM_CAP_X86_USER_SPACE_MSR);
}

TEST_F(umsr, enable_each_reason_and_combined)
{
	static const uint64_t masks[] = {
		0, INVAL, UNKNOWN, FILTER, INVAL | UNKNOWN, INVAL | FILTER,
		UNKNOWN | FILTER, INVAL | UNKNOWN | FILTER, 0,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(masks); i++) {
		EXPECT_EQ(0, set_user_msr(self->c.vm, masks[i])) {
			TH_LOG("mask %#llx", (unsigned long long)masks[i]);
		}
	}
}

TEST_F(umsr, enable_unknown_bits_einval)
{
	static const uint64_t masks[] = {
		1ull << 3, INVAL | UNKNOWN | FILTER | 1ull << 3, 1ull << 31, 1ull << 32,
		1ull << 63, ~0ull, 0xf0,
	};
	struct kvm_enable_cap cap = { .cap = KVM_CAP_X86_USER_SPACE_MSR,
				      .flags = 1, .args = { UNKNOWN } };
	unsigned int i;
	uint64_t val;

	/* A refused mask leaves the one in force as it was. */
	ASSERT_EQ(0, set_user_msr(self->c.vm, UNKNOWN));
	for (i = 0; i < ARRAY_SIZE(masks); i++) {
		EXPECT_EQ(-EINVAL, set_user_msr(self->c.vm, masks[i])) {
			TH_LOG("mask %#llx", (unsigned long long)masks[i]);
		}
	}
	/* kvm_enable_cap.flags must be 0. */
	EXPECT_EQ(-1, ioctl(self->c.vm->fd, KVM_ENABLE_CAP, &cap));
	EXPECT_EQ(EINVAL, errno);

	self->c.answer_data = 0x1234;
	ASSERT_EQ(0, msr_rd(&self->c, MSR_UNKNOWN, &val));
	EXPECT_EQ(1, self->c.nexits);
	EXPECT_EQ(0x1234, val);
}

TEST_F(umsr, unknown_msr_gp_without_exits)
{
	uint64_t val = 1;

	/* Never enabled. */
	EXPECT_EQ(GP_VECTOR, msr_rd(&self->c, MSR_UNKNOWN, &val));
	EXPECT_EQ(0, val);
	EXPECT_EQ(GP_VECTOR, msr_wr(&self->c, MSR_UNKNOWN, 0x55));
	EXPECT_EQ(GP_VECTOR, msr_rd(&self->c, MSR_UNKNOWN2, &val));
	EXPECT_EQ(0, self->c.total_exits);
	EXPECT_EQ(3, guest_gp_count(&self->c));

	/* Enabled for other reasons only. */
	ASSERT_EQ(0, set_user_msr(self->c.vm, INVAL | FILTER));
	EXPECT_EQ(GP_VECTOR, msr_rd(&self->c, MSR_UNKNOWN, &val));
	EXPECT_EQ(GP_VECTOR, msr_wr(&self->c, MSR_UNKNOWN, 0x55));
	EXPECT_EQ(0, self->c.total_exits);
	EXPECT_EQ(5, guest_gp_count(&self->c));
}

TEST_F(umsr, unknown_rdmsr_exit_answered)
{
	struct kvm_run *run = self->c.vcpu->run;
	uint64_t val = 0;

	ASSERT_EQ(0, set_user_msr(self->c.vm, UNKNOWN));
	/* The kernel fills the exit: error and pad cleared, data 0 for a read. */
	memset(&run->msr, 0xff, sizeof(run->msr));
	self->c.answer_data = 0x1122334455667788ull;
	ASSERT_EQ(0, msr_rd(&self->c, MSR_UNKNOWN, &val));
	EXPECT_EQ(0x1122334455667788ull, val);
	ASSERT_EQ(1, self->c.nexits);
	EXPECT_EQ(KVM_EXIT_X86_RDMSR, self->c.exits[0].exit_reason);
	EXPECT_EQ(UNKNOWN, self->c.exits[0].reason);
	EXPECT_EQ(MSR_UNKNOWN, self->c.exits[0].index);
	EXPECT_EQ(0, self->c.exits[0].data);
	EXPECT_EQ(0, self->c.exits[0].error);
	EXPECT_EQ(0, self->c.exits[0].pad_nonzero);
	EXPECT_EQ(0, guest_gp_count(&self->c));

	self->c.answer_data = 0;
	ASSERT_EQ(0, msr_rd(&self->c, MSR_UNKNOWN2, &val));
	EXPECT_EQ(0, val);
	EXPECT_EQ(MSR_UNKNOWN2, self->c.exits[0].index);
}

TEST_F(umsr, unknown_wrmsr_exit_carries_index_and_data)
{
	struct kvm_run *run = self->c.vcpu->run;

	ASSERT_EQ(0, set_user_msr(self->c.vm, UNKNOWN));
	memset(&run->msr, 0xff, sizeof(run->msr));
	ASSERT_EQ(0, msr_wr(&self->c, MSR_UNKNOWN, 0xfeedface12345678ull));
	ASSERT_EQ(1, self->c.nexits);
	EXPECT_EQ(KVM_EXIT_X86_WRMSR, self->c.exits[0].exit_reason);
	EXPECT_EQ(UNKNOWN, self->c.exits[0].reason);
	EXPECT_EQ(MSR_UNKNOWN, self->c.exits[0].index);
	EXPECT_EQ(0xfeedface12345678ull, self->c.exits[0].data);
	EXPECT_EQ(0, self->c.exits[0].error);
	EXPECT_EQ(0, self->c.exits[0].pad_nonzero);
	EXPECT_EQ(0, guest_gp_count(&self->c));
}

TEST_F(umsr, answer_error_is_gp_in_guest)
{
	static const uint8_t errors[] = { 1, 2, 0x80, 0xff };
	unsigned int i;
	uint64_t val;

	ASSERT_EQ(0, set_user_msr(self->c.vm, UNKNOWN));
	for (i = 0; i < ARRAY_SIZE(errors); i++) {
		self->c.answer_error = errors[i];
		self->c.answer_data = 0x99;
		val = 1;
		EXPECT_EQ(GP_VECTOR, msr_rd(&self->c, MSR_UNKNOWN, &val));
		EXPECT_EQ(1, self->c.nexits);
		EXPECT_EQ(0, val);
		EXPECT_EQ(GP_VECTOR, msr_wr(&self->c, MSR_UNKNOWN, 7));
		EXPECT_EQ(1, self->c.nexits);
	}
	EXPECT_EQ(2 * ARRAY_SIZE(errors), guest_gp_count(&self->c));
	/* error 0 again: no fault. */
	self->c.answer_error = 0;
	EXPECT_EQ(0, msr_rd(&self->c, MSR_UNKNOWN, &val));
	EXPECT_EQ(0x99, val);
}

TEST_F(umsr, inval_exits_only_when_enabled)
{
	uint64_t val;

	/* Not enabled, or another reason only: #GP, PAT unchanged. */
	EXPECT_EQ(GP_VECTOR, msr_wr(&self->c, MSR_IA32_CR_PAT, PAT_INVALID));
	ASSERT_EQ(0, set_user_msr(self->c.vm, UNKNOWN | FILTER));
	EXPECT_EQ(GP_VECTOR, msr_wr(&self->c, MSR_IA32_CR_PAT, PAT_INVALID));
	/* x2APIC register while the APIC is in xAPIC mode: an invalid read. */
	EXPECT_EQ(GP_VECTOR, msr_rd(&self->c, MSR_X2APIC_LVR, &val));
	EXPECT_EQ(0, self->c.total_exits);
	EXPECT_EQ(PAT_DEFAULT, vcpu_get_msr(self->c.vcpu, MSR_IA32_CR_PAT));

	ASSERT_EQ(0, set_user_msr(self->c.vm, INVAL));
	EXPECT_EQ(0, msr_wr(&self->c, MSR_IA32_CR_PAT, PAT_INVALID));
	ASSERT_EQ(1, self->c.nexits);
	EXPECT_EQ(KVM_EXIT_X86_WRMSR, self->c.exits[0].exit_reason);
	EXPECT_EQ(INVAL, self->c.exits[0].reason);
	EXPECT_EQ(MSR_IA32_CR_PAT, self->c.exits[0].index);
	EXPECT_EQ(PAT_INVALID, self->c.exits[0].data);
	/* User space said "done": KVM itself did not write it. */
	EXPECT_EQ(PAT_DEFAULT, vcpu_get_msr(self->c.vcpu, MSR_IA32_CR_PAT));

	self->c.answer_data = 0xabcdef;
	EXPECT_EQ(0, msr_rd(&self->c, MSR_X2APIC_LVR, &val));
	ASSERT_EQ(1, self->c.nexits);
	EXPECT_EQ(KVM_EXIT_X86_RDMSR, self->c.exits[0].exit_reason);
	EXPECT_EQ(INVAL, self->c.exits[0].reason);
	EXPECT_EQ(MSR_X2APIC_LVR, self->c.exits[0].index);
	EXPECT_EQ(0xabcdef, val);

	/* INVAL alone does not cover unknown MSRs. */
	EXPECT_EQ(GP_VECTOR, msr_rd(&self->c, MSR_UNKNOWN, &val));
	EXPECT_EQ(0, self->c.nexits);
	/* A valid access to a known MSR never exits. */
	ASSERT_EQ(0, set_user_msr(self->c.vm, INVAL | UNKNOWN | FILTER));
	EXPECT_EQ(0, msr_rd(&self->c, MSR_IA32_CR_PAT, &val));
	EXPECT_EQ(PAT_DEFAULT, val);
	EXPECT_EQ(0, msr_wr(&self->c, MSR_KERNEL_GS_BASE, 0x1000));
	EXPECT_EQ(0, msr_rd(&self->c, MSR_KERNEL_GS_BASE, &val));
	EXPECT_EQ(0x1000, val);
	EXPECT_EQ(0, self->c.nexits);
	EXPECT_EQ(4, guest_gp_count(&self->c));
}

TEST_F(umsr, reason_per_access_with_all_enabled)
{
	struct msr_op ops[] = {
		{ .index = MSR_UNKNOWN },
		{ .index = MSR_UNKNOWN, .write = 1, .value = 3 },
		{ .index = MSR_IA32_CR_PAT, .write = 1, .value = PAT_INVALID },
		{ .index = MSR_X2APIC_ID },
		{ .index = MSR_IA32_CR_PAT },
	};
	struct msr_res res[ARRAY_SIZE(ops)];

	ASSERT_EQ(0, set_user_msr(self->c.vm, INVAL | UNKNOWN));
	self->c.answer_data = 0x77;
	ASSERT_EQ(0, msr_run_ops(&self->c, ops, ARRAY_SIZE(ops), res));
	ASSERT_EQ(4, self->c.nexits);
	EXPECT_EQ(UNKNOWN, self->c.exits[0].reason);
	EXPECT_EQ(KVM_EXIT_X86_RDMSR, self->c.exits[0].exit_reason);
	EXPECT_EQ(UNKNOWN, self->c.exits[1].reason);
	EXPECT_EQ(KVM_EXIT_X86_WRMSR, self->c.exits[1].exit_reason);
	EXPECT_EQ(INVAL, self->c.exits[2].reason);
	EXPECT_EQ(MSR_IA32_CR_PAT, self->c.exits[2].index);
	EXPECT_EQ(INVAL, self->c.exits[3].reason);
	EXPECT_EQ(MSR_X2APIC_ID, self->c.exits[3].index);
	EXPECT_EQ(0x77, res[0].value);
	EXPECT_EQ(0x77, res[3].value);
	EXPECT_EQ(PAT_DEFAULT, res[4].value);
	EXPECT_EQ(0, guest_gp_count(&self->c));
}

TEST_F(umsr, enable_after_vcpu_run_and_disable)
{
	struct kvm_vcpu *v0 = self->c.vcpu, *v1;
	uint64_t val;

	/* The vCPU exists and has run; stock accepts the capability at any time. */
	EXPECT_EQ(GP_VECTOR, msr_rd(&self->c, MSR_UNKNOWN, &val));
	ASSERT_EQ(0, set_user_msr(self->c.vm, UNKNOWN));
	self->c.answer_data = 5;
	EXPECT_EQ(0, msr_rd(&self->c, MSR_UNKNOWN, &val));
	EXPECT_EQ(5, val);
	EXPECT_EQ(1, self->c.nexits);
	ASSERT_EQ(0, set_user_msr(self->c.vm, 0));
	EXPECT_EQ(GP_VECTOR, msr_rd(&self->c, MSR_UNKNOWN, &val));
	EXPECT_EQ(0, self->c.nexits);
	/* A second vCPU created after the capability sees it too. */
	ASSERT_EQ(0, set_user_msr(self->c.vm, UNKNOWN));
	v1 = vm_vcpu_add(self->c.vm, 1, guest_code);
	vcpu_init_descriptor_tables(v1);
	self->c.vcpu = v1;
	self->c.answer_data = 6;
	EXPECT_EQ(0, msr_rd(&self->c, MSR_UNKNOWN, &val));
	EXPECT_EQ(6, val);
	EXPECT_EQ(1, self->c.nexits);
	self->c.vcpu = v0;
}

struct cap_thread {
	struct kvm_vm *vm;
	uint64_t mask;
	int ret;
	volatile bool stop;
	unsigned long toggles;
};

static void *enable_thread(void *arg)
{
	struct cap_thread *t = arg;

	t->ret = set_user_msr(t->vm, t->mask);
	return NULL;
}

TEST_F(umsr, enable_from_second_thread)
{
	struct cap_thread t = { .vm = self->c.vm, .mask = UNKNOWN };
	pthread_t th;
	uint64_t val;

	EXPECT_EQ(GP_VECTOR, msr_rd(&self->c, MSR_UNKNOWN, &val));
	ASSERT_EQ(0, pthread_create(&th, NULL, enable_thread, &t));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(0, t.ret);
	self->c.answer_data = 9;
	EXPECT_EQ(0, msr_rd(&self->c, MSR_UNKNOWN, &val));
	EXPECT_EQ(9, val);

	t.mask = 1ull << 5;
	ASSERT_EQ(0, pthread_create(&th, NULL, enable_thread, &t));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(-EINVAL, t.ret);
}

static void *toggle_thread(void *arg)
{
	struct cap_thread *t = arg;

	while (!t->stop) {
		if (set_user_msr(t->vm, (t->toggles & 1) ? UNKNOWN : 0))
			t->ret = -1;
		t->toggles++;
		usleep(200);
	}
	return NULL;
}

/*
 * Every access either exits (and reads the answer) or faults; nothing else, no splat.  Both
 * happen: the capability enabled and disabled while the vCPU runs decides its next accesses.
 */
TEST_F_TIMEOUT(umsr, toggle_while_vcpu_runs, 240)
{
	struct cap_thread t = { .vm = self->c.vm };
	struct msr_op ops[8];
	struct msr_res res[8];
	unsigned long accesses = 0, gp;
	pthread_t th;
	unsigned int i, round;

	for (i = 0; i < ARRAY_SIZE(ops); i++)
		ops[i] = (struct msr_op){ .index = MSR_UNKNOWN + i, .write = i & 1,
					  .value = i };
	g_loops = 50;
	self->c.answer_data = 0x42;
	ASSERT_EQ(0, pthread_create(&th, NULL, toggle_thread, &t));
	for (round = 0; round < 10; round++) {
		ASSERT_EQ(0, msr_run_ops(&self->c, ops, ARRAY_SIZE(ops), res));
		accesses += g_loops * ARRAY_SIZE(ops);
		for (i = 0; i < ARRAY_SIZE(ops); i++) {
			if (res[i].vector) {
				EXPECT_EQ(GP_VECTOR, res[i].vector);
			} else if (!(i & 1)) {
				EXPECT_EQ(0x42, res[i].value);
			}
		}
	}
	t.stop = true;
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(0, t.ret);
	gp = guest_gp_count(&self->c);
	TH_LOG("%lu accesses: %lu exits, %lu #GP, %lu toggles", accesses,
	       self->c.total_exits, gp, t.toggles);
	EXPECT_EQ(accesses, self->c.total_exits + gp);
	EXPECT_LT(0, self->c.total_exits) TH_LOG("enabling never made an access exit");
	EXPECT_LT(0, gp) TH_LOG("disabling never made an access fault");
}

/* The instruction emulator's path (KVM_FEP): the same outcomes. */
TEST_F(umsr, emulated_access)
{
	uint64_t val;

	if (!fep_enabled())
		SKIP(return, "kvm.force_emulation_prefix is not set");
	EXPECT_EQ(GP_VECTOR, msr_access(&self->c, false, MSR_UNKNOWN, 0, true, &val));
	EXPECT_EQ(GP_VECTOR, msr_access(&self->c, true, MSR_UNKNOWN, 1, true, NULL));
	EXPECT_EQ(0, self->c.total_exits);

	ASSERT_EQ(0, set_user_msr(self->c.vm, UNKNOWN | INVAL));
	self->c.answer_data = 0x8877665544332211ull;
	EXPECT_EQ(0, msr_access(&self->c, false, MSR_UNKNOWN, 0, true, &val));
	EXPECT_EQ(0x8877665544332211ull, val);
	ASSERT_EQ(1, self->c.nexits);
	EXPECT_EQ(KVM_EXIT_X86_RDMSR, self->c.exits[0].exit_reason);
	EXPECT_EQ(UNKNOWN, self->c.exits[0].reason);
	EXPECT_EQ(MSR_UNKNOWN, self->c.exits[0].index);

	EXPECT_EQ(0, msr_access(&self->c, true, MSR_UNKNOWN, 0x123456789ull, true, NULL));
	ASSERT_EQ(1, self->c.nexits);
	EXPECT_EQ(KVM_EXIT_X86_WRMSR, self->c.exits[0].exit_reason);
	EXPECT_EQ(0x123456789ull, self->c.exits[0].data);

	EXPECT_EQ(0, msr_access(&self->c, true, MSR_IA32_CR_PAT, PAT_INVALID, true, NULL));
	ASSERT_EQ(1, self->c.nexits);
	EXPECT_EQ(INVAL, self->c.exits[0].reason);

	self->c.answer_error = 1;
	EXPECT_EQ(GP_VECTOR, msr_access(&self->c, false, MSR_UNKNOWN, 0, true, &val));
	EXPECT_EQ(1, self->c.nexits);
	EXPECT_EQ(GP_VECTOR, msr_access(&self->c, true, MSR_UNKNOWN, 2, true, NULL));
	EXPECT_EQ(1, self->c.nexits);
	EXPECT_EQ(4, guest_gp_count(&self->c));
}

/* Host-side KVM_GET_MSRS/KVM_SET_MSRS never exit to user space. */
TEST_F(umsr, host_msr_ioctls_unaffected)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e;
	} m = { .hdr.nmsrs = 1, .e.index = MSR_UNKNOWN };

	ASSERT_EQ(0, set_user_msr(self->c.vm, INVAL | UNKNOWN | FILTER));
	EXPECT_EQ(0, __vcpu_ioctl(self->c.vcpu, KVM_GET_MSRS, &m.hdr));
	EXPECT_EQ(0, __vcpu_ioctl(self->c.vcpu, KVM_SET_MSRS, &m.hdr));
	EXPECT_EQ(0, _vcpu_set_msr(self->c.vcpu, MSR_IA32_CR_PAT, PAT_INVALID));
	EXPECT_EQ(0, self->c.total_exits);
}

TEST_HARNESS_MAIN

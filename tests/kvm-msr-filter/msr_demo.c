// SPDX-License-Identifier: GPL-2.0
/*
 * MSR exits to user space (KVM_CAP_X86_USER_SPACE_MSR) and the MSR filter
 * (KVM_X86_SET_MSR_FILTER) at work, for make demo's tour: a KVM guest reads an MSR that KVM
 * does not know and user space answers it; a filter then denies reads of an MSR that KVM
 * handles itself, and user space answers those too; without the FILTER exit, and under a
 * default-deny filter, the guest gets #GP.  Each line says what happened (the exits user
 * space saw, its answer, what the guest read or the exception it took) and is checked against
 * stock 6.1's behaviour: anything else prints "UNEXPECTED: ..." and exits 1.
 */
#include <stdlib.h>
#include "../kvm_msr_util.h"

#define UNKNOWN	KVM_MSR_EXIT_REASON_UNKNOWN
#define FILTER	KVM_MSR_EXIT_REASON_FILTER

#define ANSWER		0x1234ull
#define RUN_FAILED	"KVM_RUN failed, or the vCPU stopped for something else than an MSR exit"
#define SYSENTER_CS	0x10ull

/* What an access should come to: an exit (its reason) or none, a fault, the value read. */
struct want {
	u32 reason;	/* 0: no exit */
	int vector;		/* 0 or GP_VECTOR */
	u64 value;		/* RDMSR without fault: what the guest reads */
};

static u8 bm_deny[8];
static u8 bm_allow[8] = { 0xff };

static const char *reason_name(u32 reason)
{
	switch (reason) {
	case KVM_MSR_EXIT_REASON_INVAL:
		return "INVAL";
	case KVM_MSR_EXIT_REASON_UNKNOWN:
		return "UNKNOWN";
	case KVM_MSR_EXIT_REASON_FILTER:
		return "FILTER";
	}
	return "(unknown reason)";
}

static const char *exit_name(u32 exit_reason)
{
	switch (exit_reason) {
	case KVM_EXIT_X86_RDMSR:
		return "KVM_EXIT_X86_RDMSR";
	case KVM_EXIT_X86_WRMSR:
		return "KVM_EXIT_X86_WRMSR";
	}
	return "(not an MSR exit)";
}

/* " -> guest reads 0x..." or " -> guest takes #GP" */
static int guest_end(char *s, size_t n, bool write, int vector, u64 value)
{
	if (vector == GP_VECTOR)
		return snprintf(s, n, " -> guest takes #GP");
	if (vector)
		return snprintf(s, n, " -> guest takes exception %d", vector);
	if (write)
		return snprintf(s, n, " -> guest goes on, no fault");
	return snprintf(s, n, " -> guest reads 0x%llx", (unsigned long long)value);
}

static void __noreturn unexpected(const char *what)
{
	printf("UNEXPECTED: %s\n", what);
	exit(1);
}

/*
 * The guest does one RDMSR (or WRMSR of @value) of @index; user space answers an exit with
 * @error (and @data for a read).  Prints what happened, on one line, then checks it.
 */
static void guest_access(struct msr_ctx *c, bool write, u32 index, const char *name,
			 u64 value, u8 error, u64 data, struct want want)
{
	const struct msr_exit *e = &c->exits[0];
	char line[512], wanted[256];
	u64 val = 0;
	size_t n = 0;
	bool ok;
	int vec;

	c->answer_error = error;
	c->answer_data = data;
	vec = msr_access(c, write, index, value, false, &val);
	if (vec < 0)
		unexpected(RUN_FAILED);

	if (write)
		n += snprintf(line + n, sizeof(line) - n, "guest wrmsr 0x%x%s <- 0x%llx: ", index,
			      name, (unsigned long long)value);
	else
		n += snprintf(line + n, sizeof(line) - n, "guest rdmsr 0x%x%s: ", index, name);
	if (!c->nexits) {
		n += snprintf(line + n, sizeof(line) - n, "no exit");
	} else {
		n += snprintf(line + n, sizeof(line) - n, "%sexit %s reason %s",
			      c->nexits > 1 ? "first " : "", exit_name(e->exit_reason),
			      reason_name(e->reason));
		if (e->index != index)
			n += snprintf(line + n, sizeof(line) - n, " for MSR 0x%x", e->index);
		if (e->exit_reason == KVM_EXIT_X86_WRMSR)
			n += snprintf(line + n, sizeof(line) - n, " data 0x%llx",
				      (unsigned long long)e->data);
		if (error)
			n += snprintf(line + n, sizeof(line) - n, ", user space answers error %u",
				      error);
		else if (write)
			n += snprintf(line + n, sizeof(line) - n, ", user space accepts it");
		else
			n += snprintf(line + n, sizeof(line) - n, ", user space answers 0x%llx",
				      (unsigned long long)data);
	}
	guest_end(line + n, sizeof(line) - n, write, vec, val);
	printf("%s\n", line);

	ok = c->nexits == !!want.reason && vec == want.vector;
	if (ok && want.reason)
		ok = e->reason == want.reason && e->index == index &&
		     e->exit_reason == (write ? KVM_EXIT_X86_WRMSR : KVM_EXIT_X86_RDMSR) &&
		     (!write || e->data == value);
	if (ok && !write && !vec)
		ok = val == want.value;
	if (ok)
		return;
	n = 0;
	if (want.reason)
		n += snprintf(wanted, sizeof(wanted), "expected one exit %s reason %s",
			      exit_name(write ? KVM_EXIT_X86_WRMSR : KVM_EXIT_X86_RDMSR),
			      reason_name(want.reason));
	else
		n += snprintf(wanted, sizeof(wanted), "expected no exit");
	guest_end(wanted + n, sizeof(wanted) - n, write, want.vector, want.value);
	unexpected(wanted);
}

/* A read, exits answered with ANSWER. */
static void rd(struct msr_ctx *c, u32 index, const char *name, struct want want)
{
	guest_access(c, false, index, name, 0, 0, ANSWER, want);
}

/* KVM_ENABLE_CAP(KVM_CAP_X86_USER_SPACE_MSR, @mask), said as @what. */
static void user_msr(struct msr_ctx *c, u64 mask, const char *what)
{
	int r = set_user_msr(c->vm, mask);

	printf("user space %s (KVM_CAP_X86_USER_SPACE_MSR, mask %s%s%s)\n", what,
	       mask & UNKNOWN ? "UNKNOWN" : "", mask == (UNKNOWN | FILTER) ? "|" : "",
	       mask & FILTER ? "FILTER" : "");
	if (r) {
		printf("UNEXPECTED: KVM_ENABLE_CAP(KVM_CAP_X86_USER_SPACE_MSR, 0x%llx): %s\n",
		       (unsigned long long)mask, strerror(-r));
		exit(1);
	}
}

/* KVM_X86_SET_MSR_FILTER with @f: a default and one range of reads. */
static void read_filter(struct msr_ctx *c, struct kvm_msr_filter *f, const char *name)
{
	const struct kvm_msr_filter_range *r = &f->ranges[0];
	bool deny = f->flags & KVM_MSR_FILTER_DEFAULT_DENY;
	int err = set_filter(c->vm, f);

	printf("filter installed (KVM_X86_SET_MSR_FILTER): default %s, reads of 0x%x%s %s\n",
	       deny ? "deny" : "allow", r->base, name, r->bitmap[0] & 1 ? "allowed" : "denied");
	if (err) {
		printf("UNEXPECTED: KVM_X86_SET_MSR_FILTER: %s\n", strerror(-err));
		exit(1);
	}
}

/* KVM_CHECK_EXTENSION(@cap) must be non-zero. */
static void need_cap(long cap, const char *name, const char *what)
{
	if (!kvm_check_cap(cap)) {
		printf("UNEXPECTED: KVM_CHECK_EXTENSION(%s) = 0: this kernel has no %s\n", name,
		       what);
		exit(1);
	}
}

static void one_range(struct kvm_msr_filter *f, u32 index, u8 *bitmap)
{
	f->ranges[0] = (struct kvm_msr_filter_range){
		.flags = KVM_MSR_FILTER_READ, .base = index, .nmsrs = 1, .bitmap = bitmap,
	};
}

int main(void)
{
	struct kvm_msr_filter deny_cs = { .flags = KVM_MSR_FILTER_DEFAULT_ALLOW };
	struct kvm_msr_filter only_pat = { .flags = KVM_MSR_FILTER_DEFAULT_DENY };
	const char *cs = " (MSR_IA32_SYSENTER_CS)", *pat_name = " (MSR_IA32_CR_PAT)";
	const char *unk = " (unknown to KVM)";
	struct msr_op ops[2] = {
		{ .index = MSR_IA32_SYSENTER_CS, .write = 1, .value = SYSENTER_CS },
		{ .index = MSR_IA32_SYSENTER_CS },
	};
	struct msr_res res[2];
	struct msr_ctx c;
	u64 pat, kvm_cs;

	setvbuf(stdout, NULL, _IOLBF, 0);
	msr_ctx_init(&c);
	printf("a KVM guest (one vCPU) runs RDMSR and WRMSR; its #GP handler notes faults\n");

	/* An MSR that KVM does not know: #GP, unless user space asked for the exit. */
	rd(&c, MSR_UNKNOWN, unk, (struct want){ .vector = GP_VECTOR });
	need_cap(KVM_CAP_X86_USER_SPACE_MSR, "KVM_CAP_X86_USER_SPACE_MSR",
		 "MSR exits to user space");
	user_msr(&c, UNKNOWN | FILTER, "asks for MSR exits");
	rd(&c, MSR_UNKNOWN, unk, (struct want){ .reason = UNKNOWN, .value = ANSWER });
	guest_access(&c, true, MSR_UNKNOWN, unk, 0x5678, 1, 0,
		     (struct want){ .reason = UNKNOWN, .vector = GP_VECTOR });

	/* SYSENTER_CS is KVM's own: the guest writes it and reads it back without exits. */
	if (msr_run_ops(&c, ops, 2, res))
		unexpected(RUN_FAILED);
	printf("guest wrmsr 0x%x%s <- 0x%llx, rdmsr 0x%x: ", MSR_IA32_SYSENTER_CS, cs,
	       SYSENTER_CS, MSR_IA32_SYSENTER_CS);
	if (c.nexits)
		printf("%u exits", c.nexits);
	else
		printf("no exit, KVM handles both");
	if (res[0].vector || res[1].vector)
		printf(" -> guest takes exceptions %llu and %llu\n",
		       (unsigned long long)res[0].vector, (unsigned long long)res[1].vector);
	else
		printf(" -> guest reads 0x%llx\n", (unsigned long long)res[1].value);
	if (c.nexits || res[0].vector || res[1].vector || res[1].value != SYSENTER_CS)
		unexpected("expected no exit and no fault, the guest reading back what it wrote");

	/* A filter denies its reads: they exit to user space, which answers. */
	need_cap(KVM_CAP_X86_MSR_FILTER, "KVM_CAP_X86_MSR_FILTER", "MSR filter");
	one_range(&deny_cs, MSR_IA32_SYSENTER_CS, bm_deny);
	read_filter(&c, &deny_cs, "");
	rd(&c, MSR_IA32_SYSENTER_CS, cs, (struct want){ .reason = FILTER, .value = ANSWER });
	kvm_cs = vcpu_get_msr(c.vcpu, MSR_IA32_SYSENTER_CS);
	printf("  (KVM_GET_MSRS, which no filter applies to: KVM's own 0x%x is still 0x%llx)\n",
	       MSR_IA32_SYSENTER_CS, (unsigned long long)kvm_cs);
	if (kvm_cs != SYSENTER_CS)
		unexpected("expected KVM's value to be the one the guest wrote");

	/* Denied without the FILTER exit: #GP. */
	user_msr(&c, UNKNOWN, "turns the FILTER exit off");
	rd(&c, MSR_IA32_SYSENTER_CS, cs, (struct want){ .vector = GP_VECTOR });

	/* Default deny: what no range allows faults, even where an UNKNOWN exit would be. */
	pat = vcpu_get_msr(c.vcpu, MSR_IA32_CR_PAT);
	one_range(&only_pat, MSR_IA32_CR_PAT, bm_allow);
	read_filter(&c, &only_pat, pat_name);
	rd(&c, MSR_IA32_CR_PAT, pat_name, (struct want){ .value = pat });
	rd(&c, MSR_UNKNOWN, " (unknown to KVM, in no range)", (struct want){ .vector = GP_VECTOR });
	msr_ctx_free(&c);
	return 0;
}

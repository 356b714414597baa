// SPDX-License-Identifier: GPL-2.0
/*
 * KVM_CAP_X86_USER_SPACE_MSR and KVM_X86_SET_MSR_FILTER under seeded random input, compared
 * with stock by scripts/matrix.py.  Each case makes a VM with one vCPU (x2APIC mode or not),
 * enables the capability with a random mask (sometimes with unknown bits or flags), sets a
 * random filter (default flags, up to 16 ranges of random flags, bases, sizes and bitmaps,
 * bitmap pointers NULL, unmapped, ending a mapping or kernel addresses), runs a batch of
 * RDMSR/WRMSR on random indices (known MSRs, MSRs SVM passes through, x2APIC MSRs, unknown
 * and random ones; directly or behind the forced emulation prefix) while user space answers
 * each exit with a random error and data, then replaces filter and mask and runs a second
 * batch.  One "# obs" line per case: the errnos, and per access its index, the guest's #GP or
 * the value read, and the exits (type, reason, index, data).  MSRs whose values depend on
 * time (TSC, APERF/MPERF, kvmclock, the APIC timer's count) are never accessed.
 *
 * Environment: KTEST_SEED (random if unset, always printed), KTEST_FUZZ_CASES,
 * KTEST_FUZZ_SECONDS (time bound).
 */
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include "../kvm_msr_util.h"
#include "apic.h"
#include "../fuzz_rng.h"
#include "kselftest.h"

#define NOPS		24
#define MAX_ANSWERS	(2 * MAX_EXITS)

/* MSRs the guest may read and write: their values are the guest's and deterministic. */
static const uint32_t rw_msrs[] = {
	MSR_IA32_CR_PAT, 0x2ff /* MTRRdefType */, MSR_IA32_SYSENTER_CS,
	MSR_IA32_SYSENTER_ESP, MSR_IA32_SYSENTER_EIP, MSR_STAR, MSR_SYSCALL_MASK,
	MSR_TSC_AUX, 0x17a /* MCG_STATUS */,
	MSR_X2APIC_TPR, MSR_X2APIC_ID, MSR_X2APIC_LVR, 0x828 /* ESR */, 0x8ff,
};

/* Address MSRs: written only with canonical values (the guest runs on them unfiltered). */
static const uint32_t addr_msrs[] = {
	MSR_FS_BASE, MSR_GS_BASE, MSR_KERNEL_GS_BASE, MSR_LSTAR, MSR_CSTAR,
};

/* MSRs only read (writing them would break the guest). */
static const uint32_t ro_msrs[] = {
	MSR_EFER, MSR_IA32_APICBASE, 0x179 /* MCG_CAP */, 0x8b /* UCODE_REV */,
	0x80a /* PPR */, 0x80d /* LDR */, 0x80f /* SPIV */, 0x800, 0x801,
};

/* Nothing in KVM. */
static const uint32_t unknown_msrs[] = {
	MSR_UNKNOWN, MSR_UNKNOWN2, 0x474f4f00, 0, 0xffffffff, 0xc0011fff, 0x7ff, 0x900,
	0x40000200, 0xfffffff0,
};

static const uint64_t values[] = {
	0, 1, 0x10, 0x23, 0x0007040600070406ull, 0x0606060606060606ull,
	0x0808080808080808ull, 0xffffffffull, 0x100000000ull, 0x8000000000000000ull,
	~0ull, 0x12345678,
};

static const uint64_t addrs[] = {
	0, 0x1000, 0x7ffffffff000ull, 0xffff800000000000ull, 0xffffffffffff0000ull,
};

static bool fep;
static struct kvm_vm *cur_vm;
static long page;
static uint8_t *bitmaps;	/* 16 random bitmaps of KVM_MSR_FILTER_MAX_BITMAP_SIZE bytes */
static uint8_t *edge;		/* a page followed by a PROT_NONE page */
static void *unmapped;

/* User space's answers, exit by exit. */
static struct {
	uint8_t error;
	uint64_t data;
} answers[MAX_ANSWERS];
static unsigned int nanswer;

static void fuzz_answer(struct msr_ctx *c, struct kvm_run *run)
{
	unsigned int k = nanswer++ % MAX_ANSWERS;

	run->msr.error = answers[k].error;
	if (run->exit_reason == KVM_EXIT_X86_RDMSR)
		run->msr.data = answers[k].data;
}

static uint32_t any_msr(void)
{
	switch (pick(6)) {
	case 0:
		return rw_msrs[pick(ARRAY_SIZE(rw_msrs))];
	case 1:
		return addr_msrs[pick(ARRAY_SIZE(addr_msrs))];
	case 2:
		return ro_msrs[pick(ARRAY_SIZE(ro_msrs))];
	case 3:
		return unknown_msrs[pick(ARRAY_SIZE(unknown_msrs))];
	case 4:
		return (uint32_t)next();
	default:
		return 0xdead0000 + pick(64);
	}
}

static void random_op(struct msr_op *op)
{
	unsigned int kind = pick(12);

	memset(op, 0, sizeof(*op));
	op->fep = fep && !pick(4);
	if (kind < 3) {
		op->index = rw_msrs[pick(ARRAY_SIZE(rw_msrs))];
		op->write = pick(2);
		op->value = pick(4) ? values[pick(ARRAY_SIZE(values))] : next();
	} else if (kind < 5) {
		op->index = addr_msrs[pick(ARRAY_SIZE(addr_msrs))];
		op->write = pick(2);
		op->value = addrs[pick(ARRAY_SIZE(addrs))];
	} else if (kind < 6) {
		op->index = ro_msrs[pick(ARRAY_SIZE(ro_msrs))];
	} else if (kind < 10) {
		op->index = pick(3) ? unknown_msrs[pick(ARRAY_SIZE(unknown_msrs))] :
				      0xdead0000 + pick(64);
		op->write = pick(2);
		op->value = next();
	} else {
		/* Random indices: reads only (a random index may be a real MSR). */
		op->index = (uint32_t)next();
		if (op->index == 0x10 || (op->index >= 0x800 && op->index <= 0x8ff) ||
		    (op->index >= 0x4b564d00 && op->index <= 0x4b564dff) ||
		    (op->index >= 0x11 && op->index <= 0x12) ||
		    (op->index >= 0xe7 && op->index <= 0xe8) || op->index == 0x6e0 ||
		    (op->index >= 0xc00000e7 && op->index <= 0xc00000e8) ||
		    op->index == 0x3b || op->index == 0xc0010007)
			op->index = MSR_UNKNOWN;
	}
}

static uint8_t *random_bitmap_ptr(char *desc, size_t len)
{
	switch (pick(16)) {
	case 0:
		snprintf(desc, len, "null");
		return NULL;
	case 1:
		snprintf(desc, len, "unmapped");
		return unmapped;
	case 2:
		snprintf(desc, len, "kernel");
		return (uint8_t *)0xffff888000000000ull;
	case 3:
	case 4: {
		unsigned int back = 1u << pick(12);

		snprintf(desc, len, "edge-%u", back);
		return edge + page - back;
	}
	default: {
		unsigned int i = pick(16);

		snprintf(desc, len, "bm%u", i);
		return bitmaps + i * KVM_MSR_FILTER_MAX_BITMAP_SIZE;
	}
	}
}

/*
 * A random filter: three in five are well-formed (and accepted), the others have one range
 * (or the default flags) corrupted: bad flags, a size beyond the bitmap limit, a bad pointer.
 */
static int random_filter(char *out, size_t len)
{
	struct kvm_msr_filter f = { 0 };
	unsigned int n = pick(4) ? 1 + pick(4) : pick(KVM_MSR_FILTER_MAX_RANGES + 1), i;
	bool valid = pick(5) < 3;
	int bad = valid ? -2 : (int)pick(n + 1) - 1;	/* -1: the default flags */
	size_t o = 0;
	char desc[32];
	int r;

	f.flags = bad != -1 ? pick(2) : (uint32_t)next() & (pick(2) ? 0xf : ~0u);
	o += snprintf(out + o, len - o, "filter(%#x", f.flags);
	for (i = 0; i < n; i++) {
		struct kvm_msr_filter_range *rg = &f.ranges[i];
		unsigned int s = pick(10);

		rg->flags = 1 + pick(3);
		rg->base = pick(8) ? any_msr() - pick(8) : (uint32_t)next();
		if (s < 1)
			rg->nmsrs = 0;
		else if (s < 8)
			rg->nmsrs = 1 + pick(64);
		else
			rg->nmsrs = 1 + pick(KVM_MSR_FILTER_MAX_BITMAP_SIZE * 8);
		if (pick(6)) {
			unsigned int b = pick(16);

			snprintf(desc, sizeof(desc), "bm%u", b);
			rg->bitmap = bitmaps + b * KVM_MSR_FILTER_MAX_BITMAP_SIZE;
		} else {
			/* Ending exactly where the mapping ends. */
			unsigned int need = (rg->nmsrs + 63) / 64 * 8;

			snprintf(desc, sizeof(desc), "edge-%u", need);
			rg->bitmap = edge + page - need;
			if (need > page)
				rg->bitmap = bitmaps;
		}
		if ((int)i == bad) {
			switch (pick(3)) {
			case 0:
				rg->flags = pick(2) ? 0 : (uint32_t)next();
				break;
			case 1:
				rg->nmsrs = pick(2) ? KVM_MSR_FILTER_MAX_BITMAP_SIZE * 8 + 1 + pick(64) :
						      (uint32_t)next();
				break;
			default:
				rg->bitmap = random_bitmap_ptr(desc, sizeof(desc));
				break;
			}
		}
		o += snprintf(out + o, len - o, " %#x:%#x+%#x:%s", rg->flags, rg->base,
			      rg->nmsrs, desc);
	}
	r = set_filter(cur_vm, &f);
	o += snprintf(out + o, len - o, ")=%d", r);
	return r;
}

static int random_cap(char *out, size_t len)
{
	struct kvm_enable_cap cap = { .cap = KVM_CAP_X86_USER_SPACE_MSR };
	int r;

	cap.args[0] = pick(8);
	if (!pick(8))
		cap.args[0] |= 1ull << pick(64);
	if (!pick(16))
		cap.flags = 1 + pick(4);
	r = ioctl(cur_vm->fd, KVM_ENABLE_CAP, &cap) ? -errno : 0;
	snprintf(out, len, "cap(%#llx,%u)=%d", (unsigned long long)cap.args[0], cap.flags, r);
	return r;
}

/* One batch of accesses: the result of each, and the exits in between. */
static void run_batch(struct msr_ctx *c, const struct msr_op *ops, unsigned int n,
		      char *out, size_t len)
{
	struct msr_res res[NOPS];
	size_t o = 0;
	unsigned int i;

	if (msr_run_ops(c, ops, n, res)) {
		snprintf(out, len, "run-failed(%d,%u)", errno, c->vcpu->run->exit_reason);
		return;
	}
	for (i = 0; i < n; i++) {
		o += snprintf(out + o, len - o, " %c%s%x", ops[i].write ? 'w' : 'r',
			      ops[i].fep ? "e" : "", ops[i].index);
		if (ops[i].write)
			o += snprintf(out + o, len - o, "<%llx",
				      (unsigned long long)ops[i].value);
		if (res[i].vector)
			o += snprintf(out + o, len - o, ":v%llu",
				      (unsigned long long)res[i].vector);
		else if (!ops[i].write)
			o += snprintf(out + o, len - o, ":%llx",
				      (unsigned long long)res[i].value);
	}
	o += snprintf(out + o, len - o, " exits %u", c->nexits);
	for (i = 0; i < c->nexits && i < MAX_EXITS; i++)
		o += snprintf(out + o, len - o, " %c%u:%x:%llx%s",
			      c->exits[i].exit_reason == KVM_EXIT_X86_RDMSR ? 'R' : 'W',
			      c->exits[i].reason, c->exits[i].index,
			      (unsigned long long)c->exits[i].data,
			      c->exits[i].error || c->exits[i].pad_nonzero ? "!" : "");
}

static char line[3][8192];

static void one_case(unsigned long cn)
{
	struct msr_op ops[2][NOPS];
	unsigned int nops[2], b, i;
	struct msr_ctx c;
	char capd[2][64];
	bool x2apic;

	/* Everything random is drawn before the VM runs. */
	x2apic = pick(2);
	for (i = 0; i < MAX_ANSWERS; i++) {
		answers[i].error = pick(4) ? 0 : (pick(2) ? 1 : (uint8_t)next());
		answers[i].data = pick(2) ? values[pick(ARRAY_SIZE(values))] : next();
	}
	nanswer = 0;
	for (b = 0; b < 2; b++) {
		nops[b] = 1 + pick(NOPS);
		for (i = 0; i < nops[b]; i++)
			random_op(&ops[b][i]);
	}
	for (i = 0; i < 16 * KVM_MSR_FILTER_MAX_BITMAP_SIZE; i += 8) {
		uint64_t v = next();

		/* Mostly dense or sparse bitmaps, so that both verdicts are common. */
		if (i % 64 == 0 && pick(3))
			v = pick(2) ? ~0ull : 0;
		memcpy(bitmaps + i, &v, 8);
	}

	msr_ctx_init(&c);
	cur_vm = c.vm;
	c.answer = fuzz_answer;
	if (x2apic)
		vcpu_set_msr(c.vcpu, MSR_IA32_APICBASE,
			     vcpu_get_msr(c.vcpu, MSR_IA32_APICBASE) | X2APIC_ENABLE);

	random_cap(capd[0], sizeof(capd[0]));
	random_filter(line[0], sizeof(line[0]));
	run_batch(&c, ops[0], nops[0], line[1], sizeof(line[1]));
	printf("# obs c%lu.0 x2apic=%d %s %s |%s\n", cn, x2apic, capd[0], line[0], line[1]);

	if (pick(2))
		random_cap(capd[1], sizeof(capd[1]));
	else
		snprintf(capd[1], sizeof(capd[1]), "cap-kept");
	if (pick(4))
		random_filter(line[0], sizeof(line[0]));
	else
		snprintf(line[0], sizeof(line[0]), "filter-kept");
	run_batch(&c, ops[1], nops[1], line[2], sizeof(line[2]));
	printf("# obs c%lu.1 %s %s |%s\n", cn, capd[1], line[0], line[2]);
	msr_ctx_free(&c);
}

int main(void)
{
	const struct fuzz_env env = fuzz_env();
	const unsigned long cases = env.cases, limit = env.limit;
	const uint64_t seed = env.seed;
	unsigned long c, done = 0;
	time_t start = time(NULL);
	int status;
	pid_t pid;

	ksft_print_header();
	ksft_set_plan(2);
	ksft_print_msg("seed %llu, %lu cases (KTEST_SEED=%llu replays them)\n",
		       (unsigned long long)seed, cases, (unsigned long long)seed);
	page = sysconf(_SC_PAGESIZE);
	fep = fep_enabled();
	bitmaps = malloc(16 * KVM_MSR_FILTER_MAX_BITMAP_SIZE);
	edge = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unmapped = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!bitmaps || edge == MAP_FAILED || unmapped == MAP_FAILED ||
	    mprotect(edge + page, page, PROT_NONE) || munmap(unmapped, page))
		ksft_exit_fail_msg("buffers: %s\n", strerror(errno));
	memset(edge, 0xff, page);
	ksft_test_result(kvm_check_cap(KVM_CAP_X86_USER_SPACE_MSR) == 1 &&
			 kvm_check_cap(KVM_CAP_X86_MSR_FILTER) == 1,
			 "KVM_CAP_X86_USER_SPACE_MSR and KVM_CAP_X86_MSR_FILTER (fep %d)\n", fep);
	for (c = 0; c < cases; c++) {
		if ((unsigned long)(time(NULL) - start) > limit)
			break;
		fuzz_seed_case(seed, c);
		fflush(stdout);
		/*
		 * Each case in a child: 6.1's kvm_vm_elf_load() leaks two descriptors per VM,
		 * and a case the library aborts is an observation, not the end of the run.
		 */
		pid = fork();
		if (pid < 0)
			ksft_exit_fail_msg("fork: %s\n", strerror(errno));
		if (!pid) {
			one_case(c);
			fflush(stdout);
			_exit(0);
		}
		if (waitpid(pid, &status, 0) != pid)
			ksft_exit_fail_msg("waitpid: %s\n", strerror(errno));
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			printf("# obs c%lu.x child ended with status %#x\n", c, status);
		done++;
	}
	ksft_test_result(done > 0, "%lu of %lu cases in %ld s\n", done, cases,
			 (long)(time(NULL) - start));
	ksft_finished();
}

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
 * One case in six creates its vCPU while another thread installs the case's first filter
 * (at a random moment of the creation, -smp 2): the filter must reach that vCPU too.  Those
 * cases' lines say "race"; stock 6.1 sometimes misses the filter there (fixes/0009).
 *
 * Besides the comparison with stock, every access is checked against a model of the
 * documented semantics (Documentation/virt/kvm/api.rst, KVM_X86_SET_MSR_FILTER): the filter
 * last accepted decides (the first range covering the index for the access's direction, its
 * bit; else the default action; x2APIC MSRs 0x800-0x8ff never filtered), and a denied access
 * either exits to user space with reason KVM_MSR_EXIT_REASON_FILTER, when that reason is in
 * the mask last accepted, and completes with user space's answer, or takes a #GP with no
 * exit.  An allowed access never exits for the filter.  The third result counts violations.
 *
 * Environment: KTEST_SEED (random if unset, always printed), KTEST_FUZZ_CASES,
 * KTEST_FUZZ_SECONDS (time bound).
 */
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <pthread.h>
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

/* The model: what the filter and mask last accepted by the kernel say. */
static struct model {
	bool have;
	uint32_t flags;
	unsigned int n;
	struct {
		uint32_t flags, base, nmsrs;
		uint8_t bm[KVM_MSR_FILTER_MAX_BITMAP_SIZE];
	} r[KVM_MSR_FILTER_MAX_RANGES];
	uint64_t mask;
} model;

/* Shared with the parent across the per-case children. */
static struct tally {
	unsigned long accesses, denied, violations, races;
	uint64_t span_ns;	/* the longest vCPU creation seen */
} *tally;

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
 * Draw a random filter into @f, its description into @out: three in five are well-formed
 * (and accepted), the others have one range (or the default flags) corrupted: bad flags, a
 * size beyond the bitmap limit, a bad pointer.  Returns the description's length.
 */
static size_t draw_filter(struct kvm_msr_filter *f, char *out, size_t len)
{
	unsigned int n = pick(4) ? 1 + pick(4) : pick(KVM_MSR_FILTER_MAX_RANGES + 1), i;
	bool valid = pick(5) < 3;
	int bad = valid ? -2 : (int)pick(n + 1) - 1;	/* -1: the default flags */
	size_t o = 0;
	char desc[32];

	memset(f, 0, sizeof(*f));
	f->flags = bad != -1 ? pick(2) : (uint32_t)next() & (pick(2) ? 0xf : ~0u);
	o += snprintf(out + o, len - o, "filter(%#x", f->flags);
	for (i = 0; i < n; i++) {
		struct kvm_msr_filter_range *rg = &f->ranges[i];
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
	return o;
}

/* The kernel accepted @f: it is what decides from now on (ranges of no MSRs are dropped). */
static void model_install(const struct kvm_msr_filter *f)
{
	unsigned int i;

	memset(&model.r, 0, sizeof(model.r));
	model.have = true;
	model.flags = f->flags;
	model.n = 0;
	for (i = 0; i < KVM_MSR_FILTER_MAX_RANGES; i++) {
		const struct kvm_msr_filter_range *rg = &f->ranges[i];

		if (!rg->nmsrs)
			continue;
		model.r[model.n].flags = rg->flags;
		model.r[model.n].base = rg->base;
		model.r[model.n].nmsrs = rg->nmsrs;
		memcpy(model.r[model.n].bm, rg->bitmap, (rg->nmsrs + 63) / 64 * 8);
		model.n++;
	}
}

static bool model_denies(uint32_t index, bool write)
{
	uint32_t type = write ? KVM_MSR_FILTER_WRITE : KVM_MSR_FILTER_READ;
	bool allowed;
	unsigned int i;

	if (!model.have || (index >= 0x800 && index <= 0x8ff))
		return false;
	allowed = !(model.flags & KVM_MSR_FILTER_DEFAULT_DENY);
	for (i = 0; i < model.n; i++) {
		uint32_t off = index - model.r[i].base;

		/* A range that would run past MSR 0xffffffff covers nothing (api.rst). */
		if ((uint64_t)model.r[i].base + model.r[i].nmsrs > UINT32_MAX)
			continue;
		/* Unsigned: an index below base is far beyond nmsrs. */
		if (off < model.r[i].nmsrs && (model.r[i].flags & type)) {
			allowed = model.r[i].bm[off / 8] & (1u << (off % 8));
			break;
		}
	}
	return !allowed;
}

static int set_drawn_filter(struct kvm_msr_filter *f, char *out, size_t len, size_t o)
{
	int r = set_filter(cur_vm, f);

	if (!r)
		model_install(f);
	snprintf(out + o, len - o, ")=%d", r);
	return r;
}

static int random_filter(char *out, size_t len)
{
	struct kvm_msr_filter f;

	return set_drawn_filter(&f, out, len, draw_filter(&f, out, len));
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
	if (!r)
		model.mask = cap.args[0];
	snprintf(out, len, "cap(%#llx,%u)=%d", (unsigned long long)cap.args[0], cap.flags, r);
	return r;
}

/* One batch of accesses: the result of each, and the exits in between. */
static bool run_batch(struct msr_ctx *c, const struct msr_op *ops, unsigned int n,
		      struct msr_res *res, char *out, size_t len)
{
	size_t o = 0;
	unsigned int i;

	if (msr_run_ops(c, ops, n, res)) {
		snprintf(out, len, "run-failed(%d,%u)", errno, c->vcpu->run->exit_reason);
		return false;
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
	return true;
}

/*
 * The model's verdict on each access of a batch that ran, against what happened.  Exits come
 * in the order of the accesses, at most one each: an exit belongs to the first access not yet
 * matched with its index and direction (an earlier access with the same index and direction
 * that did not exit has the same verdict, so the matching cannot blame the wrong one).
 * @first is the number of answers given before the batch.
 */
static void check_batch(struct msr_ctx *c, const struct msr_op *ops, unsigned int n,
			const struct msr_res *res, unsigned int first, const char *where)
{
	unsigned int i, e = 0;

	for (i = 0; i < n; i++) {
		const struct msr_op *op = &ops[i];
		const struct msr_exit *ex = NULL;
		bool denied = model_denies(op->index, op->write);
		const char *bad = NULL;
		unsigned int k = 0;

		if (e < c->nexits && e < MAX_EXITS && c->exits[e].index == op->index &&
		    (c->exits[e].exit_reason == KVM_EXIT_X86_WRMSR) == !!op->write) {
			ex = &c->exits[e];
			k = (first + e) % MAX_ANSWERS;
			e++;
		}
		tally->accesses++;
		if (!denied) {
			if (ex && ex->reason == KVM_MSR_EXIT_REASON_FILTER)
				bad = "allowed access exited for the filter";
		} else if (tally->denied++, !(model.mask & KVM_MSR_EXIT_REASON_FILTER)) {
			if (ex)
				bad = "denied access exited, the filter reason not in the mask";
			else if (res[i].vector != GP_VECTOR)
				bad = "denied access completed without #GP";
		} else if (!ex || ex->reason != KVM_MSR_EXIT_REASON_FILTER) {
			bad = "denied access did not exit for the filter";
		} else if (op->write && ex->data != op->value) {
			bad = "filter exit does not carry the written value";
		} else if (answers[k].error) {
			if (res[i].vector != GP_VECTOR)
				bad = "user space refused, no #GP";
		} else if (res[i].vector) {
			bad = "user space completed it, the guest faulted";
		} else if (!op->write && res[i].value != answers[k].data) {
			bad = "the read did not return user space's value";
		}
		if (bad && tally->violations++ < 20)
			printf("# invariant %s op %u %c%s%x: %s\n", where, i, op->write ? 'w' : 'r',
			       op->fep ? "e" : "", op->index, bad);
	}
}

/*
 * The VM is made without a vCPU; cap and filter are drawn (in the order of the other cases),
 * the cap set, then the filter set by a thread at a random point of the vCPU's creation.
 */
static void race_create(struct msr_ctx *c, char *capd, size_t caplen, char *out, size_t len)
{
	struct kvm_msr_filter f;
	struct create_race t = { .f = &f };
	size_t o;
	pthread_t th;
	uint64_t t0, took;

	memset(c, 0, sizeof(*c));
	g_loops = 1;
	c->vm = vm_create(1);
	cur_vm = c->vm;
	random_cap(capd, caplen);
	t.vm = c->vm;
	o = draw_filter(&f, out, len);
	t.delay_ns = tally->span_ns * pick(1024) / 1024;
	TEST_ASSERT(!pthread_create(&th, NULL, set_after_delay, &t), "pthread_create");
	t0 = now_ns();
	t.go = 1;
	c->vcpu = vm_vcpu_add(c->vm, 0, guest_code);
	took = now_ns() - t0;
	if (took > tally->span_ns)
		tally->span_ns = took;
	TEST_ASSERT(!pthread_join(th, NULL), "pthread_join");
	if (!t.err)
		model_install(&f);
	snprintf(out + o, len - o, ")=%d", t.err);
	vm_init_descriptor_tables(c->vm);
	vcpu_init_descriptor_tables(c->vcpu);
	vm_install_exception_handler(c->vm, GP_VECTOR, guest_gp_handler);
	tally->races++;
}

static char line[3][8192];

static void one_case(unsigned long cn)
{
	struct msr_op ops[2][NOPS];
	struct msr_res res[NOPS];
	unsigned int nops[2], b, i, first;
	struct msr_ctx c;
	char capd[2][64], where[32];
	bool x2apic, race;

	/* Everything random is drawn before the VM runs. */
	race = !pick(6);
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
	memset(&model, 0, sizeof(model));

	if (race) {
		race_create(&c, capd[0], sizeof(capd[0]), line[0], sizeof(line[0]));
		c.answer = fuzz_answer;
		if (x2apic)
			vcpu_set_msr(c.vcpu, MSR_IA32_APICBASE,
				     vcpu_get_msr(c.vcpu, MSR_IA32_APICBASE) | X2APIC_ENABLE);
	} else {
		msr_ctx_init(&c);
		cur_vm = c.vm;
		c.answer = fuzz_answer;
		if (x2apic)
			vcpu_set_msr(c.vcpu, MSR_IA32_APICBASE,
				     vcpu_get_msr(c.vcpu, MSR_IA32_APICBASE) | X2APIC_ENABLE);
		random_cap(capd[0], sizeof(capd[0]));
		random_filter(line[0], sizeof(line[0]));
	}
	first = nanswer;
	if (run_batch(&c, ops[0], nops[0], res, line[1], sizeof(line[1]))) {
		snprintf(where, sizeof(where), "c%lu.0", cn);
		check_batch(&c, ops[0], nops[0], res, first, where);
	}
	printf("# obs c%lu.0%s x2apic=%d %s %s |%s\n", cn, race ? " race" : "", x2apic, capd[0],
	       line[0], line[1]);

	if (pick(2))
		random_cap(capd[1], sizeof(capd[1]));
	else
		snprintf(capd[1], sizeof(capd[1]), "cap-kept");
	if (pick(4))
		random_filter(line[0], sizeof(line[0]));
	else
		snprintf(line[0], sizeof(line[0]), "filter-kept");
	first = nanswer;
	if (run_batch(&c, ops[1], nops[1], res, line[2], sizeof(line[2]))) {
		snprintf(where, sizeof(where), "c%lu.1", cn);
		check_batch(&c, ops[1], nops[1], res, first, where);
	}
	printf("# obs c%lu.1%s %s %s |%s\n", cn, race ? " race" : "", capd[1], line[0], line[2]);
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
	ksft_set_plan(3);
	ksft_print_msg("seed %llu, %lu cases (KTEST_SEED=%llu replays them)\n",
		       (unsigned long long)seed, cases, (unsigned long long)seed);
	page = sysconf(_SC_PAGESIZE);
	fep = fep_enabled();
	bitmaps = malloc(16 * KVM_MSR_FILTER_MAX_BITMAP_SIZE);
	edge = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/*
	 * A PROT_NONE page stays reserved: an address once unmapped may be handed to a later
	 * mmap() (the tally below took it), and a bitmap read from there is whatever that
	 * mapping holds at the time, different between two runs of the same seed.
	 */
	unmapped = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!bitmaps || edge == MAP_FAILED || unmapped == MAP_FAILED ||
	    mprotect(edge + page, page, PROT_NONE))
		ksft_exit_fail_msg("buffers: %s\n", strerror(errno));
	memset(edge, 0xff, page);
	tally = mmap(NULL, sizeof(*tally), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		     -1, 0);
	if (tally == MAP_FAILED)
		ksft_exit_fail_msg("tally: %s\n", strerror(errno));
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
	ksft_print_msg("%lu accesses, %lu denied by the model, %lu violations; %lu vCPUs created while the filter was set (creation up to %llu us)\n",
		       tally->accesses, tally->denied, tally->violations, tally->races,
		       (unsigned long long)tally->span_ns / 1000);
	ksft_test_result(tally->accesses && tally->denied && !tally->violations,
			 "denied accesses exit or fault\n");
	ksft_finished();
}

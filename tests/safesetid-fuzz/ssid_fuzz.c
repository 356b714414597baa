// SPDX-License-Identifier: GPL-2.0
/*
 * SafeSetID policies under seeded random input, compared with stock by
 * scripts/matrix.py: each case flushes both policy files, writes random
 * policy texts (well-formed lines over a small pool of IDs, mixed with bad
 * numbers, missing separators, duplicates, NULs and bad offsets), reads them
 * back, then forks tasks with random UIDs, GIDs, supplementary groups and
 * capabilities that try random set*id(), setgroups() and user namespace map
 * writes.  One "# obs" line per step: return values, errnos, the text read
 * back, and how each task ended (exit code, errno, or the signal).
 *
 * Independent of stock, a model of the policy decides every transition: the
 * rules of the last text each file accepted (with the self-rule the kernel
 * adds for a rule's target that has no rule of its own), looked up by the
 * task's real UID for UID changes and by its real GID for GID changes and
 * setgroups(), as Documentation/admin-guide/LSM/SafeSetID.rst says.  A
 * change to an ID the task does not hold, from a constrained ID, to one no
 * rule allows, must not happen (the kernel kills the task); a change the
 * rules allow, by a task holding the capability, must.  CAP_SETUID or
 * CAP_SETGID used for an ID map of a user namespace is refused to a
 * constrained ID, except a UID map of the writer's own UID (no capability
 * needed).  The set-up of each task (root taking on its IDs) is judged by
 * the same rules.  A step that breaks the model has " VIOLATION: <why>" at
 * the end of its line, and the run's last result fails.
 *
 * Environment: KTEST_SEED (random if unset, always printed), KTEST_FUZZ_CASES,
 * KTEST_FUZZ_SECONDS (time bound).
 */
#include "ssid_util.h"
#include <stdint.h>
#include <time.h>
#include "../fuzz_rng.h"
#include "kselftest.h"

static const unsigned int pool[] = { 0, 2000, 2001, 2002, 2003, 2004, 3000 };
#define POOL_N (sizeof(pool) / sizeof(pool[0]))

/* The model: the rules of the text each policy file last accepted. */
#define MODEL_MAX	128
static struct {
	unsigned int n, src[MODEL_MAX], dst[MODEL_MAX];
} model[2];
static unsigned long violations, model_errors;

enum verdict { V_DEFAULT, V_CONSTRAINED, V_ALLOWED };

static enum verdict lookup(int kind, unsigned int src, unsigned int dst)
{
	enum verdict v = V_DEFAULT;
	unsigned int i;

	for (i = 0; i < model[kind].n; i++) {
		if (model[kind].src[i] != src)
			continue;
		if (model[kind].dst[i] == dst)
			return V_ALLOWED;
		v = V_CONSTRAINED;
	}
	return v;
}

static bool constrained(int kind, unsigned int id)
{
	unsigned int i;

	for (i = 0; i < model[kind].n; i++)
		if (model[kind].src[i] == id)
			return true;
	return false;
}

/* A number as the kernel reads it (kstrtou32, base 0): the whole token, or false. */
static bool model_number(const char *tok, unsigned int *out)
{
	unsigned long v;
	char *end;

	if (!*tok || *tok == ' ' || *tok == '\t' || *tok == '-')
		return false;
	errno = 0;
	v = strtoul(tok, &end, 0);
	if (errno || *end || v >= 0xffffffffUL)
		return false;
	*out = v;
	return true;
}

/*
 * The kernel accepted @text (@len bytes) for @kind: it holds the rules of the
 * lines before the first NUL, plus "dst:dst" for each target without a rule.
 */
static void model_set(int kind, const char *text, size_t len)
{
	char buf[600], *line, *next, *colon;
	unsigned int i, n = 0, a, b;

	if (len >= sizeof(buf)) {
		model_errors++;
		return;
	}
	memcpy(buf, text, len);
	buf[len] = '\0';
	for (line = buf; *line; line = next + 1) {
		next = strchr(line, '\n');
		colon = strchr(line, ':');
		if (!next || !colon || colon > next || n >= MODEL_MAX) {
			model_errors++;
			return;
		}
		*next = *colon = '\0';
		if (!model_number(line, &a) || !model_number(colon + 1, &b)) {
			model_errors++;
			return;
		}
		model[kind].src[n] = a;
		model[kind].dst[n++] = b;
	}
	model[kind].n = n;
	for (i = 0; i < n; i++)
		if (!constrained(kind, model[kind].dst[i]) && model[kind].n < MODEL_MAX) {
			model[kind].src[model[kind].n] = model[kind].dst[i];
			model[kind].dst[model[kind].n++] = model[kind].dst[i];
		}
}

/* May a task whose three IDs of @kind are @old change one of them to @to? */
static bool permitted(int kind, unsigned int old, unsigned int to)
{
	return to == old || lookup(kind, old, to) != V_CONSTRAINED;
}

static unsigned int pool_id(void)
{
	return pool[pick(POOL_N)];
}

/* A number token: mostly an ID of the pool, sometimes in another spelling. */
static void put_number(char *out, size_t size)
{
	static const char *const odd[] = {
		"", "x", "-1", "+2001", "0x7d1", "03721", "4294967295", "4294967296",
		"99999999999", " 2001", "2001 ", "2001\t", "00", "0x", "2002\n",
	};

	if (pick(8))
		snprintf(out, size, "%u", pool_id());
	else
		snprintf(out, size, "%s", odd[pick(sizeof(odd) / sizeof(odd[0]))]);
}

/* A random policy text of @*len bytes (it may hold a NUL). */
static void policy_text(char *buf, size_t size, size_t *len)
{
	int lines = pick(6), i;
	char a[32], b[32];
	size_t n = 0;

	for (i = 0; i < lines && n + 80 < size; i++) {
		if (i && !pick(10)) {	/* repeat the previous line */
			const char *prev = buf + n - 1;

			while (prev > buf && prev[-1] != '\n')
				prev--;
			memmove(buf + n, prev, buf + n - prev);
			n += buf + n - prev;
			continue;
		}
		put_number(a, sizeof(a));
		put_number(b, sizeof(b));
		switch (pick(12)) {
		case 0:		/* no colon */
			n += snprintf(buf + n, size - n, "%s%s", a, b);
			break;
		case 1:		/* two colons */
			n += snprintf(buf + n, size - n, "%s::%s", a, b);
			break;
		default:
			n += snprintf(buf + n, size - n, "%s:%s", a, b);
		}
		if (pick(12) || i + 1 < lines)	/* the last line may lack its newline */
			buf[n++] = '\n';
		if (!pick(30))
			buf[n++] = '\0';
	}
	*len = n;
}

static void escape(const char *in, size_t len, char *out, size_t size)
{
	size_t i, o = 0;

	for (i = 0; i < len && o + 5 < size; i++) {
		unsigned char c = in[i];

		if (c == '\n')
			o += snprintf(out + o, size - o, "\\n");
		else if (c < 32 || c >= 127 || c == '\\')
			o += snprintf(out + o, size - o, "\\%02x", c);
		else
			out[o++] = c;
	}
	out[o] = '\0';
}

static void fuzz_write(unsigned long c, int step)
{
	char text[512], esc[1100], back[600];
	int kind = pick(2), fd;
	size_t len;
	long ret;

	policy_text(text, sizeof(text), &len);
	escape(text, len, esc, sizeof(esc));
	if (!pick(20)) {	/* a write at a non-zero offset */
		fd = open(ssid_file(kind), O_WRONLY);
		ret = pwrite(fd, text, len, 1 + pick(4));
		ret = ret < 0 ? -errno : ret;
		close(fd);
	} else {
		ret = ssid_write_len(kind, text, len);
	}
	if (ret >= 0 && (size_t)ret == len)
		model_set(kind, text, len);
	printf("# obs c%lu.%d write %s \"%s\" -> %ld", c, step, kind ? "gid" : "uid", esc, ret);
	ret = ssid_read(kind, back, sizeof(back));
	escape(back, ret > 0 ? ret : 0, esc, sizeof(esc));
	printf(" read %ld \"%s\"\n", ret, esc);
}

static unsigned int maybe_unchanged(void)
{
	return pick(5) ? pool_id() : -1U;
}

/*
 * What the model says of @act by @who (after root took on @who's IDs): NULL
 * when @ret is what it allows, else why not.
 */
static const char *judge(const struct ssid_who *who, const struct ssid_act *act, int ret)
{
	bool caps = who->keep_caps || who->uid == 0, denied = false;
	unsigned int ids[4], n = 0, i, key;
	int kind;

	/* The set-up: setgroups(), setresgid(), setresuid() from root (0/0). */
	for (i = 0; i < (unsigned int)who->ngroups; i++)
		denied |= constrained(SSID_GID, 0) && !permitted(SSID_GID, 0, who->groups[i]);
	denied |= constrained(SSID_GID, 0) && !permitted(SSID_GID, 0, who->gid);
	denied |= constrained(SSID_UID, 0) && !permitted(SSID_UID, 0, who->uid);
	if (denied)
		return ret == SSID_KILLED(SIGKILL) ? NULL : "set-up denied, task not killed";
	if (ret >= 200 && ret <= 204)
		return "set-up allowed, failed";

	kind = act->op >= OP_SETGID && act->op != OP_UID_MAP ? SSID_GID : SSID_UID;
	key = kind == SSID_GID ? who->gid : who->uid;
	switch (act->op) {
	case OP_UID_MAP:
		if (constrained(SSID_UID, who->uid) && act->a != who->uid && ret == 0)
			return "CAP_SETUID for a UID map granted to a constrained UID";
		return NULL;
	case OP_GID_MAP:
		if (constrained(SSID_GID, who->gid) && ret == 0)
			return "CAP_SETGID for a GID map granted to a constrained GID";
		return NULL;
	case OP_SETGROUPS:
		for (i = 0; i < (unsigned int)act->n; i++)
			ids[n++] = act->list[i];
		break;
	default:
		ids[n++] = act->a;
		if (act->op == OP_SETREUID || act->op == OP_SETRESUID ||
		    act->op == OP_SETREGID || act->op == OP_SETRESGID)
			ids[n++] = act->b;
		if (act->op == OP_SETRESUID || act->op == OP_SETRESGID)
			ids[n++] = act->c;
	}
	for (i = 0; i < n; i++)
		if (ids[i] != -1U && constrained(kind, key) && !permitted(kind, key, ids[i]))
			denied = true;
	if (denied && ret == 0)
		return "a change the policy denies was made";
	if (denied && ret != SSID_KILLED(SIGKILL) && caps)
		return "a change the policy denies did not kill the task";
	if (!denied && caps && ret != 0)
		return "a change the policy allows, with the capability, was refused";
	return NULL;
}

static void fuzz_try(unsigned long c, int step)
{
	const char *why;
	struct ssid_who who = { 0 };
	struct ssid_act act = { 0 };
	char groups[64] = "", args[80];
	int i, ret;

	who.gid = pool_id();
	who.uid = pick(5) ? who.gid : pool_id();
	who.keep_caps = pick(8);
	who.ngroups = pick(3);
	for (i = 0; i < who.ngroups; i++)
		who.groups[i] = pool_id();
	act.op = pick(OP_NOPS);
	act.a = pool_id();
	act.b = maybe_unchanged();
	act.c = maybe_unchanged();
	if (act.op == OP_SETUID || act.op == OP_SETGID || act.op == OP_SETFSUID ||
	    act.op == OP_SETFSGID || act.op == OP_UID_MAP || act.op == OP_GID_MAP)
		act.b = act.c = 0;
	if (act.op == OP_SETREUID || act.op == OP_SETREGID)
		act.c = 0;
	if (act.op == OP_SETGROUPS) {
		act.n = pick(4);
		for (i = 0; i < act.n; i++)
			act.list[i] = pool_id();
		act.a = act.b = act.c = 0;
	}
	ret = ssid_try(&who, &act);
	for (i = 0; i < who.ngroups; i++)
		snprintf(groups + strlen(groups), sizeof(groups) - strlen(groups), "%s%u",
			 i ? "," : "", who.groups[i]);
	if (act.op == OP_SETGROUPS) {
		args[0] = '\0';
		for (i = 0; i < act.n; i++)
			snprintf(args + strlen(args), sizeof(args) - strlen(args), "%s%u",
				 i ? "," : "", act.list[i]);
	} else {
		snprintf(args, sizeof(args), "%d,%d,%d", (int)act.a, (int)act.b, (int)act.c);
	}
	why = judge(&who, &act, ret);
	violations += !!why;
	printf("# obs c%lu.%d try uid=%u gid=%u groups=[%s] caps=%d %s(%s) -> %s%d%s%s\n",
	       c, step, who.uid, who.gid, groups, who.keep_caps, ssid_op_name[act.op], args,
	       ret & 0x100 ? "signal " : "", ret & 0x100 ? ret & 0xff : ret,
	       why ? " VIOLATION: " : "", why ?: "");
}

int main(void)
{
	const struct fuzz_env env = fuzz_env();
	unsigned long cases = env.cases, limit = env.limit, c, done = 0;
	uint64_t seed = env.seed;
	time_t start = time(NULL);
	struct stat st;
	int step;

	ksft_print_header();
	ksft_set_plan(3);
	ksft_print_msg("seed %llu, %lu cases (KTEST_SEED=%llu replays them)\n",
		       (unsigned long long)seed, cases, (unsigned long long)seed);
	ssid_mount_securityfs();
	ksft_test_result(stat(SSID_GID_FILE, &st) == 0 && stat(SSID_UID_FILE, &st) == 0,
			 "both policy files exist\n");
	for (c = 0; c < cases; c++) {
		if ((unsigned long)(time(NULL) - start) > limit)
			break;
		/* each case draws from its own stream and starts from empty policies */
		fuzz_seed_case(seed, c);
		ssid_flush();
		memset(model, 0, sizeof(model));
		for (step = 0; step < 2 + (int)pick(3); step++)
			fuzz_write(c, step);
		for (; step < 8; step++)
			fuzz_try(c, step);
		fflush(stdout);
		done++;
	}
	ssid_flush();
	ksft_test_result(done > 0, "%lu of %lu cases in %ld s\n", done, cases,
			 (long)(time(NULL) - start));
	ksft_test_result(!violations && !model_errors,
			 "the policy model decides every transition (%lu violations, %lu accepted texts it cannot read)\n",
			 violations, model_errors);
	ksft_finished();
}

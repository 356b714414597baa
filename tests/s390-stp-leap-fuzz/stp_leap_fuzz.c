// SPDX-License-Identifier: GPL-2.0
/*
 * Seeded fuzzing of the STP leap-second interfaces of an s390x guest
 * without STP (QEMU).
 *
 * Injection cases (kernels with CONFIG_S390_STP_LEAP_INJECT): random lines
 * for /sys/kernel/debug/s390/stp/inject, built from tokens that are valid,
 * out of range, too long, signed, doubled, missing or garbage, with embedded
 * NULs and overlong lines.  A parser written here after the documented rules
 * says whether the kernel must take the line; after each case the injection
 * point, the STP sysfs attributes and the adjtimex leap flags must match a
 * model of the state (which flag the kernel set and owns, which one user
 * space set).  Some cases change the leap flags from user space while a
 * state is injected, as an NTP daemon would.
 *
 * Shared cases (every kernel): end the injection, print what user space
 * sees (adjtimex status, STP sysfs attributes) as "# obs" lines, do a random
 * adjtimex or sysfs operation and print again.  The random numbers drawn do
 * not depend on the kernel, so stock and ours see the same cases for a seed
 * and their observations can be compared line by line.  Where injection
 * left other leap flags than stock has (a user flag replaced by an injected
 * announcement, or changed while a state was injected: stock cannot do
 * either), the flags are first checked against the model and then set back
 * to stock's, so every observation line must match stock's.
 *
 * KTEST_SEED gives the seed (printed; FUZZ_SEED= on the host replays it),
 * KTEST_FUZZ_CASES the number of cases; KTEST_FUZZ_SECONDS bounds the run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

#include "../s390-stp-leap/stp_util.h"

#define STP_DIR		"/sys/devices/system/stp"
#define SCHEDULED	STP_DIR "/leap_seconds_scheduled"
#define INJECT		"/sys/kernel/debug/s390/stp/inject"
#define TOD		"/sys/kernel/debug/s390/stp/tod"

#define TOD_UNIX_EPOCH	0x7d91048bca000000ULL
#define TOD_SEC		4096000000ULL
#define LEAP_FLAGS	(STA_INS | STA_DEL)
#define INJECT_MAX	80		/* the kernel's buffer, NUL included */
#define MAX_FAILURES	20

/* --- random numbers: xorshift64*, seeded through splitmix64 --- */

static uint64_t rng;

static void seed_rng(uint64_t seed)
{
	uint64_t z = seed + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	rng = (z ^ (z >> 31)) | 1;
}

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dULL;
}

static unsigned int below(unsigned int n)
{
	return rnd() % n;
}

static const char *pick(const char *const *list, unsigned int n)
{
	return list[below(n)];
}

#define PICK(list) pick(list, sizeof(list) / sizeof(list[0]))

/* --- what the kernel must show --- */

struct model {
	int active, synced, lu, p, also, nlso;
	unsigned long long tod;
	int flags;		/* leap flags this kernel must have */
	int owned;		/* the flag the kernel set and may take back */
	int stock_flags;	/* the leap flags after the shared cases alone */
};

static struct model m;
static int have_inject;
static unsigned int failures;
static const char *case_id;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
	va_list ap;

	failures++;
	if (failures > MAX_FAILURES)
		return;
	printf("# FAIL %s: ", case_id);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* A file's text without its newline, or "E<errno>". */
static void describe(const char *path, char *out, size_t size)
{
	char buf[128];
	int n = read_file(path, buf, sizeof(buf));

	if (n < 0) {
		snprintf(out, size, "E%d", -n);
		return;
	}
	buf[strcspn(buf, "\n")] = '\0';
	snprintf(out, size, "%s", buf);
}

static int write_bytes(const char *path, const char *s, size_t len)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	close(fd);
	if (n < 0)
		return -errno;
	return n == (ssize_t)len ? 0 : -EIO;
}

static unsigned long long tod_now(void)
{
	char buf[64];

	if (!have_inject || read_file(TOD, buf, sizeof(buf)) <= 0)
		return TOD_UNIX_EPOCH + (unsigned long long)time(NULL) * TOD_SEC;
	return strtoull(buf, NULL, 16);
}

static int adj(struct timex *tx)
{
	int rc = adjtimex(tx);

	return rc < 0 ? -errno : rc;
}

static int status_now(void)
{
	struct timex tx = { .modes = 0 };

	return adj(&tx) < 0 ? -1 : tx.status;
}

/* --- the parser of the injection point, after its documentation --- */

static int k_isspace(unsigned char c)
{
	return (c >= 9 && c <= 13) || c == ' ' || c == 0xa0;
}

/* kstrtoull() without the sign: 0, or -1 for anything it refuses. */
static int k_unsigned(const char *s, unsigned int base,
		      unsigned long long *res)
{
	unsigned long long v = 0;
	int digits = 0, over = 0;

	if (base == 16 && s[0] == '0' && (s[1] | 0x20) == 'x')
		s += 2;
	for (;; s++, digits++) {
		unsigned int c = (unsigned char)*s, d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (c | 0x20) - 'a' + 10;
		else
			break;
		if (d >= base)
			break;
		if (v > (~0ULL - d) / base)
			over = 1;
		v = v * base + d;
	}
	if (over || !digits || *s)
		return -1;
	*res = v;
	return 0;
}

static int k_u8(const char *s, unsigned int *res)
{
	unsigned long long v;

	if (*s == '+')
		s++;
	if (k_unsigned(s, 10, &v) || v > 255)
		return -1;
	*res = v;
	return 0;
}

static int k_s16(const char *s, int *res)
{
	unsigned long long v;

	if (*s == '-') {
		if (k_unsigned(s + 1, 10, &v) || v > 32768)
			return -1;
		*res = -(int)v;
		return 0;
	}
	if (*s == '+')
		s++;
	if (k_unsigned(s, 10, &v) || v > 32767)
		return -1;
	*res = v;
	return 0;
}

enum { REFUSED, OFF, ACCEPTED };

/* What the kernel must do with @len bytes @in; ACCEPTED fills @out. */
static int expect_parse(const char *in, size_t len, struct model *out)
{
	char buf[INJECT_MAX], *s, *end, *word[7];
	unsigned int flag[3];
	unsigned long long tod;
	int n = 0, also, nlso;

	if (len >= INJECT_MAX || memchr(in, '\0', len))
		return REFUSED;
	memcpy(buf, in, len);
	buf[len] = '\0';
	s = buf;
	end = buf + len;
	while (end > s && k_isspace(end[-1]))
		*--end = '\0';
	while (k_isspace(*s))
		s++;
	if (!strcmp(s, "off"))
		return OFF;
	while (*s && n < 7) {
		word[n++] = s;
		while (*s && !k_isspace(*s))
			s++;
		if (*s)
			*s++ = '\0';
		while (k_isspace(*s))
			s++;
	}
	if (n != 6)
		return REFUSED;
	if (k_u8(word[0], &flag[0]) || flag[0] > 1 ||
	    k_u8(word[1], &flag[1]) || flag[1] > 1 ||
	    k_u8(word[2], &flag[2]) || flag[2] > 1 ||
	    k_s16(word[3], &also) || k_s16(word[4], &nlso))
		return REFUSED;
	if (word[5][0] == '+')
		word[5]++;
	if (k_unsigned(word[5], 16, &tod))
		return REFUSED;
	out->synced = flag[0];
	out->lu = flag[1];
	out->p = flag[2];
	out->also = also;
	out->nlso = nlso;
	out->tod = tod;
	return ACCEPTED;
}

/* --- what the kernel must do with the leap flags --- */

enum { CLEAR, IGNORE, ARM_INS, ARM_DEL };

static int decide(const struct model *s, unsigned long long now)
{
	long long until;
	int change;

	if (!s->synced || !s->lu || !s->p)
		return CLEAR;
	change = s->nlso - s->also;
	if (change != 1 && change != -1)
		return IGNORE;
	until = (long long)(s->tod - now);
	if (until < 0 || until >= 7200LL * (long long)TOD_SEC)
		return CLEAR;
	return change > 0 ? ARM_INS : ARM_DEL;
}

static void model_arm(int flag)
{
	if (m.flags == flag) {
		if (m.owned != flag)
			m.owned = 0;
		return;
	}
	m.flags = flag;
	m.owned = flag;
}

static void model_disarm(void)
{
	if (!m.owned)
		return;
	if (m.flags == m.owned)
		m.flags = 0;
	m.owned = 0;
}

/* --- checks --- */

static void check_flags(void)
{
	int st = status_now();

	if (st < 0)
		fail("adjtimex: %s", strerror(errno));
	else if ((st & LEAP_FLAGS) != m.flags)
		fail("leap flags %#x, expected %#x (owned %#x)",
		     st & LEAP_FLAGS, m.flags, m.owned);
}

/* Injection point, sysfs and flags against the model. */
static void check_injected_state(void)
{
	char got[128], want[128];

	check_flags();
	describe(INJECT, got, sizeof(got));
	if (m.active)
		snprintf(want, sizeof(want), "%d %d %d %d %d %016llx",
			 m.synced, m.lu, m.p, m.also, m.nlso, m.tod);
	else
		snprintf(want, sizeof(want), "off");
	if (strcmp(got, want))
		fail("inject reads '%s', expected '%s'", got, want);

	describe(SCHEDULED, got, sizeof(got));
	if (!m.active || !m.lu)
		snprintf(want, sizeof(want), "E%d", ENODATA);
	else if (!m.p)
		snprintf(want, sizeof(want), "0,0");
	else
		snprintf(want, sizeof(want), "%llu,%d",
			 (m.tod - TOD_UNIX_EPOCH) / TOD_SEC, m.nlso - m.also);
	if (strcmp(got, want))
		fail("leap_seconds_scheduled reads '%s', expected '%s'",
		     got, want);

	describe(STP_DIR "/leap_seconds", got, sizeof(got));
	if (m.active)
		snprintf(want, sizeof(want), "%d", m.also);
	else
		snprintf(want, sizeof(want), "E%d", ENODATA);
	if (strcmp(got, want))
		fail("leap_seconds reads '%s', expected '%s'", got, want);
}

/* --- injection lines --- */

static const char *const flag_odd[] = {
	"2", "-1", "+1", "01", "00", "4294967297", "4294967296", "256", "257",
	"18446744073709551617", "1x", "0x1", "-0", "+", "1.0", "\xa0" "1",
};

static const char *const lso_odd[] = {
	"32767", "32768", "-32768", "-32769", "4294967323", "-4294967269",
	"65563", "+27", "-0", "27a", "0x1b", "99999999999999999999", "-",
	"--1", "-+1", "+-1", "2147483675",
};

static const char *const tod_odd[] = {
	"ffffffffffffffff", "10000000000000000", "0", "-1", "+0",
	"00000000000000000000001", "1ffffffffffffffff", "g", "0x", "0X10",
	"+0x7d91048bca000000", "0xffffffffffffffffff", "dead beef",
};

/* Lines around "off"; the NULs are part of the line. */
static const struct {
	const char *s;
	size_t len;
} off_like[] = {
	{ "off", 3 }, { "off\n", 4 }, { " off ", 5 }, { "\toff\n", 5 },
	{ "of", 2 }, { "offf", 4 }, { "OFF", 3 }, { "off 1", 5 },
	{ "off\0", 4 }, { "o\0ff", 4 }, { "\xa0off\xa0", 5 },
};

static const char *const seps[] = { " ", " ", " ", "  ", "\t", " \t ", "\n" };

static void token_flag(char *t, size_t size)
{
	if (below(100) < 88)
		snprintf(t, size, "%u", below(2));
	else
		snprintf(t, size, "%s", PICK(flag_odd));
}

static void token_lso(char *t, size_t size, int base)
{
	unsigned int r = below(100);

	if (r < 80)
		snprintf(t, size, "%d", base);
	else if (r < 90)
		snprintf(t, size, "%s", PICK(lso_odd));
	else
		snprintf(t, size, "%d", (int)below(140001) - 70000);
}

/* A TOD value a given number of seconds from now, kept off the edges. */
static void token_tod(char *t, size_t size, unsigned long long now)
{
	static const char *const fmt[] = {
		"%llx", "%llx", "%016llx", "0x%llx", "%llX", "+%llx", "0%llx",
	};
	long long secs;
	unsigned int r = below(100);
	int i;

	if (r < 80) {
		secs = (long long)below(72001) - 36000;
		/* A few seconds from "now" and from 2 h ahead are a race. */
		if (llabs(secs) < 5 || llabs(secs - 7200) < 5)
			secs += 10;
		snprintf(t, size, PICK(fmt), now + secs * TOD_SEC);
	} else if (r < 90) {
		snprintf(t, size, "%s", PICK(tod_odd));
	} else {
		int digits = 17 + below(8);

		for (i = 0; i < digits && i < (int)size - 1; i++)
			t[i] = "0123456789abcdef"[i ? below(16) : 1 + below(15)];
		t[i] = '\0';
	}
}

/* Build one line for the injection point in @out: its length. */
static size_t gen_line(char *out, size_t size, unsigned long long now)
{
	unsigned int r = below(100), i, n;
	char tok[8][48];
	size_t len = 0;
	int also;

	if (r < 5) {
		i = below(sizeof(off_like) / sizeof(off_like[0]));
		memcpy(out, off_like[i].s, off_like[i].len);
		return off_like[i].len;
	}
	if (r < 10) {
		/* Bytes of any value, NULs included. */
		len = 1 + below(100);
		for (i = 0; i < len && i < size; i++)
			out[i] = below(4) ? 32 + below(95) : below(256);
		return len < size ? len : size;
	}

	also = (int)below(41) - 10;
	token_flag(tok[0], sizeof(tok[0]));
	token_flag(tok[1], sizeof(tok[1]));
	token_flag(tok[2], sizeof(tok[2]));
	token_lso(tok[3], sizeof(tok[3]), also);
	r = below(100);
	token_lso(tok[4], sizeof(tok[4]),
		  also + (r < 45 ? 1 : r < 90 ? -1 : (int)below(5) - 2));
	token_tod(tok[5], sizeof(tok[5]), now);
	n = 6;
	r = below(100);
	if (r < 6) {
		/* A word too few. */
		i = below(6);
		memmove(tok[i], tok[i + 1], (5 - i) * sizeof(tok[0]));
		n = 5;
	} else if (r < 12) {
		/* A word too many. */
		token_flag(tok[6], sizeof(tok[6]));
		n = 7;
	}

	if (below(10) == 0)
		len += snprintf(out + len, size - len, "%s", PICK(seps));
	for (i = 0; i < n && len < size; i++)
		len += snprintf(out + len, size - len, "%s%s", i ? PICK(seps) : "",
				tok[i]);
	if (len < size && below(2))
		len += snprintf(out + len, size - len, "\n");
	if (len >= size)
		len = size - 1;
	r = below(100);
	if (r < 5 && len) {
		/* A NUL inside the line. */
		out[below(len)] = '\0';
	} else if (r < 10) {
		/* Long: padding, or leading zeros, up to past the buffer. */
		unsigned int pad = 40 + below(100);

		if (len + pad >= size)
			pad = size - 1 - len;
		memmove(out + pad, out, len);
		memset(out, below(2) ? ' ' : '0', pad);
		len += pad;
	}
	return len;
}

/* Show a line with its non-printable bytes escaped. */
static const char *escape(const char *in, size_t len)
{
	static char out[4 * 256 + 1];
	size_t i, o = 0;

	for (i = 0; i < len && o + 5 < sizeof(out); i++) {
		unsigned char c = in[i];

		if (c >= 32 && c < 127 && c != '\\')
			out[o++] = c;
		else
			o += snprintf(out + o, sizeof(out) - o, "\\x%02x", c);
	}
	out[o] = '\0';
	return out;
}

static void injection_case(void)
{
	unsigned long long now = tod_now(), after;
	struct model req = m;
	char line[256];
	size_t len = gen_line(line, sizeof(line), now);
	int want = expect_parse(line, len, &req), rc, act, act2;

	if (!have_inject)
		return;
	rc = write_bytes(INJECT, line, len);
	after = tod_now();
	if (want == REFUSED) {
		if (rc != -EINVAL)
			fail("'%s' (%zu bytes): %d, expected EINVAL",
			     escape(line, len), len, rc);
	} else if (rc) {
		fail("'%s' (%zu bytes): %d, expected it taken",
		     escape(line, len), len, rc);
	} else if (want == OFF) {
		if (m.active) {
			m.active = 0;
			model_disarm();
		}
	} else {
		req.active = 1;
		m = req;
		act = decide(&m, now);
		act2 = decide(&m, after);
		if (act != act2)
			fail("'%s': decided across a boundary", escape(line, len));
		if (act == CLEAR)
			model_disarm();
		else if (act == ARM_INS)
			model_arm(STA_INS);
		else if (act == ARM_DEL)
			model_arm(STA_DEL);
	}
	check_injected_state();
}

/* User space changes the leap flags while a state may be injected. */
static void user_flag_case(void)
{
	static const int flags[] = { 0, STA_INS, STA_DEL, STA_INS | STA_DEL };
	int f = flags[below(4)];
	struct timex tx = { .modes = 0 };

	if (!have_inject)
		return;
	if (adj(&tx) < 0) {
		fail("adjtimex: %s", strerror(errno));
		return;
	}
	tx.modes = ADJ_STATUS;
	tx.status = (tx.status & ~LEAP_FLAGS) | f;
	if (adj(&tx) < 0)
		fail("adjtimex status %#x: %s", tx.status, strerror(errno));
	else
		m.flags = f;
	check_flags();
}

/* --- shared cases: what every kernel shows --- */

static void observe(const char *what)
{
	static const char *const attrs[] = {
		"leap_seconds_scheduled", "leap_seconds", "stratum", "online",
		"timing_state",
	};
	struct timex tx = { .modes = 0 };
	char line[512], val[64], path[128];
	int rc = adj(&tx), len;
	unsigned int i;

	if (rc < 0)
		fail("adjtimex: %s", strerror(-rc));
	else if ((tx.status & LEAP_FLAGS) != m.flags)
		fail("leap flags %#x, expected %#x", tx.status & LEAP_FLAGS,
		     m.flags);
	len = snprintf(line, sizeof(line), "status=%#x error=%d",
		       tx.status, rc == TIME_ERROR);
	for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		snprintf(path, sizeof(path), STP_DIR "/%s", attrs[i]);
		describe(path, val, sizeof(val));
		len += snprintf(line + len, sizeof(line) - len, " %s=%s",
				attrs[i], val);
	}
	printf("# obs %s.%s %s\n", case_id, what, line);
}

static void shared_case(void)
{
	static const int other[] = {
		STA_PLL, STA_FLL, STA_FREQHOLD, STA_UNSYNC, STA_NANO, STA_MODE,
		STA_PPSFREQ, STA_PPSTIME,
	};
	unsigned int op = below(100), i;
	struct timex tx = { .modes = 0 };
	char buf[64];
	int rc, f;

	/* Back to the machine's state, as stock always is. */
	if (have_inject) {
		if (write_bytes(INJECT, "off", 3))
			fail("'off' refused");
		if (m.active) {
			m.active = 0;
			model_disarm();
		}
		check_injected_state();
		/*
		 * Checked against the model: now go on from stock's flags, so
		 * that both kernels show the same from here.
		 */
		if (m.flags != m.stock_flags) {
			tx.modes = 0;
			if (adj(&tx) >= 0) {
				tx.modes = ADJ_STATUS;
				tx.status = (tx.status & ~LEAP_FLAGS) |
					    m.stock_flags;
				if (adj(&tx) >= 0)
					m.flags = m.stock_flags;
			}
			tx.modes = 0;
		}
	}
	observe("off");

	if (op < 30) {
		/* Set the leap flags, as an NTP daemon. */
		f = (int[]){ 0, STA_INS, STA_DEL, STA_INS | STA_DEL }[below(4)];
		if (adj(&tx) >= 0) {
			tx.modes = ADJ_STATUS;
			tx.status = (tx.status & ~LEAP_FLAGS) | f;
			if (adj(&tx) >= 0)
				m.flags = m.stock_flags = f;
		}
	} else if (op < 55) {
		/* Toggle other status bits; the leap flags stay. */
		f = 0;
		for (i = 0; i < sizeof(other) / sizeof(other[0]); i++)
			if (below(3) == 0)
				f |= other[i];
		if (adj(&tx) >= 0) {
			tx.modes = ADJ_STATUS;
			tx.status ^= f;
			adj(&tx);
		}
	} else if (op < 70) {
		/* Error estimates, far below the 16 s that unsynchronise. */
		tx.modes = below(2) ? ADJ_MAXERROR : ADJ_ESTERROR;
		tx.maxerror = tx.esterror = below(10000001);
		adj(&tx);
	} else if (op < 80) {
		/* Read an attribute in small pieces from an offset. */
		size_t size = 1 + below(8);
		off_t at = below(4);
		int fd = open(SCHEDULED, O_RDONLY);

		if (fd >= 0) {
			rc = pread(fd, buf, size, at);
			printf("# obs %s.pread %d\n", case_id,
			       rc < 0 ? -errno : rc);
			close(fd);
		}
	} else if (op < 90) {
		/* STP on or off: there is no STP to switch. */
		rc = write_bytes(STP_DIR "/online", below(2) ? "1" : "0", 1);
		printf("# obs %s.online %d\n", case_id, rc);
	} else {
		/* A write to a read-only attribute. */
		rc = write_bytes(SCHEDULED, "1,1", 3);
		printf("# obs %s.write %d\n", case_id, rc);
	}
	observe("op");
}

int main(void)
{
	const char *env = getenv("KTEST_SEED");
	unsigned long long seed = env && *env ? strtoull(env, NULL, 0) :
				  (unsigned long long)time(NULL);
	unsigned int cases = 2000, done = 0, budget = 0, r;
	struct timespec t0, t;
	char id[32];
	int ok_exists, st;
	struct stat sb;

	env = getenv("KTEST_FUZZ_CASES");
	if (env && *env)
		cases = strtoul(env, NULL, 0);
	env = getenv("KTEST_FUZZ_SECONDS");
	if (env && *env)
		budget = strtoul(env, NULL, 0);
	/*
	 * Below the group's timeout: 400 s, four times that on debug kernels
	 * (kmemleak is there).  5000 cases take about 17 s on a plain TCG
	 * guest; on the KASAN/lockdep/kmemleak kernel about 18 cases a second.
	 */
	if (!budget)
		budget = access("/sys/kernel/debug/kmemleak", F_OK) ? 300 : 1400;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n1..3\n");
	printf("# seed %llu, %u cases, at most %u s (FUZZ_SEED=%llu replays)\n",
	       seed, cases, budget, seed);

	ok_exists = !stat(SCHEDULED, &sb) && (sb.st_mode & 0777) == 0444;
	printf("%s 1 leap_seconds_scheduled exists, mode 0444\n",
	       ok_exists ? "ok" : "not ok");

	have_inject = !access(INJECT, W_OK);
	printf("# injection point: %s\n", have_inject ? "yes" : "no (stock)");
	seed_rng(seed);
	if (have_inject && write_bytes(INJECT, "off", 3))
		fail("'off' refused");
	st = status_now();
	m.flags = m.stock_flags = st < 0 ? 0 : st & LEAP_FLAGS;
	/*
	 * A small maximum error: from the boot value (16 s) the kernel would
	 * set STA_UNSYNC again within a second of a case clearing it.
	 */
	{
		struct timex tx = { .modes = ADJ_MAXERROR, .maxerror = 0 };

		adj(&tx);
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (done = 0; done < cases; done++) {
		snprintf(id, sizeof(id), "c%05u", done);
		case_id = id;
		r = below(100);
		if (r < 60)
			injection_case();
		else if (r < 70)
			user_flag_case();
		else
			shared_case();
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > (time_t)budget) {
			fail("time bound of %u s hit", budget);
			done++;
			break;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t);
	printf("# %u of %u cases in %ld s, %u failures\n", done, cases,
	       (long)(t.tv_sec - t0.tv_sec), failures);
	printf("%s 2 fuzz seed %llu: %u cases\n", failures ? "not ok" : "ok",
	       seed, done);

	/* Leave no injected state and no flag behind. */
	case_id = "end";
	if (have_inject) {
		unsigned int before = failures;

		if (write_bytes(INJECT, "off", 3))
			fail("'off' refused");
		if (m.active) {
			m.active = 0;
			model_disarm();
		}
		check_injected_state();
		printf("%s 3 injection off, state as modelled\n",
		       failures == before ? "ok" : "not ok");
	} else {
		printf("ok 3 injection off # SKIP no injection point\n");
	}
	{
		struct timex tx = { .modes = ADJ_STATUS, .status = STA_UNSYNC };

		adj(&tx);
	}
	return ok_exists && !failures ? 0 : 1;
}

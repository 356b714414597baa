// SPDX-License-Identifier: GPL-2.0
/*
 * The tour's SafeSetID GID demo: install a GID policy that lets group 2000
 * become group 2001 only, then let a task of UID 1000 / GID 2000 that holds
 * CAP_SETGID try setgid() to 2001 (allowed by the policy), to 2002 and to 0
 * (refused although the task has CAP_SETGID: SafeSetID kills a task that
 * tries a change its policy denies), and a task of another group, which the
 * policy does not constrain, do the same.  Every
 * line printed is what the child saw; an outcome other than the policy's
 * prints UNEXPECTED and the program exits 1.
 */
#include "ssid_util.h"

static int failures;

static void try(const struct ssid_who *who, gid_t to, bool allowed)
{
	struct ssid_act act = { .op = OP_SETGID, .a = to };
	int ret = ssid_try(who, &act);
	const char *what;

	if (ret == 0)
		what = "done";
	else if (ret == SSID_KILLED(SIGKILL))
		what = "refused, the task was killed (SIGKILL)";
	else if (ret > 0 && ret < 100)
		what = strerror(ret);
	else
		what = "failed before the call";
	printf("  uid %u gid %u (CAP_SETGID) setgid(%u): %s\n", who->uid, who->gid, to, what);
	if (ret != (allowed ? 0 : SSID_KILLED(SIGKILL))) {
		printf("UNEXPECTED: the policy says %s\n",
		       allowed ? "allowed" : "refused, the task killed");
		failures++;
	}
}

int main(void)
{
	struct ssid_who constrained = { .uid = 1000, .gid = 2000, .keep_caps = true };
	struct ssid_who other = { .uid = 1000, .gid = 3000, .keep_caps = true };
	char buf[256];
	long ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ssid_mount_securityfs();
	ret = ssid_write(SSID_GID, "2000:2001\n");
	if (ret < 0) {
		printf("UNEXPECTED: writing %s: %s\n", SSID_GID_FILE, strerror(-ret));
		return 1;
	}
	if (ssid_read(SSID_GID, buf, sizeof(buf)) < 0) {
		printf("UNEXPECTED: reading %s back failed\n", SSID_GID_FILE);
		return 1;
	}
	printf("%s:\n  %s", SSID_GID_FILE, buf);
	printf("group 2000 is constrained: only 2001 is allowed\n");
	try(&constrained, 2001, true);
	try(&constrained, 2002, false);
	try(&constrained, 0, false);
	printf("group 3000 has no rule: CAP_SETGID works as usual\n");
	try(&other, 2002, true);
	try(&other, 0, true);
	ssid_write(SSID_GID, "");
	return failures ? 1 : 0;
}

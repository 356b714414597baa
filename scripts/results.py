#!/usr/bin/env python3
"""Judge one guest run: parse the group's KTAP results channel, the KUnit output on the kernel
console (with the tree's own kunit_parser), and scan the console for kernel failure reports.

Writes one row per test to RESULTS (tab separated: group, test, status, detail) and exits 0
when every row passed or was skipped, 1 otherwise.

Usage: results.py GROUP RUNDIR KSRC [--kunit] [--timed-out SECONDS]
"""
import argparse
import io
import os
import re
import sys
import contextlib

RESULT = re.compile(r"^(\s*)(ok|not ok) (\d+)(?: -)? ?([^#]*?)\s*(?:#\s*(.*))?$")
PLAN = re.compile(r"^(\s*)1\.\.(\d+)")

# Kernel console reports that fail a run whatever the tests said: (name, pattern).
CONSOLE_FAILURES = [
    ("oops", re.compile(r"\bOops\b|general protection fault|Unable to handle kernel")),
    ("BUG", re.compile(r"\bBUG: |kernel BUG at")),
    ("WARNING", re.compile(r"WARNING: CPU: \d+ PID: |------------\[ cut here \]------------")),
    ("panic", re.compile(r"Kernel panic - not syncing")),
    ("KASAN", re.compile(r"BUG: KASAN: |KASAN: ")),
    ("UBSAN", re.compile(r"UBSAN: ")),
    ("KFENCE", re.compile(r"BUG: KFENCE: ")),
    ("lockdep", re.compile(r"possible circular locking dependency|possible recursive locking|"
                           r"inconsistent lock state|suspicious RCU usage|lock held when returning")),
    ("kmemleak", re.compile(r"kmemleak: \d+ new suspected memory leaks|unreferenced object 0x")),
    ("hung task", re.compile(r"INFO: task .* blocked for more than \d+ seconds")),
    ("soft lockup", re.compile(r"watchdog: BUG: soft lockup|rcu_sched self-detected stall|"
                               r"rcu: INFO: rcu_.* detected stalls")),
]
DONE_MARKER = "ktest: done"


def parse_ktap(text):
    """Rows from the results channel: top-level lines are programs, lines indented under
    them are that program's own (K)TAP, whose first level of results become the rows."""
    rows = []
    lines = text.splitlines()
    if not any(re.match(r"^\s*K?TAP version", l) for l in lines):
        return [("results", "fail", "no KTAP output on the results channel")]
    plan = None
    seen = 0
    nested = []   # (status, name, detail) of the current program's own results
    nplan = None
    nindent = None
    for line in lines:
        line = line.rstrip("\r")
        m = RESULT.match(line)
        p = PLAN.match(line)
        indent = len(line) - len(line.lstrip(" "))
        if p and indent == 0:
            plan = int(p.group(2))
            continue
        if p and nplan is None and indent > 0:
            nplan, nindent = int(p.group(2)), indent
            continue
        if not m:
            continue
        status = "pass" if m.group(2) == "ok" else "fail"
        directive = (m.group(5) or "").strip()
        if directive.upper().startswith("SKIP"):
            status = "skip"
        name = m.group(4).strip() or "test %s" % m.group(3)
        if indent > 0:
            if nindent is None:
                nindent = indent
            if indent == nindent:
                nested.append((status, name, directive))
            continue
        seen += 1
        if nested:
            for st, nm, det in nested:
                rows.append(("%s: %s" % (name, nm), st, det))
            if nplan is not None and len(nested) < nplan:
                rows.append(("%s" % name, "fail",
                             "%d of %d planned results missing" % (nplan - len(nested), nplan)))
            elif status == "fail" and all(st != "fail" for st, _, _ in nested):
                rows.append(("%s" % name, "fail", directive or "program failed"))
        else:
            rows.append((name, status, directive))
        nested, nplan, nindent = [], None, None
    if nested:
        rows.append(("unfinished program", "fail",
                     "output ends inside a program after %d results" % len(nested)))
    if plan is None:
        rows.append(("results", "fail", "no test plan"))
    elif seen < plan:
        rows.append(("results", "fail", "%d of %d planned programs did not report" % (plan - seen, plan)))
    return rows


def parse_kunit(console, ksrc):
    """KUnit suites from the kernel console, parsed with the tree's kunit_parser."""
    sys.path.insert(0, os.path.join(ksrc, "tools", "testing", "kunit"))
    import kunit_parser  # noqa: E402
    from kunit_parser import TestStatus
    with contextlib.redirect_stdout(io.StringIO()) as out:
        # kunit_parser prints through kunit_printer.stdout, a Printer bound to sys.stdout at
        # import time, which redirect_stdout does not reach: point it at the capture too.
        printer = getattr(kunit_parser, "stdout", None)
        if printer is not None and hasattr(printer, "_output"):
            printer._output = out
        test = kunit_parser.parse_run_tests(console.splitlines())
    rows = []

    def walk(t, prefix):
        if t.subtests:
            for s in t.subtests:
                walk(s, prefix + [t.name] if t.name and t.name != "main" else prefix)
            return
        name = "kunit: " + ".".join(prefix + [t.name])
        st = {TestStatus.SUCCESS: "pass", TestStatus.SKIPPED: "skip"}.get(t.status, "fail")
        rows.append((name, st, "" if st != "fail" else t.status.name))
    if test.status == TestStatus.FAILURE_TO_PARSE_TESTS or not test.subtests:
        rows.append(("kunit", "fail", "no KUnit results on the console"))
    else:
        walk(test, [])
    return rows, out.getvalue()


WARN_AT = re.compile(r"WARNING: CPU: \d+ PID: \d+ at (.*)$")


def scan_console(console, timed_out, expected_warn=None):
    """Rows for kernel failure reports on the console.  expected_warn: a regex that every
    WARNING's location line ("WARNING: CPU: n PID: n at <file:line> <function>") must match
    for the warnings to be expected (a test that checks a documented WARN_ON_ONCE); they are
    then one passing row, and any other WARNING still fails the run."""
    rows = []
    lines = console.splitlines()
    if expected_warn:
        at = [m.group(1) for m in map(WARN_AT.search, lines) if m]
        cuts = sum(1 for l in lines if "------------[ cut here ]------------" in l)
        if at and cuts == len(at) and all(re.search(expected_warn, w) for w in at):
            rows.append(("console: expected WARNING", "pass",
                         "%d, each at %s" % (len(at), expected_warn)))
            lines = [l for l in lines if not (WARN_AT.search(l) or "[ cut here ]" in l)]
    for kind, pat in CONSOLE_FAILURES:
        for line in lines:
            if pat.search(line):
                rows.append(("console: " + kind, "fail", line.strip()[:160]))
                break
    if timed_out:
        rows.append(("guest: hang", "fail", "guest did not finish within %s s" % timed_out))
    elif DONE_MARKER not in console:
        rows.append(("guest: crash", "fail", "guest stopped before finishing (panic or reboot)"))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("group")
    ap.add_argument("rundir")
    ap.add_argument("ksrc")
    ap.add_argument("--kunit", action="store_true")
    ap.add_argument("--timed-out", default=None)
    ap.add_argument("--expected-warn", default=None)
    a = ap.parse_args()

    def read(name):
        try:
            with open(os.path.join(a.rundir, name), errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""
    console = read("console.log")
    rows = parse_ktap(read("results.ktap"))
    # A group's host-check (run on the host after the boot) reports in KTAP of its own.
    if os.path.exists(os.path.join(a.rundir, "host.ktap")):
        rows += [("host: " + n, st, det) for n, st, det in parse_ktap(read("host.ktap"))]
    if a.kunit:
        krows, kout = parse_kunit(console, a.ksrc)
        rows += krows
        with open(os.path.join(a.rundir, "kunit.txt"), "w") as f:
            f.write(kout)
    rows += scan_console(console, a.timed_out, a.expected_warn)
    with open(os.path.join(a.rundir, "results.tsv"), "w") as f:
        for name, st, det in rows:
            f.write("%s\t%s\t%s\t%s\n" % (a.group, name, st, det.replace("\t", " ")))
    return 1 if any(st == "fail" for _, st, _ in rows) else 0


if __name__ == "__main__":
    sys.exit(main())

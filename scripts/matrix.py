#!/usr/bin/env python3
"""Three-kernel verdicts for the landed feature groups of a check run: on stock every test of the
group passes (upstream is the reference), on baseline some test fails cleanly (the feature is
absent, and its absence is not a crash). Prints result rows (group, test, status, detail).

Three group.conf keys refine this, each a Python regex searched in the test names:
STOCK_MAY_FAIL tests that may pass or fail on stock: the regression test of a stock race that a
               run hits only sometimes (on full they must pass like every other test)
STOCK_FAILS    tests that must FAIL on stock: a documented difference of ours, or the regression
               test of a 6.1 bug that patches/fixes/ repairs (the row fails if one passes there);
BASELINE_PASSES  tests that must PASS on baseline: a fix's regression test (baseline carries
               patches/fixes/), or a test of something the baseline keeps.
A group with ANY_KERNEL=1 tests nothing the series removes (the harness, upstream suites of code
the series leaves alone): it must pass on baseline as on stock.

Differential groups: a program that prints observation lines ("# obs <case> <what user space
saw>") is compared case by case between the full and the stock run of the same seed; every
difference must be named by a line of tests/<group>/differences ("<python regex><TAB><why ours
is right>", the regex searched in "<case> stock: <line> | full: <line>"), or the row fails."""
import glob
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OBS = re.compile(r"^\s*# obs (\S+) ?(.*)$")


def load(path):
    rows = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                p = line.rstrip("\n").split("\t")
                if len(p) == 4:
                    rows.setdefault(p[0], []).append(p[1:])
    return rows


def observations(run, group):
    """case -> observation, from the group's results channel in RUN (any arch), and the seed."""
    obs, seed = {}, "?"
    for path in glob.glob(os.path.join(run, "*", group, "results.ktap")):
        with open(path, errors="replace") as f:
            for line in f:
                m = OBS.match(line.rstrip("\r\n"))
                if m:
                    obs[m.group(1)] = m.group(2)
        sp = os.path.join(os.path.dirname(path), "seed")
        if os.path.exists(sp):
            seed = open(sp).read().strip()
    return obs, seed


def conf(group, key):
    """The value of KEY="..." in tests/<group>/group.conf, or None."""
    path = os.path.join(TOP, "tests", group, "group.conf")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                m = re.match(r'^%s=(["\']?)(.*)\1\s*$' % key, line.strip())
                if m:
                    return m.group(2)
    return None


def documented(group):
    """(regex, why) of the group's documented differences from stock."""
    rules = []
    path = os.path.join(TOP, "tests", group, "differences")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    pat, _, why = line.rstrip("\n").partition("\t")
                    rules.append((re.compile(pat), why))
    return rules


def differential(run, group):
    """One row: the full kernel's observations against stock's, for the same seed."""
    full, seed = observations(run, group)
    if not full:
        return None
    stock, sseed = observations(os.path.join(run, "stock"), group)
    rules = documented(group)
    undoc, known = [], 0
    # A time-bounded fuzz program may stop early on one kernel: compare the cases both ran.
    both = set(full) & set(stock)
    for case in sorted(both):
        s, f = stock[case], full[case]
        if s == f:
            continue
        text = "%s stock: %s | full: %s" % (case, s, f)
        if any(r.search(text) for r, _ in rules):
            known += 1
        else:
            undoc.append(text)
    with open(os.path.join(run, "%s.differences" % group), "w") as out:
        out.write("\n".join(undoc) + ("\n" if undoc else ""))
    name = "same as stock (seed %s)" % seed
    if not both:
        return (name, "fail", "no case ran on both kernels")
    if seed != sseed:
        return (name, "fail", "stock ran seed %s" % sseed)
    if undoc:
        return (name, "fail", "%d undocumented differences, first: %s" % (len(undoc), undoc[0]))
    return (name, "pass", "%d cases compared, %d documented differences" % (len(both), known))


def main():
    run, groups = sys.argv[1], sys.argv[2:]
    stock = load(os.path.join(run, "stock", "results.tsv"))
    base = load(os.path.join(run, "baseline", "results.tsv"))
    for g in groups:
        sf = conf(g, "STOCK_FAILS")
        sm = conf(g, "STOCK_MAY_FAIL")
        bp = conf(g, "BASELINE_PASSES")
        sf = re.compile(sf) if sf else None
        sm = re.compile(sm) if sm else None
        bp = re.compile(bp) if bp else None
        s = stock.get(g, [])
        maybe = [t for t, _, _ in s if sm and sm.search(t)]
        expect = [t for t, _, _ in s if sf and sf.search(t) and t not in maybe]
        fails = [t for t, st, _ in s if st == "fail" and t not in expect + maybe]
        unexpected = [t for t, st, _ in s if st == "pass" and t in expect]
        ok = s and not fails and not unexpected
        details = []
        if expect:
            details.append("%d tests fail on stock as they must (STOCK_FAILS)" % len(expect))
        if maybe:
            hit = [t for t, st, _ in s if st == "fail" and t in maybe]
            details.append("%d race tests of a stock bug, %d failed on stock this run "
                           "(STOCK_MAY_FAIL)" % (len(maybe), len(hit)))
        detail = "; ".join(details)
        if not s:
            detail = "no results"
        elif fails:
            detail = "failing on stock: " + ", ".join(fails[:5])
        elif unexpected:
            detail = "STOCK_FAILS tests that pass on stock: " + ", ".join(unexpected[:5])
        print("%s\tpasses on stock 6.1\t%s\t%s" % (g, "pass" if ok else "fail", detail))
        b = base.get(g, [])
        if conf(g, "ANY_KERNEL") == "1":
            # Nothing the group tests is removed on baseline: it must pass there too.
            bad = [t for t, st, _ in b if st == "fail"]
            detail = ("no results" if not b else "failing on baseline: " + ", ".join(bad[:5])
                      if bad else "%d results, none failing" % len(b))
            print("%s\tpasses on baseline\t%s\t%s" % (g, "pass" if b and not bad else "fail",
                                                      detail))
            continue
        crash = [t for t, st, _ in b if st == "fail" and t.startswith(("console:", "guest:"))]
        bfail = [t for t, st, _ in b if st == "fail" and not t.startswith(("console:", "guest:"))]
        bmust = [t for t in bfail if bp and bp.search(t)]
        bfail = [t for t in bfail if t not in bmust]
        ok = bool(bfail) and not crash and not bmust
        detail = ("%d tests fail without the feature" % len(bfail)) if ok else (
            "kernel failure on baseline: " + ", ".join(crash) if crash
            else "BASELINE_PASSES tests that fail on baseline: " + ", ".join(bmust[:5]) if bmust
            else "every test passes with the feature removed: the group tests nothing")
        print("%s\tfails on baseline\t%s\t%s" % (g, "pass" if ok else "fail", detail))
        row = differential(run, g)
        if row:
            print("%s\t%s\t%s\t%s" % ((g,) + row))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Three-kernel verdicts for the landed feature groups of a check run: on stock every test of the
group passes (upstream is the reference), on baseline some test fails cleanly (the feature is
absent, and its absence is not a crash). Prints result rows (group, test, status, detail)."""
import os
import sys


def load(path):
    rows = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                p = line.rstrip("\n").split("\t")
                if len(p) == 4:
                    rows.setdefault(p[0], []).append(p[1:])
    return rows


def main():
    run, groups = sys.argv[1], sys.argv[2:]
    stock = load(os.path.join(run, "stock", "results.tsv"))
    base = load(os.path.join(run, "baseline", "results.tsv"))
    for g in groups:
        s = stock.get(g, [])
        fails = [t for t, st, _ in s if st == "fail"]
        ok = s and not fails
        print("%s\tpasses on stock 6.1\t%s\t%s" % (
            g, "pass" if ok else "fail",
            "" if ok else "failing on stock: " + ", ".join(fails[:5]) or "no results"))
        b = base.get(g, [])
        crash = [t for t, st, _ in b if st == "fail" and t.startswith(("console:", "guest:"))]
        bfail = [t for t, st, _ in b if st == "fail" and not t.startswith(("console:", "guest:"))]
        ok = bool(bfail) and not crash
        detail = ("%d tests fail without the feature" % len(bfail)) if ok else (
            "kernel failure on baseline: " + ", ".join(crash) if crash
            else "every test passes with the feature removed: the group tests nothing")
        print("%s\tfails on baseline\t%s\t%s" % (g, "pass" if ok else "fail", detail))


if __name__ == "__main__":
    main()

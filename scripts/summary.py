#!/usr/bin/env python3
"""Print the per-test table of a check run (results.tsv: group, test, status, detail), write it
as JSON beside the TSV, and end with 'N passed, N failed[, N skipped]'. Exit 1 on any failure."""
import json
import os
import sys


def main():
    path, flavour = sys.argv[1], sys.argv[2]
    rows = []
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 4:
                rows.append(dict(zip(("group", "test", "status", "detail"), parts)))
    width = max([len(r["group"]) + len(r["test"]) + 3 for r in rows] + [20])
    mark = {"pass": "ok  ", "fail": "FAIL", "skip": "skip"}
    print("\n%-*s  result  (%s kernel)" % (width, "group / test", flavour))
    for r in rows:
        name = "%s / %s" % (r["group"], r["test"])
        detail = "  " + r["detail"] if r["detail"] and r["status"] != "pass" else ""
        print("%-*s  %s%s" % (width, name, mark.get(r["status"], r["status"]), detail))
    counts = {s: sum(1 for r in rows if r["status"] == s) for s in ("pass", "fail", "skip")}
    with open(os.path.splitext(path)[0] + ".json", "w") as f:
        json.dump({"flavour": flavour, "counts": counts, "tests": rows}, f, indent=1)
    # The failures again, last: a log cut to its tail (CI's) still names them.
    failed = [r for r in rows if r["status"] == "fail"]
    if failed:
        print("\nfailed:")
        for r in failed:
            print("  %s / %s  %s" % (r["group"], r["test"], r["detail"][:300]))
    print("results: %s" % os.path.dirname(os.path.abspath(path)))
    line = "%d passed, %d failed" % (counts["pass"], counts["fail"])
    if counts["skip"]:
        line += ", %d skipped" % counts["skip"]
    print(line)
    return 1 if counts["fail"] or not rows else 0


if __name__ == "__main__":
    sys.exit(main())

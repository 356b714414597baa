#!/usr/bin/env python3
"""Report of a bench.sh run: one table per benchmark, kernel A (the reference) against kernel B,
written also as DIR/bench.json and DIR/bench.tsv.

Input (written by bench.sh into DIR):
  runs.tsv    one line per boot: benchmark, round, kernel (A/B), flavour, run dir, status, seconds
  limits.tsv  one line per benchmark: name, MAX_RATIO, NOISE (percent), GOALS
              ("case:max-ratio ...")
and in each run dir the results channel, results.ktap, where the benchmark printed one line per
case (indented under the KTAP line of its program):
  # BENCH <case> <value> ns [key=value ...]

Per case and kernel, the figure is the median over the rounds of each round's value (itself a
median over repetitions inside the guest); the spread is (max - min) / median over the rounds.
A case passes when B/A <= limit + tolerance, where limit is the benchmark's MAX_RATIO or the
case's goal, whichever is lower, and tolerance is the mean of the two spreads (the noise the
rounds themselves showed) but at least the benchmark's NOISE (the boot-to-boot noise known from
runs of a kernel against itself).  A pass that needed the tolerance says so ("ok, noise").  Exit status 1 when a case misses its limit, a run failed or a figure
is missing, else 0.

Usage: bench-report.py DIR
"""
import json
import os
import re
import statistics
import sys

BENCH_LINE = re.compile(r"^\s*# BENCH (\S+) (\d+(?:\.\d+)?) ns\b(.*)$")


def read_tsv(path):
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


def parse_results(path):
    """{case: {"value": ns, "extra": {key: value}}} from one run's results.ktap."""
    out = {}
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return out
    for line in lines:
        m = BENCH_LINE.match(line)
        if not m:
            continue
        extra = dict(kv.split("=", 1) for kv in m.group(3).split() if "=" in kv)
        out[m.group(1)] = {"value": float(m.group(2)), "extra": extra}
    return out


def spread(values):
    if len(values) < 2:
        return 0.0
    med = statistics.median(values)
    return (max(values) - min(values)) / med if med else 0.0


def fmt_ns(v):
    return "-" if v is None else "{:,}".format(int(round(v)))


def pct(v):
    return "-" if v is None else "%.2f%%" % (100 * v)


def main():
    top = sys.argv[1]
    runs = read_tsv(os.path.join(top, "runs.tsv"))
    limits = {row[0]: (float(row[1]), float(row[2]) / 100, row[3] if len(row) > 3 else "")
              for row in read_tsv(os.path.join(top, "limits.tsv"))}
    rounds = max(int(r[1]) for r in runs) if runs else 0
    flavours = {}
    report = {"dir": os.path.abspath(top), "rounds": rounds, "benchmarks": [], "ok": True}
    failures = []

    for bench in limits:
        max_ratio, noise, goals_s = limits[bench]
        goals = {}
        for g in goals_s.split():
            case, _, lim = g.rpartition(":")
            goals[case] = float(lim)
        brun = [r for r in runs if r[0] == bench]
        # values[case][slot] = [(round, value, extra), ...]
        values = {}
        order = []
        run_rows = []
        for b, rnd, slot, flav, rdir, rc, secs in brun:
            flavours[slot] = flav
            res = parse_results(os.path.join(rdir, "results.ktap"))
            run_rows.append({"round": int(rnd), "kernel": slot, "flavour": flav, "dir": rdir,
                             "status": int(rc), "seconds": int(secs), "cases": len(res)})
            if rc != "0":
                failures.append("%s: round %s on %s (%s) failed, see %s/results.tsv"
                                % (bench, rnd, slot, flav, rdir))
            for case, v in res.items():
                if case not in values:
                    values[case] = {"A": [], "B": []}
                    order.append(case)
                values[case][slot].append((int(rnd), v["value"], v["extra"]))
        for g in goals:
            if g not in values:
                failures.append("%s: goal case %s has no figures" % (bench, g))

        la, lb = flavours.get("A", "A"), flavours.get("B", "B")
        cases = []
        for case in order:
            a = [x[1] for x in sorted(values[case]["A"])]
            b = [x[1] for x in sorted(values[case]["B"])]
            ra = {x[0]: x[1] for x in values[case]["A"]}
            rb = {x[0]: x[1] for x in values[case]["B"]}
            round_ratios = [rb[r] / ra[r] for r in sorted(ra) if r in rb and ra[r]]
            ma = statistics.median(a) if a else None
            mb = statistics.median(b) if b else None
            sa, sb = spread(a), spread(b)
            ratio = mb / ma if ma and mb is not None else None
            limit = min(max_ratio, goals.get(case, max_ratio))
            tol = max((sa + sb) / 2, noise)
            if len(a) < rounds or len(b) < rounds:
                verdict = "MISSING"
            elif ratio > limit + tol:
                verdict = "GOAL MISSED" if ratio <= max_ratio + tol else "OVER LIMIT"
            elif ratio > limit:
                verdict = "ok, noise"
            else:
                verdict = "ok"
            if not verdict.startswith("ok"):
                failures.append("%s: %s: %s (B/A %s, limit %.2f + %.2f%% noise)"
                                % (bench, case, verdict,
                                   "-" if ratio is None else "%.4f" % ratio, limit, 100 * tol))
            cases.append({
                "case": case, "A": {"median_ns": ma, "rounds_ns": a, "spread": sa, "n": len(a)},
                "B": {"median_ns": mb, "rounds_ns": b, "spread": sb, "n": len(b)},
                "ratio": ratio, "round_ratios": round_ratios, "limit": limit,
                "goal": goals.get(case), "tolerance": tol, "verdict": verdict,
                "reps_in_guest": {s: [x[2].get("reps") for x in sorted(values[case][s])]
                                  for s in ("A", "B")},
            })

        # The table.
        same = la == lb
        ha = ("A %s" % la) if same else la
        hb = ("B %s" % lb) if same else lb
        hr = "B/A" if same else "%s/%s" % (lb, la)
        print()
        print("%s: %s (A) vs %s (B), %d rounds, guest ns (icount: instructions, see "
              "docs/benchmarks.md)" % (bench, la, lb, rounds))
        w = max([len(c["case"]) for c in cases] + [4])
        head = ("%-*s %14s %14s %10s %5s %9s %9s %15s %10s  %s"
                % (w, "case", ha + " ns", hb + " ns", hr, "n", "spread A", "spread B",
                   "round ratios", "limit", "verdict"))
        print(head)
        print("-" * len(head))
        for c in cases:
            rr = c["round_ratios"]
            rrs = "%.4f-%.4f" % (min(rr), max(rr)) if rr else "-"
            lim = "%.2f%s" % (c["limit"], " goal" if c["goal"] is not None else "")
            print("%-*s %14s %14s %10s %5s %9s %9s %15s %10s  %s"
                  % (w, c["case"], fmt_ns(c["A"]["median_ns"]), fmt_ns(c["B"]["median_ns"]),
                     "-" if c["ratio"] is None else "%.4f" % c["ratio"],
                     "%d/%d" % (c["A"]["n"], c["B"]["n"]), pct(c["A"]["spread"]),
                     pct(c["B"]["spread"]), rrs, lim, c["verdict"]))
        report["benchmarks"].append({
            "name": bench, "kernels": {"A": la, "B": lb}, "max_ratio": max_ratio,
            "noise": noise,
            "goals": goals, "runs": run_rows, "cases": cases})

    report["flavours"] = flavours
    report["failures"] = failures
    report["ok"] = not failures
    with open(os.path.join(top, "bench.json"), "w") as f:
        json.dump(report, f, indent=1)
    with open(os.path.join(top, "bench.tsv"), "w") as f:
        f.write("\t".join(["benchmark", "case", "A_flavour", "A_median_ns", "B_flavour",
                           "B_median_ns", "ratio_B_A", "A_n", "B_n", "A_spread_pct",
                           "B_spread_pct", "round_ratio_min", "round_ratio_max", "limit",
                           "tolerance_pct", "verdict"]) + "\n")
        for b in report["benchmarks"]:
            for c in b["cases"]:
                rr = c["round_ratios"]
                f.write("\t".join(str(x) for x in [
                    b["name"], c["case"], b["kernels"]["A"],
                    "" if c["A"]["median_ns"] is None else "%.0f" % c["A"]["median_ns"],
                    b["kernels"]["B"],
                    "" if c["B"]["median_ns"] is None else "%.0f" % c["B"]["median_ns"],
                    "" if c["ratio"] is None else "%.4f" % c["ratio"], c["A"]["n"], c["B"]["n"],
                    "%.3f" % (100 * c["A"]["spread"]), "%.3f" % (100 * c["B"]["spread"]),
                    "%.4f" % min(rr) if rr else "", "%.4f" % max(rr) if rr else "",
                    "%.2f" % c["limit"], "%.3f" % (100 * c["tolerance"]), c["verdict"]]) + "\n")
    print()
    for msg in failures:
        print("bench: " + msg)
    print("bench: %s; %s/bench.json, %s/bench.tsv"
          % ("all cases within their limits" if not failures
             else "%d problem(s)" % len(failures), top, top))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())

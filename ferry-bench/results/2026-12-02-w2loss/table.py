#!/usr/bin/env python3
"""Tables for ab.sh's output: per side and metric, the median over its runs [min .. max], and each
side's median over the first side's (the reference).  table.py OUT ref other ... [--metrics a,b]"""
import glob, json, os, re, statistics, sys

METRICS = {
    "w2": [f"w{w}.{m}" for m in ("calls_per_s", "cpu_us_per_call", "alloc_bytes_per_call")
           for w in (1, 8, 64, 256)] + ["w64_steady.calls_per_s"],
    "w1": ["median_us", "p90_us", "p99_us", "calls_per_s"],
    "w8": [f"{m}.{q}_us" for m in ("sync", "async") for q in ("median", "p90", "p99", "max")]
          + ["large.GB_per_s"],
    "w3": [f"{z}.{q}" for z in ("64KiB", "1MiB", "16MiB", "128MiB") for q in ("median_us", "p90_us", "GB_per_s")],
}
FILES = {"w2": "w2_async_throughput.json", "w1": "w1_latency.json",
         "w8": "w8_small_behind_large.json", "w3": "w3_tensor_echo.json"}
HIGHER_BETTER = {"calls_per_s", "GB_per_s"}


def runs(out, side, w):
    vals = []
    for d in sorted(glob.glob(f"{out}/{side}-{w}-*")):
        f = os.path.join(d, FILES[w])
        if os.path.isdir(d) and os.path.exists(f):
            s = json.load(open(f))["summary"]["java"]
            row = {k: v["median"] for k, v in s.items()}
            # FERRY_W2_EXTRA_ROUNDS: the same processes' rate at window 64 after the four windows
            steady = re.search(r"W2 extra rounds: .* ([0-9]+) calls/s", open(d + ".log").read())
            if steady:
                row["w64_steady.calls_per_s"] = float(steady.group(1))
            vals.append(row)
    return vals


def loads(out):
    ls = [float(l.split(" load ")[1].split()[0]) for l in open(f"{out}/progress.log") if " load " in l]
    return min(ls), statistics.median(ls), max(ls)


def main():
    out, sides = sys.argv[1], sys.argv[2:]
    lo, med, hi = loads(out)
    print(f"1-minute load average at the runs' starts: median {med:.1f} [{lo:.1f} .. {hi:.1f}]\n")
    for w in ("w8", "w3", "w2", "w1"):
        data = {s: runs(out, s, w) for s in sides}
        if not all(data.values()):
            continue
        head = " | ".join(f"{s} ({len(data[s])} runs)" for s in sides)
        ratios = " | ".join(f"{s} / {sides[0]}" for s in sides[1:])
        print(f"### {w}\n\n| metric | {head} | {ratios} |")
        print("|---" * (1 + 2 * len(sides) - 1) + "|")
        for m in METRICS[w]:
            cells, meds = [], []
            for s in sides:
                v = [r[m] for r in data[s] if m in r]
                if not v:
                    break
                meds.append(statistics.median(v))
                fmt = "{:,.0f}" if "calls" in m else "{:.2f}"
                cells.append(f"{fmt.format(meds[-1])} [{fmt.format(min(v))} .. {fmt.format(max(v))}]")
            if len(meds) < len(sides):
                continue
            rs = []
            for x in meds[1:]:
                r = x / meds[0]
                better = (r > 1) == any(m.endswith(h) for h in HIGHER_BETTER)
                rs.append(f"{r:.2f}" + ("" if abs(r - 1) < 0.1 else (" (better)" if better else " (worse)")))
            print(f"| {m} | " + " | ".join(cells) + " | " + " | ".join(rs) + " |")
        print()


main()

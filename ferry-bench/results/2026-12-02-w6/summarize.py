"""Medians of the sitting's W6 runs (Ferry's and PyTorch's over TCP), the demo's and the probe's.

Run: python3 summarize.py /tmp/w6sitting
"""
import glob
import json
import re
import statistics
import sys

S = sys.argv[1]
ferry, torch = {}, {}
for f in sorted(glob.glob(S + "/ferry-*/w6_init_shutdown.json")):
    for run in json.load(open(f))["runs"].get("java", []):
        for key, value in run.items():
            ferry.setdefault(key, []).append(value)
for f in sorted(glob.glob(S + "/pytorch/w6-*.json")):
    for world, runs in json.load(open(f))["runs"].get("tcp", {}).items():
        for run in runs:
            for key, value in run.items():
                torch.setdefault(world + "." + key, []).append(value)


def med(values):
    return "%.3f" % statistics.median(values) if values else "-"


print("| metric | Ferry (median, n) | PyTorch TCP (median, n) | Ferry / PyTorch |")
print("|---|---|---|---|")
for key in sorted(set(ferry) | set(torch), key=lambda k: (int(re.sub(r"\D", "", k.split(".")[0]) or 0), k)):
    f, t = ferry.get(key, []), torch.get(key, [])
    ratio = "%.2f" % (statistics.median(f) / statistics.median(t)) if f and t and statistics.median(t) else ""
    print("| %s | %s (%d) | %s (%d) | %s |" % (key, med(f), len(f), med(t), len(t), ratio))

demo = []
for f in sorted(glob.glob(S + "/demo-[0-9]*.log")):
    m = re.search(r"demo wall ([\d.]+) s", open(f).read())
    if m:
        demo.append(float(m.group(1)))
print("\ndemo wall s:", demo, "median", med(demo))

probe = {}
for f in sorted(glob.glob(S + "/probe-[0-9]*.log")):
    for line in open(f):
        for name, value in re.findall(r"(init|cpu|first call|first record|first error|2nd error|2nd record) ([\d.]+) ms", line):
            probe.setdefault(name, []).append(float(value))
print("probe (rank 0, ms):", {k: (v, med(v)) for k, v in probe.items()})

for variant in ("before", "after"):
    ab = {}
    for f in sorted(glob.glob(S + "/ab-%s-[0-9]*.log" % variant)):
        for line in open(f):
            for name, value in re.findall(r"(init|first call|first record|first error|2nd error) ([\d.]+) ms", line):
                ab.setdefault(name, []).append(float(value))
    if ab:
        print("A/B %s (rank 0, ms):" % variant, {k: (v, med(v)) for k, v in ab.items()})

"""Medians of the sitting's runs: W6 init (the plain-JDK floor, PyTorch over TCP, Ferry), the demo
and its floor, and the cold worker's first calls in three builds of ferry-rpc.

Run: python3 summarize.py /tmp/startup-sitting   (or raw/, the sitting's files as kept here)
"""
import glob
import json
import re
import statistics
import sys

S = sys.argv[1]


def med(values):
    return "%.3f" % statistics.median(values) if values else "-"


floor, ferry, torch = {}, {}, {}
for f in sorted(glob.glob(S + "/floor-[0-9]*.log")):
    for line in open(f):
        m = re.match(r"floor world=(\d+) run=\d+ init_s=([\d.]+) ready_s=([\d.]+) init_cpu_s_per_worker=([\d.]+)", line)
        if m:
            w = m.group(1)
            floor.setdefault("world%s.init_s" % w, []).append(float(m.group(2)))
            floor.setdefault("world%s.ready_s" % w, []).append(float(m.group(3)))
            floor.setdefault("world%s.init_cpu_s_per_worker" % w, []).append(float(m.group(4)))


def collect(into, prefix, run):
    """Adds each metric of one run (a dict) to the lists of {into}, keyed prefix + name."""
    for key, value in run.items():
        into.setdefault(prefix + key, []).append(value)


for f in sorted(glob.glob(S + "/ferry-[0-9]*/w6_init_shutdown.json")):
    [collect(ferry, "", run) for run in json.load(open(f))["runs"].get("java", [])]
for f in sorted(glob.glob(S + "/pytorch/w6-*.json")):
    [collect(torch, world + ".", run) for world, runs in json.load(open(f))["runs"].get("tcp", {}).items() for run in runs]

print("| metric | floor (JDK alone) | PyTorch TCP | Ferry | Ferry / floor | Ferry / PyTorch |")
print("|---|---|---|---|---|---|")
for world in (2, 4, 8):
    for metric in ("init_s", "ready_s", "init_cpu_s_per_worker"):
        key = "world%d.%s" % (world, metric)
        fl, t, fe = floor.get(key, []), torch.get(key, []), ferry.get(key, [])
        r1 = "%.1f" % (statistics.median(fe) / statistics.median(fl)) if fe and fl and statistics.median(fl) else ""
        r2 = "%.2f" % (statistics.median(fe) / statistics.median(t)) if fe and t and statistics.median(t) else ""
        print("| %s | %s (%d) | %s (%d) | %s (%d) | %s | %s |" % (key, med(fl), len(fl), med(t), len(t), med(fe), len(fe), r1, r2))

for name, pattern in (("demo", r"demo wall ([\d.]+) s"), ("demo floor", r"floor wall ([\d.]+) s")):
    values = []
    for f in sorted(glob.glob(S + "/%s-[0-9]*.log" % name.replace(" ", "-"))):
        m = re.search(pattern, open(f).read())
        if m:
            values.append(float(m.group(1)))
    print("\n%s wall s: %s median %s" % (name, values, med(values)))

print()
for variant in ("sync", "async", "nocg"):
    ab = {}
    for f in sorted(glob.glob(S + "/ab-%s-[0-9]*.log" % variant)):
        for line in open(f):
            for name, value in re.findall(r"(init|first call|first record|first error|2nd error|2nd record) ([\d.]+) ms", line):
                ab.setdefault(name, []).append(float(value))
    if ab:
        print("%s (rank 0, ms):" % variant)
        for name, values in ab.items():
            print("  %-13s %s median %s" % (name, values, med(values)))

for variant in ("sync", "async", "nocg"):
    values = []
    for f in sorted(glob.glob(S + "/demo-ab-%s-[0-9]*.log" % variant)):
        m = re.search(r"demo wall ([\d.]+) s", open(f).read())
        if m:
            values.append(float(m.group(1)))
    if values:
        print("demo %s wall s: %s median %s" % (variant, values, med(values)))

for variant in ("sync", "async", "nocg"):
    point, samples = [], []
    for f in sorted(glob.glob(S + "/rcc-%s-[0-9]*.log" % variant)):
        m = re.search(r"point round trip (\d+) ns, 100 samples round trip (\d+) ns", open(f).read())
        if m:
            point.append(float(m.group(1)))
            samples.append(float(m.group(2)))
    if point:
        print("codec %s: point round trip ns %s median %s; 100 samples ns %s median %s" % (variant, point, med(point), samples, med(samples)))

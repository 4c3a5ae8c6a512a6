#!/usr/bin/env python3
"""CPU seconds of the worker JVMs by thread kind, in total and per half second, from profile.sh perf's
output: perfthreads.py OUT name (reads OUT/name.perf.data through `perf script`, OUT/name-rec.pids)."""
import collections, re, subprocess, sys

out, name = sys.argv[1], sys.argv[2]
pids = set(open(f"{out}/{name}-rec.pids").read().split())
script = subprocess.run(["perf", "script", "-i", f"{out}/{name}.perf.data", "-F", "pid,tid,comm,time"],
                        capture_output=True, text=True).stdout
total, bins, t0 = collections.Counter(), collections.defaultdict(collections.Counter), None
for line in script.splitlines():
    m = re.match(r"\s*(.+?)\s+(\d+)/(\d+)\s+([\d.]+):", line)
    if not m or m.group(2) not in pids:
        continue
    comm, pid, t = m.group(1), m.group(2), float(m.group(4))
    t0 = t if t0 is None else t0
    total[(pid, re.sub(r"[-#\d ]+$", "", comm))] += 1
    bins[int((t - t0) / 0.5)]["JIT" if "Compiler" in comm else "rest"] += 1
for (pid, kind), n in sorted(total.items(), key=lambda x: -x[1])[:16]:
    print(f"{pid} {kind:20s} {n / 999:.2f} s")
for b in sorted(bins):
    print(f"{b * 0.5:4.1f} s: compiler threads {bins[b]['JIT']:4d} samples, other threads {bins[b]['rest']:4d}")

"""Medians over the runs of each side in data/runs-N.txt (measure.sh's output), and new / base.

Usage: python3 aggregate.py data/runs-2.txt
Also the geometric mean of the per-round ratios taken apart by which side ran first, since the
second run of a pair tended to be the slower one on the loaded machine."""
import math
import re
import statistics
import sys

runs = []  # (side, {metric: value}), one per JVM: a '# side time load' line starts each
for line in open(sys.argv[1]):
    if line.startswith('#'):
        runs.append((line.split()[1], {}))
        continue
    side, *fields = line.split()
    name = next((f for f in fields if '=' not in f), None)
    for key, value in (f.split('=') for f in fields if '=' in f):
        runs[-1][1][(name + '.' if name else '') + key] = float(value)

metrics = sorted({k for _, m in runs for k in m})
print('| metric | base median | new median | new / base | base-first rounds | new-first rounds |')
print('|---|---|---|---|---|---|')
for metric in metrics:
    base = [m[metric] for s, m in runs if s == 'base' and metric in m]
    new = [m[metric] for s, m in runs if s == 'new' and metric in m]
    firsts = {'base': [], 'new': []}
    for i in range(0, len(runs) - 1, 2):
        (s1, m1), (s2, m2) = runs[i], runs[i + 1]
        ratio = (m1 if s1 == 'new' else m2)[metric] / (m1 if s1 == 'base' else m2)[metric]
        firsts[s1].append(ratio)
    geo = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float('nan')
    print(f'| {metric} | {statistics.median(base):,.0f} | {statistics.median(new):,.0f} | '
          f'{statistics.median(new) / statistics.median(base):.3f} | {geo(firsts["base"]):.3f} | {geo(firsts["new"]):.3f} |')

#!/usr/bin/env python3
"""Medians over the rounds of measure.sh (each run's value), [min .. max], and new / base."""
import json, statistics, sys, pathlib

# a sitting's directory: measure.sh's output (<side>-<round>/w3_tensor_echo.json) or data/<sitting> (<side>-<round>.json)
out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else '/tmp/framemem-ab/out')
metrics = [f'{s}.{m}' for s in ('1MiB', '16MiB', '128MiB') for m in ('median_us', 'p90_us', 'array_median_us')]
values = {side: {m: [] for m in metrics} for side in ('base', 'new')}
for side in values:
    for run in sorted(list(out.glob(f'{side}-[0-9]*/w3_tensor_echo.json')) + list(out.glob(f'{side}-[0-9]*.json'))):
        summary = json.loads(run.read_text())['summary']['java']
        for m in metrics:
            if m in summary:
                values[side][m].append(summary[m]['median'])
print('| metric | base 59ad477 | new 4541da0 | new / base |')
print('|---|---|---|---|')
for m in metrics:
    b, n = values['base'][m], values['new'][m]
    if not b or not n:
        continue
    mb, mn = statistics.median(b), statistics.median(n)
    print(f'| {m} | {mb:,.0f} [{min(b):,.0f} .. {max(b):,.0f}] | {mn:,.0f} [{min(n):,.0f} .. {max(n):,.0f}] '
          f'| {mn / mb:.2f} |')
print(f"runs: base {len(values['base'][metrics[0]])}, new {len(values['new'][metrics[0]])}")

"""Tables of issue 24's A/B sitting: per workload and metric, the median over the rounds of each
side's run (each run is one `--repeats 1`, so its summary median is that run's value), the range,
and new / base. Usage: python3 aggregate.py [OUT_DIR] (measure.sh's $S; default: data/ here). report.md is its output."""
import glob, json, os, statistics, sys

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data')
METRICS = {
    'w1': ['median_us', 'p90_us', 'p99_us', 'calls_per_s', 'idle_settled_cpu_pct_rank0', 'idle_settled_cpu_pct_rank1'],
    'w2': ['w1.calls_per_s', 'w8.calls_per_s', 'w64.calls_per_s', 'w256.calls_per_s'],
    'w3': [f'{s}.{m}' for s in ('64KiB', '1MiB', '16MiB', '128MiB') for m in ('median_us', 'p90_us', 'GB_per_s')],
    'w4': None,
    'w8': None,
}
LOWER_IS_BETTER = ('_us', '_ms', '_mib')  # and idle CPU; everything else (rates) is better higher


def values(side, config, w, rounds='[0-9]*'):
    runs = []
    for f in sorted(glob.glob(f'{out}/{side}-{config}-{w}-{rounds}/*.json')):
        d = json.load(open(f))
        runs.append({k: v['median'] for k, v in d['summary']['java'].items() if isinstance(v, dict) and 'median' in v})
    return runs


def row(name, base, new):
    if not base or not new:
        return None
    b, n = statistics.median(base), statistics.median(new)
    ratio = n / b if b else float('nan')
    better = ratio < 1 if name.endswith(LOWER_IS_BETTER) or 'cpu_pct' in name else ratio > 1
    return (f'| {name} | {b:,.2f} [{min(base):,.2f} .. {max(base):,.2f}] | {n:,.2f} [{min(new):,.2f} .. {max(new):,.2f}]'
            f' | {ratio:.2f} {"(better)" if better and abs(ratio - 1) > 0.1 else "(worse)" if abs(ratio - 1) > 0.1 else ""} |')


for config, w in [('uds', 'w1'), ('tcp', 'w1'), ('uds', 'w2'), ('uds', 'w3'), ('uds', 'w4'), ('uds', 'w8'), ('tcp', 'w8')]:
    base, new = values('base', config, w) or values('base8', config, w), values('new', config, w)
    print(f'\n### {w} ({config}): {len(base)} base runs, {len(new)} new runs\n')
    print('| metric | base 20d5290 (median [min .. max]) | new | new / base |')
    print('|---|---|---|---|')
    keys = METRICS[w] or sorted(set().union(*[r.keys() for r in base + new])) if base + new else []
    for k in keys:
        r = row(k, [x[k] for x in base if k in x], [x[k] for x in new if k in x])
        if r:
            print(r)

# measure-pre.sh: main just before issue 24's transport work (d145596) against new.
for w in ('w1', 'w2'):
    pre, new = values('pre', 'uds', w, 'pre[0-9]*'), values('new', 'uds', w, 'pre[0-9]*')
    if not pre:
        continue
    print(f'\n### {w} (uds), pre d145596 against new: {len(pre)} and {len(new)} runs\n')
    print('| metric | pre d145596 (median [min .. max]) | new | new / pre |')
    print('|---|---|---|---|')
    for k in METRICS[w]:
        r = row(k, [x[k] for x in pre if k in x], [x[k] for x in new if k in x])
        if r:
            print(r)

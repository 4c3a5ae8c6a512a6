"""Tables of the sitting: per workload and side, median [min .. max] over the timed runs (r*),
and each median's ratio to base's. usage: python3 aggregate.py raw"""
import glob, json, os, statistics, sys

d = sys.argv[1]
KEYS = {
    'w5': ['dist.steps_per_s', 'dist.step_median_ms', 'dist.step_p90_ms', 'local.step_median_ms',
           'dist.cpu_ms_per_step_rank0', 'dist.jit_ms_per_step_rank0', 'dist.jit_ms_per_step_rank1'],
    'w1': ['median_us', 'p90_us', 'p99_us', 'idle_cpu_pct_rank0', 'idle_cpu_pct_rank1'],
}
KEYS['w5heavy'] = KEYS['w5']
ORDER = ['base', 'ob', 'nice', 'niceob', 'pytorch']


def runs(side_dir, mode):
    out = []
    for f in sorted(glob.glob(f'{side_dir}/r*/*.json')):
        j = json.load(open(f))
        load = j.get('env', {}).get('loadavg_start')
        for r in j['runs'].get(mode, []):
            out.append(dict(r, **({'load_1min_at_start': float(load[0])} if load else {})))
    return out


for w, keys in KEYS.items():
    sides = [s for s in ORDER if os.path.isdir(f'{d}/{w}/{s}')]
    data = {s: runs(f'{d}/{w}/{s}', 'default' if s == 'pytorch' else 'java') for s in sides}
    data = {s: rs for s, rs in data.items() if rs}
    if not data:
        continue
    print(f'\n### {w}\n')
    print('| metric | ' + ' | '.join(f'{s} (n={len(rs)})' for s, rs in data.items()) + ' |')
    print('|---|' + '---|' * len(data))
    for k in keys + ['load_1min_at_start']:
        base = [r[k] for r in data.get('base', []) if k in r]
        cells = []
        for s, rs in data.items():
            vals = [r[k] for r in rs if k in r]
            if not vals:
                cells.append('–')
                continue
            cell = '%.3g [%.3g .. %.3g]' % (statistics.median(vals), min(vals), max(vals))
            if base and s != 'base' and k != 'load_1min_at_start':
                cell += ' (%.2f×)' % (statistics.median(vals) / statistics.median(base))
            cells.append(cell)
        print(f'| {k} | ' + ' | '.join(cells) + ' |')

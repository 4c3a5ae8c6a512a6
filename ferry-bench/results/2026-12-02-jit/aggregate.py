"""Tables of the sitting: per workload and variant, median [min .. max] over the timed runs (r*),
and each median's ratio to base's. usage: python3 aggregate.py DIR (round.sh's OUT)."""
import glob, json, os, statistics, sys

d = sys.argv[1]
WORKLOADS = {
    'w5': ('w5_dist_autograd.json', ['dist.steps_per_s', 'dist.step_median_ms', 'dist.step_p90_ms',
                                     'local.step_median_ms', 'dist.cpu_ms_per_step_rank0',
                                     'dist.jit_ms_per_step_rank0', 'dist.jit_ms_per_step_rank1']),
    'w5long': ('w5_long.json', ['dist.steps_per_s', 'dist.step_median_ms', 'dist.step_p90_ms',
                                 'local.step_median_ms', 'dist.jit_ms_per_step_rank0']),
    'w3': ('w3_tensor_echo.json', ['64KiB.median_us', '64KiB.p90_us', '1KiB.median_us', '1KiB.p90_us',
                                   '1MiB.median_us', '1MiB.p90_us', '16MiB.GB_per_s', '128MiB.GB_per_s']),
    'w6': ('w6_init_shutdown.json', ['world4.init_s', 'world2.init_s', 'world8.init_s',
                                     'world4.init_cpu_s_per_worker', 'world4.init_jit_ms_per_worker']),
    'w2': ('w2_async_throughput.json', ['w1.calls_per_s', 'w8.calls_per_s', 'w64.calls_per_s', 'w256.calls_per_s']),
    'w1': ('w1_latency.json', ['median_us', 'p90_us', 'p99_us', 'idle_cpu_pct_rank0', 'idle_cpu_pct_rank1']),
}


def fmt(vals):
    return '%.3g [%.3g .. %.3g]' % (statistics.median(vals), min(vals), max(vals))


def runs(pattern, mode='java'):
    out = []
    for f in sorted(glob.glob(pattern)):
        j = json.load(open(f))
        load = j.get('env', {}).get('loadavg_start')
        for r in j['runs'].get(mode, []):
            out.append(dict(r, **({'load_1min_at_start': float(load[0])} if load else {})))
    return out


for w, (fname, keys) in WORKLOADS.items():
    variants = sorted(os.path.basename(v) for v in glob.glob(f'{d}/{w}/*'))
    if not variants:
        continue
    variants.sort(key=lambda v: (v != 'base', v))
    data = {v: runs(f'{d}/{w}/{v}/r*/{fname}') for v in variants}
    data = {v: rs for v, rs in data.items() if rs}
    if not data:
        continue
    if w == 'w5' and glob.glob(f'{d}/pytorch/w5-r*.json'):
        data['pytorch-default'] = runs(f'{d}/pytorch/w5-r*.json', 'default')
    print(f'\n### {w}\n')
    cols = list(data)
    print('| metric | ' + ' | '.join(f'{c} (n={len(data[c])})' for c in cols) + ' |')
    print('|---|' + '---|' * len(cols))
    for k in keys + ['load_1min_at_start']:
        cells = []
        base = [r[k] for r in data.get('base', []) if k in r]
        for c in cols:
            vals = [r[k] for r in data[c] if k in r]
            if not vals:
                cells.append('–')
                continue
            cell = fmt(vals)
            if base and c != 'base' and k != 'load_1min_at_start':
                cell += ' (%.2f×)' % (statistics.median(vals) / statistics.median(base))
            cells.append(cell)
        print(f'| {k} | ' + ' | '.join(cells) + ' |')

"""Aggregates a sitting (sitting.sh's folder): medians [min .. max] over runs, per workload and side."""
import json, glob, os, statistics, sys
d = sys.argv[1]
def runs(path_glob, mode):
    out = []
    for f in sorted(glob.glob(path_glob)):
        j = json.load(open(f))
        out += j['runs'].get(mode, [])
    return out
def fmt(vals):
    if not vals: return 'n/a'
    return '%.3g [%.3g .. %.3g] n=%d' % (statistics.median(vals), min(vals), max(vals), len(vals))
keys = ['dist.steps_per_s', 'dist.step_median_ms', 'dist.step_p90_ms', 'local.step_median_ms', 'local.steps_per_s',
        'dist.cpu_ms_per_step_rank0', 'dist.jit_ms_per_step_rank0', 'dist.jit_ms_per_step_rank1',
        'dist.alloc_kib_per_step_rank0', 'dist.alloc_kib_per_step_rank1', 'dist.loss_last']
names = {'w5': 'w5_dist_autograd.json', 'w5long': 'w5_long.json', 'w5heavy': 'w5_heavy.json'}
summary = {}
for w, fname in names.items():
    sides = {}
    for fd in sorted(glob.glob(f'{d}/ferry-*')):
        sides[os.path.basename(fd)] = runs(f'{fd}/{w}-r*/{fname}', 'java')
    for mode in ('default', 'tcp'):
        r = runs(f'{d}/pytorch/{w}-r*.json', mode)
        if r: sides['pytorch_' + mode] = r
    print(f'## {w}')
    for side, rs in sides.items():
        print(f'  {side}')
        for k in keys:
            vals = [x[k] for x in rs if k in x]
            if vals: print(f'    {k:32s} {fmt(vals)}')
        if rs:
            ov = [x['dist.step_median_ms'] - x['local.step_median_ms'] for x in rs]
            print(f'    {"overhead_ms (dist-local median)":32s} {fmt(ov)}')
        summary[(w, side)] = rs
    p = summary.get((w, 'pytorch_default'))
    for side in [k for k in sides if k.startswith('ferry-')]:
      f = summary.get((w, side))
      if f and p:
        print('  ' + side)
        med = lambda rs, k: statistics.median([x[k] for x in rs])
        print('  ratio steps/s ferry / pytorch default: %.2f' % (med(f, 'dist.steps_per_s') / med(p, 'dist.steps_per_s')))
        fo = statistics.median([x['dist.step_median_ms'] - x['local.step_median_ms'] for x in f])
        po = statistics.median([x['dist.step_median_ms'] - x['local.step_median_ms'] for x in p])
        print('  overhead ferry %.3f ms, pytorch default %.3f ms: ratio %.2f' % (fo, po, fo / po))
        print('  ferry p90 / own median: %.2f' % (med(f, 'dist.step_p90_ms') / med(f, 'dist.step_median_ms')))
for fl in ('openblas_c', 'plain_java'):
    p = f'{d}/floor/{fl}.jsonl'
    if os.path.exists(p):
        print(fl, [json.loads(l) for l in open(p)])

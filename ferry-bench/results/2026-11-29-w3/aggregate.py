import json,glob,statistics,sys
d=sys.argv[1]; groups=sys.argv[2:] or ['branch','base']
keys=['1KiB.median_us','64KiB.median_us','1MiB.GB_per_s','16MiB.GB_per_s','16MiB.median_us','16MiB.p90_us','128MiB.GB_per_s','128MiB.median_us','16MiB.array_GB_per_s','128MiB.array_GB_per_s','1MiB.array_GB_per_s']
res={}
for g in groups:
    runs=[]
    for f in sorted(glob.glob(f'{d}/{g}-*/w3_tensor_echo.json')):
        j=json.load(open(f)); runs.append(j['runs']['java'][0] if j['runs']['java'] else {})
    res[g]=runs
print('| metric | '+' | '.join(f'{g} (n={len(res[g])})' for g in groups)+' |')
print('|---|'+'---|'*len(groups))
for k in keys:
    cells=[]
    for g in groups:
        v=[r[k] for r in res[g] if k in r]
        if not v: cells.append('-'); continue
        cells.append('%.3g [%.3g .. %.3g]'%(statistics.median(v),min(v),max(v)))
    print(f'| {k} | '+' | '.join(cells)+' |')
for g in groups:
    print(g,'16MiB runs:',[round(r.get('16MiB.GB_per_s',0),2) for r in res[g]],'128MiB:',[round(r.get('128MiB.GB_per_s',0),2) for r in res[g]])

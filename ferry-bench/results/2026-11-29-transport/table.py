import json
S='/tmp/sit'
def load(p):
    try: return json.load(open(p))
    except Exception: return None
def get(d,mode,k):
    try:
        s=d['summary'][mode][k]; return s['median'],s['min'],s['max']
    except Exception: return None
def fmt(x):
    if x is None: return '–'
    m,lo,hi=x
    f=lambda v: f"{v:,.0f}" if abs(v)>=100 else (f"{v:.3g}" if abs(v)<10 else f"{v:.1f}")
    return f"{f(m)} [{f(lo)} .. {f(hi)}]"
lim=load(f'{S}/limits/limits.json')
print('limits', {k:v['median'] for k,v in lim['summary'][list(lim['summary'])[0]].items()} if lim else None)
rows=[]
for wl,file,keys in [('W1','w1_latency.json',['median_us','p90_us','p99_us','calls_per_s','idle_cpu_pct_rank0','idle_cpu_pct_rank1']),
                     ('W2','w2_async_throughput.json',['w1.calls_per_s','w8.calls_per_s','w64.calls_per_s','w256.calls_per_s']),
                     ('W3','w3_tensor_echo.json',[f'{s}.{m}' for s in ['1KiB','64KiB','1MiB','16MiB','128MiB'] for m in ['median_us','GB_per_s']])]:
    pt=load(f'{S}/pytorch/{file}'); fu=load(f'{S}/ferry-uds/{file}'); ft=load(f'{S}/ferry-tcp/{file}')
    for k in keys:
        rows.append(f"| {wl} | {k} | {fmt(get(fu,'java',k))} | {fmt(get(ft,'java',k))} | {fmt(get(pt,'default',k))} | {fmt(get(pt,'tcp',k))} |")
print('| workload | metric | Ferry UDS (default) | Ferry TCP (FERRY_UNIX_SOCKETS=0) | PyTorch default | PyTorch tcp |')
print('|---|---|---|---|---|---|')
print('\n'.join(rows))
for f in ['pytorch/w1_latency.json','ferry-uds/w1_latency.json','pytorch/w3_tensor_echo.json','ferry-uds/w3_tensor_echo.json']:
    d=load(f'{S}/{f}')
    if d: print(f, d['env'].get('date_utc'), d['env'].get('loadavg_start'), d['env'].get('loadavg_end'), d.get('failures'))

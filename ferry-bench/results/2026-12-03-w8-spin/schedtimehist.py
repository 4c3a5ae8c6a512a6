import re,sys,collections
rx=re.compile(r'^\s*(\d+\.\d+)\s+\[(\d+)\]\s+(.+?)\[(\d+)(?:/(\d+))?\]\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)')
rows=[]
for line in open(sys.argv[1]):
    m=rx.match(line)
    if m: rows.append((float(m[1]),int(m[2]),m[3].strip(),int(m[4]),int(m[5] or 0),float(m[6]),float(m[7]),float(m[8])))
t0=rows[0][0]
# per task kind: count of sch delay > 1ms, total sch delay, in time buckets of 2 s
names=collections.Counter()
buck=collections.defaultdict(lambda: collections.Counter())
for t,cpu,name,tid,pid,wait,sd,run in rows:
    n=re.sub(r'\d+$','',name)
    if sd>1.0:
        buck[int((t-t0)//2)][n]+=1
for b in sorted(buck):
    print(b*2, dict(buck[b].most_common(6)))
print('--- who held the CPU while a ferry/java thread waited > 1 ms, t in', sys.argv[2], sys.argv[3])
lo,hi=float(sys.argv[2]),float(sys.argv[3])
bycpu=collections.defaultdict(list)
for r in rows: bycpu[r[1]].append(r)
held=collections.Counter(); n=0; other=collections.Counter()
for t,cpu,name,tid,pid,wait,sd,run in rows:
    if not (lo<=t-t0<hi) or sd<=1.0: continue
    if not (name.startswith('ferry') or name=='java' or name.startswith('w8')): continue
    n+=1
    # on this cpu, slices that ended between t-run-sd and t-run (the task was switched in at t-run)
    start_in=t-run/1000; sdd=sd/1000
    for t2,c2,n2,tid2,p2,w2,s2,r2 in bycpu[cpu]:
        if start_in-sdd-0.0001 <= t2 <= start_in+0.00001 and t2!=t:
            held[re.sub(r'\d+$','',n2)+('' )]+=r2
    # the other cpu
    for t2,c2,n2,tid2,p2,w2,s2,r2 in bycpu[1-cpu]:
        if start_in-sdd <= t2 <= start_in:
            other[re.sub(r'\d+$','',n2)]+=r2
print(n,'waits; same cpu ran (ms):',held.most_common(8))
print('other cpu ran (ms):',other.most_common(8))

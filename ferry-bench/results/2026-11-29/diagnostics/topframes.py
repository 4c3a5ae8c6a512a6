import json,sys,collections
d=json.load(open(sys.argv[1]))
ev=d['recording']['events']
top=collections.Counter(); incl=collections.Counter()
for e in ev:
    st=e['values'].get('stackTrace')
    if not st: continue
    fr=st['frames']
    if not fr: continue
    f0=fr[0]['method']; top[f0['type']['name']+'.'+f0['name']]+=1
    seen=set()
    for f in fr[:40]:
        k=f['method']['type']['name']+'.'+f['method']['name']
        if k not in seen: incl[k]+=1; seen.add(k)
n=sum(top.values()); print('samples',n)
print('-- top self'); [print(c, k) for k,c in top.most_common(12)]
print('-- inclusive'); [print(c, k) for k,c in incl.most_common(30)]

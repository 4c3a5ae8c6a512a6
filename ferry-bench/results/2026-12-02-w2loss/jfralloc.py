# Heaviest allocation sites (class, first Ferry frame) of JFR allocation samples, by weight: jfralloc.py FILE.jfr ...
import subprocess, sys, re, collections
J='/usr/lib/jvm/temurin-25-jdk-amd64/bin/jfr'
for f in sys.argv[1:]:
    out = subprocess.run([J,'print','--events','jdk.ObjectAllocationSample','--stack-depth','12',f],capture_output=True,text=True).stdout
    c = collections.Counter(); tot=0
    for ev in out.split('jdk.ObjectAllocationSample')[1:]:
        m = re.search(r'objectClass = ([\w.$\[\]]+)', ev); w = re.search(r'weight = ([\d.,]+) ([kMG]?B)', ev)
        if not m or not w: continue
        val = float(w.group(1).replace(',','')) * {'B':1,'kB':1e3,'MB':1e6,'GB':1e9}[w.group(2)]
        fr = [x for x in re.findall(r'^\s+([\w.$<>]+)\(', ev, re.M)]
        site = next((x for x in fr if 'dev.ferry' in x), fr[0] if fr else '?')
        c[(m.group(1), '.'.join(site.split('.')[-2:]))] += val; tot+=val
    print(f"== {f}: {tot/1e6:.0f} MB sampled")
    for k,v in c.most_common(25): print(f"  {100*v/tot:5.1f}%  {k[0]:40s} {k[1]}")

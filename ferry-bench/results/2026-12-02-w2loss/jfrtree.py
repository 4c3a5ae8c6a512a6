# Call tree of JFR execution samples under one method: jfrtree.py METHOD DEPTH FILE.jfr ... (TH: least share shown)
import subprocess, sys, re, collections
J='/usr/lib/jvm/temurin-25-jdk-amd64/bin/jfr'
def stacks(f):
    out = subprocess.run([J,'print','--events','jdk.ExecutionSample','--stack-depth','128',f],capture_output=True,text=True).stdout
    for ev in out.split('jdk.ExecutionSample')[1:]:
        yield re.findall(r'^\s+([\w.$<>]+)\(', ev, re.M)
root = sys.argv[1]; depth=int(sys.argv[2])
for f in sys.argv[3:]:
    tree = collections.Counter(); n=0; tot=0
    for fr in stacks(f):
        if not fr: continue
        tot+=1
        fr = fr[::-1]  # root first
        if root not in fr: continue
        n+=1
        i = fr.index(root)
        path = tuple(x.split('.')[-2]+'.'+x.split('.')[-1] for x in fr[i:i+depth+1])
        for k in range(1,len(path)+1):
            tree[path[:k]]+=1
    print(f"== {f}: {n} of {tot} samples under {root}")
    for p,c in sorted(tree.items()):
        if c/tot >= float(__import__("os").environ.get("TH","0.005")):
            print(f"{100*c/tot:5.1f}% " + "  "*(len(p)-1) + p[-1])

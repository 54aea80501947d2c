import sys, collections
bad=collections.Counter(); runs=set(); okruns=collections.defaultdict(lambda: True)
low=collections.defaultdict(list)
for fn in sys.argv[1:]:
    cur=None
    for line in open(fn):
        if line.startswith('=='):
            _,_,run,_,np,c=line.split(); cur=(np,c); runs.add((fn,run)); key=(fn,run)
        else:
            f=line.split()
            if len(f)>5 and f[-1].endswith('x'):
                r=float(f[-1][:-1]); low[cur].append(r)
                if r<1.0: bad[(cur,int(f[0]))]+=1; okruns[key]=False
n=len(runs)
print("runs:",n,"runs with every cell >=1.0:",sum(1 for k in runs if okruns[k]))
for k in sorted(low): 
    v=sorted(low[k]); print(k, "min %.2f  p10 %.2f median %.2f"%(v[0], v[len(v)//10], v[len(v)//2]))
for k,v in sorted(bad.items()): print(k, v)

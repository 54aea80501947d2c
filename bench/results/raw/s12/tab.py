import sys,glob,statistics,collections
d=sys.argv[1]; t=collections.defaultdict(lambda: collections.defaultdict(list))
for f in glob.glob(d+'/*.txt'):
    parts=f.split('/')[-1].split('.'); key='.'.join(parts[:-2])
    for line in open(f):
        x=line.split()
        if x and x[0].isdigit() and len(x)>=11:
            t[(parts[0],int(x[0]))][key].append((float(x[2]),float(x[8])))
for (c,s) in sorted(t):
    row=t[(c,s)]; out=f"{c} {s:>8}"
    for k in sorted(row):
        g=statistics.median(a for a,b in row[k]); m=statistics.median(b for a,b in row[k])
        rs=sorted(b/a for a,b in row[k])
        out+=f" | {k}: {g:8.2f} mpi {m:8.2f} r {'/'.join('%.2f'%r for r in rs)}"
    print(out)

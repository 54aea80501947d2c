import sys, re, glob, statistics as st
for f in sorted(glob.glob(sys.argv[1])):
    rows = [l for l in open(f) if l.startswith("g ")]
    out = []
    for l in rows:
        g = [float(x) for x in re.findall(r"g ([\d.]+)", l)]
        m = [float(x) for x in re.findall(r"m ([\d.]+)", l)]
        med = sorted(m)[len(m)//2] / sorted(g)[len(g)//2]
        pairs = sorted(mm/gg for gg, mm in zip(g, m))
        out.append("%.2f/%.2f[%s]" % (med, pairs[len(pairs)//2], ",".join("%.2f" % p for p in pairs)))
    print(f.split("/")[-1], " ".join(out))

#!/usr/bin/env python3
# Median auto/off over complete pairs, with a bootstrap 95% interval (10000 resamples of pairs).
import random, statistics, sys
runs = {}
for path in sys.argv[1:]:
    for line in open(path):
        p = line.split()
        if len(p) != 3 or p[2] == "FAIL": continue
        runs.setdefault((path, p[0]), {})[p[1]] = float(p[2])
pairs = [(v["off"], v["auto"]) for v in runs.values() if "off" in v and "auto" in v]
ratios = [a / o for o, a in pairs]
random.seed(1)
def boot(f):
    s = sorted(f([random.choice(pairs) for _ in pairs]) for _ in range(10000))
    return s[250], s[9750]
med = lambda ps: statistics.median(a / o for o, a in ps)
tot = lambda ps: sum(a for _, a in ps) / sum(o for o, _ in ps)
offs = [o for o, _ in pairs]; autos = [a for _, a in pairs]
print(f"pairs {len(pairs)}; off median {statistics.median(offs):.1f} MB/s ({min(offs):.0f}-{max(offs):.0f}); "
      f"auto median {statistics.median(autos):.1f} ({min(autos):.0f}-{max(autos):.0f})")
lo, hi = boot(med); print(f"median auto/off {med(pairs):.4f}, 95% interval {lo:.4f}-{hi:.4f}")
lo, hi = boot(tot); print(f"sum auto / sum off {tot(pairs):.4f}, 95% interval {lo:.4f}-{hi:.4f}")

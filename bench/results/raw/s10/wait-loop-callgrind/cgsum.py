#!/usr/bin/env python3
"""cgsum.py FILE [REGEX...]: self Ir, inclusive Ir and calls per function of a callgrind out file."""
import re, sys, collections
path = sys.argv[1]; pats = [re.compile(p) for p in sys.argv[2:]] or [re.compile('.')]
names = {}; selfir = collections.Counter(); incl = collections.Counter(); calls = collections.Counter()
fn = None; pending_call = None
def name(kind, s):
    m = re.match(r'\((\d+)\)(?: (.*))?', s)
    if not m: return s
    if m.group(2): names[(kind, m.group(1))] = m.group(2)
    return names.get((kind, m.group(1)), m.group(1))
cfn = None
for line in open(path):
    line = line.rstrip('\n')
    if line.startswith('fn='): fn = name('fn', line[3:]); continue
    if line.startswith('cfn='): cfn = name('fn', line[4:]); continue
    if line.startswith('calls='): pending_call = int(line[6:].split()[0]); continue
    if line and (line[0].isdigit() or line[0] in '+-*'):
        parts = line.split()
        if len(parts) < 2: continue
        ir = int(parts[1])
        if pending_call is not None:
            calls[cfn] += pending_call; incl[(fn, cfn)] += ir; pending_call = None
        else:
            selfir[fn] += ir
tot = collections.Counter()
for (f, c), ir in incl.items(): tot[c] += ir
allf = set(selfir) | set(calls)
for f in sorted(allf, key=lambda f: -selfir[f]):
    short = re.sub(r'\(.*', '', f)
    if not any(p.search(short) for p in pats): continue
    n = calls[f]
    print(f"{short[:70]:70s} calls {n:7d}  self {selfir[f]:9d}  self/call {selfir[f]/n if n else 0:8.1f}  incl/call {(selfir[f]+0)/1 and (tot[f]/n if n else 0):8.1f}")

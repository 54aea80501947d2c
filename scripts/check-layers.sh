#!/usr/bin/env bash
# The architecture's rules that a script can check (../shared/DESIGN.md,
# "Layers" and "Who owns what"), run by scripts/test.sh:
#   1. no file includes a header of a layer above its own (the layer of a
#      file is its folder's row in DESIGN.md's table; include/ is the public
#      API, usable everywhere);
#   2. no file-static map keyed by a communicator (its state is a member);
#   3. no "(issue N)" in code under src/, collectives/, topology/, include/;
#   4. no thread started but through gdr::libThread (src/core/lib_thread.h):
#      a library thread must not read the environment.
# Upward includes that exist today and are still to be removed are listed in
# scripts/layers-known.txt ("file -> header" per line): the check fails on
# any other one, and on a listed one that is gone (so the list only shrinks).
# Usage (repo root): scripts/check-layers.sh
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 - "$@" <<'PY'
import os, re, sys

# Rows of DESIGN.md's table, top (may use everything below) to bottom.
ROWS = [
    ("api", ["src/api/"]),
    ("compat", ["src/compat/"]),
    ("dispatch", ["src/dispatch/"]),
    ("paths", ["src/paths/"]),
    ("comm", ["src/comm/"]),
    ("bootstrap", ["src/bootstrap/"]),
    ("sim", ["src/sim/"]),  # the simulator: schedules and topology, for gdr-sim and the NCCL face
    ("collectives", ["collectives/"]),
    ("transport", ["src/transport/"]),
    ("topology", ["topology/"]),
    ("security", ["src/security/"]),
    ("device", ["src/device/"]),
    ("progress", ["src/progress/"]),
    ("core", ["src/core/"]),
]
RANK = {name: len(ROWS) - i for i, (name, _) in enumerate(ROWS)}
CODE = (".h", ".hh", ".cc", ".cu", ".cuh", ".c")

def layer_of(path):
    for name, prefixes in ROWS:
        if any(path.startswith(p) for p in prefixes):
            return name
    return None

def header_layer(inc):
    # Includes are relative to src/ ("comm/comm.h") or to the root ("collectives/x.h").
    for cand in ("src/" + inc, inc):
        if os.path.exists(cand):
            return layer_of(cand), cand
    return None, None

problems = []
found_up = set()
issue_re = re.compile(r"\(issue \d+\)")
map_re = re.compile(r"(std::)?(unordered_)?map\s*<\s*(const\s+)?(gdr::)?(Communicator|gdrComm|gdrComm_t|Comm)\s*\*")
pair_re = re.compile(r"std::pair\s*<\s*(const\s+)?(gdr::)?(Communicator|gdrComm)\s*\*")
inc_re = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
thread_re = re.compile(r"std::(thread|jthread)\s*(\w+\s*)?[({]|pthread_create\s*\(")
for top in ("src", "collectives", "topology", "include"):
    for dirpath, _, files in os.walk(top):
        for f in files:
            if not f.endswith(CODE):
                continue
            path = os.path.join(dirpath, f)
            me = layer_of(path)
            text = open(path, encoding="utf-8", errors="replace").read()
            for n, line in enumerate(text.splitlines(), 1):
                if issue_re.search(line):
                    problems.append(f"{path}:{n}: \"(issue N)\" in code: history belongs in commit messages")
                if thread_re.search(line) and not line.lstrip().startswith("//") and path != "src/core/lib_thread.h":
                    problems.append(f"{path}:{n}: a thread started directly: use gdr::libThread (core/lib_thread.h)")
                if (map_re.search(line) or pair_re.search(line)) and not line.lstrip().startswith("//"):
                    problems.append(f"{path}:{n}: a table keyed by a communicator: make it a member of the communicator")
                m = inc_re.match(line)
                if not m or me is None:
                    continue
                theirs, hpath = header_layer(m.group(1))
                if theirs is None or theirs == me:
                    continue
                if RANK[theirs] > RANK[me]:
                    found_up.add(f"{path} -> {hpath}")

known = set()
if os.path.exists("scripts/layers-known.txt"):
    for line in open("scripts/layers-known.txt"):
        line = line.split("#", 1)[0].strip()
        if line:
            known.add(line)
for e in sorted(found_up - known):
    a, b = e.split(" -> ")
    problems.append(f"{a}: includes {b}, a layer above its own ({layer_of(a)} may not use {layer_of(b)})")
for e in sorted(known - found_up):
    problems.append(f"scripts/layers-known.txt: '{e}' no longer exists: remove the line")
for p in problems:
    print(p)
print(f"check-layers: {len(problems)} problem(s), {len(found_up & known)} known upward include(s) left",
      file=sys.stderr)
sys.exit(1 if problems else 0)
PY

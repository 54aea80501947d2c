#!/usr/bin/env bash
# A/B of two builds of libgdrcoll on host buffers: gdr-bench (this build's
# binary) is run with LD_LIBRARY_PATH pointing at A's and B's lib folders in
# turn (the binary's RUNPATH gives way to it), RUNS times interleaved, for
# each collective in COLLS, with Open MPI measured in the same runs. Prints
# per size the median gdrcoll time of A and B and Open MPI's median, and B/A
# normalised by Open MPI's time in the same launch (robust to slow launches).
#   A, B: folders holding libgdrcoll.so.0 (B defaults to build/lib)
#   COLLS ("bcast reduce allreduce") NP (2) MIN (64) MAX (4096) ITERS (100000) RUNS (5)
set -euo pipefail
cd "$(dirname "$0")/.."
A="${A:?A=<folder with the baseline libgdrcoll.so.0>}"
B="${B:-build/lib}"
COLLS="${COLLS:-bcast reduce allreduce}"
NP="${NP:-2}" MIN="${MIN:-64}" MAX="${MAX:-4096}" ITERS="${ITERS:-100000}" RUNS="${RUNS:-5}"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
for run in $(seq "$RUNS"); do
  for c in $COLLS; do
    for v in A B; do
      lib=$([ $v = A ] && echo "$A" || echo "$B")
      LD_LIBRARY_PATH="$(realpath "$lib")" mpirun --allow-run-as-root --oversubscribe -np "$NP" -x LD_LIBRARY_PATH \
        build/bin/gdr-bench "$c" --min "$MIN" --max "$MAX" --iters "$ITERS" --compare mpi --check \
        > "$OUT/$c.$v.$run.txt"
    done
  done
done
python3 - "$OUT" "$COLLS" "$RUNS" "$NP" <<'PY'
import sys, statistics, collections
out, colls, runs, np_ = sys.argv[1], sys.argv[2].split(), int(sys.argv[3]), sys.argv[4]
for c in colls:
    t = collections.defaultdict(lambda: collections.defaultdict(list))
    for v in "AB":
        for r in range(1, runs + 1):
            for line in open(f"{out}/{c}.{v}.{r}.txt"):
                f = line.split()
                if f and f[0].isdigit() and len(f) >= 11:
                    if f[7] != "ok": sys.exit(f"{c} {v} run {r}: check failed at {f[0]} B")
                    t[int(f[0])][v].append(float(f[2]))
                    t[int(f[0])]["mpi"].append(float(f[8]))
                    t[int(f[0])][v + "/mpi"].append(float(f[2]) / float(f[8]))
    print(f"\n{c}, np {np_}: median of {runs} runs (us)\n")
    print("| size (B) | A | B | B/A | Open MPI | MPI/B | B/A against Open MPI |\n"
          "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for s in sorted(t):
        a, b, m = (statistics.median(t[s][k]) for k in ("A", "B", "mpi"))
        n = statistics.median(t[s]["B/mpi"]) / statistics.median(t[s]["A/mpi"])
        print(f"| {s} | {a:.2f} | {b:.2f} | {b/a:.2f} | {m:.2f} | {m/b:.2f}x | {n:.2f} |")
print("\nB/A against Open MPI: the median over B's runs of its time over Open MPI's in the same run,\n"
      "over the same for A. Whole launches on the 2-core VM run 2.5-3x slower now and then, both\n"
      "libraries alike (bench/results/refactor-middle-layer.md, session 14); this column cancels that.")
PY

#!/usr/bin/env bash
# One call on the lent GPU machine: runs the GPU parts named in GPU_PARTS
# (default: every part) one after another and packs all logs into
# $OUT/logs.tgz (the device tool returns at most 8 files).
#   tests   scripts/gpu-run.sh tests (SANITIZE=1 adds compute-sanitizer)
#   bench   scripts/gpu-run.sh bench (BENCH_SET picks the set)
#   other   scripts/gpu/<part>.sh (staged, crypto, gdr, compat)
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0
final=${OUT:-/tmp/gpu-all-out}
mkdir -p "$final"
logs=$(mktemp -d /tmp/gpu-all.XXXX)
for part in ${GPU_PARTS:-tests staged crypto gdr compat bench}; do
  mkdir -p "$logs/$part"
  t0=$(date +%s)
  case $part in
    tests | bench | sanitize) OUT="$logs/$part" bash scripts/gpu-run.sh "$part" ;;
    *) OUT="$logs/$part" bash "scripts/gpu/$part.sh" ;;
  esac >"$logs/$part/console.txt" 2>&1
  rc=$?
  echo "=== part $part rc=$rc in $(( $(date +%s) - t0 )) s"
  tail -n "${TAIL_LINES:-25}" "$logs/$part/console.txt" | cut -c1-200
done
tar czf "$final/logs.tgz" -C "$logs" .

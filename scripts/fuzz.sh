#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz: handshake, bootstrap, frame) with
# clang into build-fuzz (the library itself instrumented with
# address,undefined,fuzzer-no-link) and runs each for a bounded time over its
# seed corpus (tests/fuzz/corpus/<target>, read-only; new inputs go to
# build-fuzz/corpus/<target>). Fails on any crash, sanitizer report, leak or
# per-input timeout; the reproducer is left in build-fuzz/artifacts/.
#   GDR_FUZZ_SECONDS  seconds per target at most (default 20)
#   GDR_FUZZ_RUNS     inputs per target (default 100000) and GDR_FUZZ_SEED
#                     (default 1): CI explores the same inputs every time, so
#                     a finding is reproducible and CI does not fail at random;
#                     set GDR_FUZZ_SEED=0 (random) and more runs to explore
#   GDR_FUZZ_TARGETS  which targets (default: handshake bootstrap frame)
# Extra arguments go to every fuzzer (e.g. -runs=1000).
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${GDR_FUZZ_SECONDS:-20}"
targets=(${GDR_FUZZ_TARGETS:-handshake bootstrap frame})
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
command -v clang++ >/dev/null || { echo "fuzz: clang++ not found (scripts/deps.sh installs clang)" >&2; exit 1; }
# -w: warnings are the gcc builds' job (-Werror there); a clang-only warning
# must not stop this build from looking for memory errors.
cmake -S . -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS=-w -DCMAKE_C_FLAGS=-w \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGDR_BUILD_FUZZERS=ON -DGDR_SANITIZE=address,undefined,fuzzer-no-link \
  -DGDR_ENABLE_CUDA=OFF -DGDR_ENABLE_IB=OFF -DGDR_BUILD_TESTS=OFF -DGDR_BUILD_BENCH=OFF >/dev/null
ninja -C build-fuzz -j"${GDR_BUILD_JOBS:-2}" "${targets[@]/#/fuzz_}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
mkdir -p build-fuzz/artifacts
for t in "${targets[@]}"; do
  mkdir -p "build-fuzz/corpus/$t"
  echo "fuzz: $t for ${secs}s"
  if ! build-fuzz/bin/fuzz_"$t" -max_total_time="$secs" -seed="${GDR_FUZZ_SEED:-1}" -runs="${GDR_FUZZ_RUNS:-100000}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="build-fuzz/artifacts/$t-" "$@" "build-fuzz/corpus/$t" "tests/fuzz/corpus/$t" \
      >"build-fuzz/fuzz_$t.log" 2>&1; then
    tail -n 60 "build-fuzz/fuzz_$t.log" >&2
    echo "fuzz: $t FAILED (log: build-fuzz/fuzz_$t.log; reproducer in build-fuzz/artifacts/)" >&2
    exit 1
  fi
  grep -E "stat::number_of_executed_units|stat::new_units_added" "build-fuzz/fuzz_$t.log" | tr '\n' ' '
  echo
done
echo "fuzz: all targets ran ${secs}s each without a finding"

#!/usr/bin/env bash
# Every test: install what is missing, check the layering
# (scripts/check-layers.sh), build, run the unit tests (label
# unit), the MPI tests (label mpi), the cluster tests (label cluster: emulated
# hosts as network namespaces under mpirun, and a real one-node Slurm,
# scripts/cluster/) and the RDMA tests (label rdma: real verbs over Soft-RoCE
# in a QEMU VM, scripts/rxe/), then the unit tests again under
# AddressSanitizer + UndefinedBehaviorSanitizer, and a random soak under
# ThreadSanitizer. GPU tests (label gpu) skip
# themselves where there is no CUDA device.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
# The layering rules a script can check (DESIGN.md): fails fast, before the build.
bash scripts/check-layers.sh
# ccache keys on paths relative to the checkout (scripts/build.sh does the same).
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR=1
bash scripts/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Several MPI jobs at once on 2 cores only slow each other down.
(cd build && ctest --output-on-failure -L 'unit|mpi|cluster|gpu|rdma' -j1 --timeout 900)

# Sanitizers: unit tests only (MPI's own leaks would drown the report).
cmake -S . -B build-asan -G Ninja -DGDR_SANITIZE=address,undefined -DGDR_ENABLE_CUDA=OFF \
  -DGDR_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug >/dev/null
ninja -C build-asan -j"${GDR_BUILD_JOBS:-2}" gdr-unit gdr-topo
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# The gdr-unit binary itself (its CTest siblings need binaries this build skips).
build-asan/bin/gdr-unit --gtest_brief=1

# ThreadSanitizer: the random soak (tests/soak/soak.cc: 10,000 collectives
# at np 3, groups across two communicators, a sealed socket communicator,
# status reports while it runs), in a build of only what it needs. Any
# report ends the rank that sees it with exit code 66, which fails the run.
cmake -S . -B build-tsan -G Ninja -DGDR_SANITIZE=thread -DGDR_ENABLE_CUDA=OFF \
  -DGDR_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build-tsan -j"${GDR_BUILD_JOBS:-2}" gdr-soak
TSAN_OPTIONS=halt_on_error=1:exitcode=66 build-tsan/bin/gdr-soak --ops 10000

# libFuzzer targets (tests/fuzz): built with clang into build-fuzz,
# each run GDR_FUZZ_SECONDS (default 20) over its seed corpus; fails on a finding.
bash scripts/fuzz.sh

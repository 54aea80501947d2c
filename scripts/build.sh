#!/usr/bin/env bash
# Configures and builds gdrcoll into build/ (binaries in build/bin).
# Extra arguments go to cmake. CUDA is built when nvcc is found (sm_90 only).
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
# Paths relative to the checkout, so clones in other folders share the cache.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR=1
cmake -S . -B build -G Ninja "$@" >/dev/null
ninja -C build -j"${GDR_BUILD_JOBS:-2}"

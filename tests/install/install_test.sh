#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then builds a consumer
# with find_package(gdrcoll) and another with pkg-config, and runs both.
set -euo pipefail
build=$1; src=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src/consumer" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_C_COMPILER=mpicc >/dev/null
cmake --build "$tmp/cm" >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
LD_LIBRARY_PATH="$tmp/prefix/lib" mpirun --oversubscribe -np 2 "$tmp/cm/consumer"
flags=$(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --cflags --libs gdrcoll)
mpicc "$src/consumer/main.c" $flags -o "$tmp/pc-consumer"
LD_LIBRARY_PATH="$tmp/prefix/lib" mpirun --oversubscribe -np 3 "$tmp/pc-consumer"
"$tmp/prefix/bin/gdr-info" > "$tmp/info.txt"  # the tools are installed too
head -n 1 "$tmp/info.txt"
echo "install test: 2 passed, 0 failed"

#!/usr/bin/env bash
# Fails when a library's NEEDED list (readelf -d) names a library it must
# load without: check_needed.sh <library> <forbidden regex>
#   e.g. check_needed.sh libnccl.so.2 'libmpi|libcudart'
set -euo pipefail
lib=$1 forbidden=$2
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[ -n "$needed" ] || { echo "FAIL: no NEEDED entries read from $lib"; exit 1; }
bad=$(echo "$needed" | grep -E "$forbidden" || true)
echo "$(basename "$lib") needs:" $needed
if [ -n "$bad" ]; then echo "FAIL: $(basename "$lib") needs" $bad; exit 1; fi
echo "needed: nothing matching '$forbidden'"

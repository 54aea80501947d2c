#!/usr/bin/env bash
# Compares the nccl* and pnccl* functions a library exports (nm -D
# --defined-only) with the list kept in the repository: a listed name the
# library lacks, or an export the list lacks, fails.
#   check_exports.sh <library> <list>
set -euo pipefail
lib=$1 list=$2
want=$(grep -E '^p?nccl' "$list" | awk '{print $1}' | sort -u)
have=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -E '^p?nccl' | sort -u)
missing=$(comm -23 <(echo "$want") <(echo "$have"))
extra=$(comm -13 <(echo "$want") <(echo "$have"))
if [ -n "$missing" ]; then echo "FAIL: $lib lacks:" $missing; fi
if [ -n "$extra" ]; then echo "FAIL: $lib exports names $list does not list:" $extra; fi
[ -z "$missing$extra" ] || exit 1
echo "exports: all $(echo "$want" | wc -l) listed names exported, nothing else"

#!/usr/bin/env bash
# Scenario 4 (clean link) through the software NIC: interleaved off/auto pairs (auto first in
# odd pairs) of 100 x 1 MiB eager writes, rank 0 -> 1, for SECONDS_BUDGET seconds; one line
# per run: pair variant MB/s. Run from the repository root with build/ built.
set -u
budget=${SECONDS_BUDGET:-200}
end=$((SECONDS + budget)); pair=0
while [ $SECONDS -lt $end ]; do
  pair=$((pair + 1))
  if [ $((pair % 2)) -eq 1 ]; then order="auto off"; else order="off auto"; fi
  for cc in $order; do
    mbs=$(GDR_IB_CC=$cc GDR_IB_PROVIDER=softnic GDR_TRANSPORT=ib GDR_TEST_BW_ITERS=100 GDR_IB_ZCOPY_BYTES=0 \
      tests/rdma/run_ranks.sh 2 120 build/bin/gdr-rdma-test bw 2>&1 | sed -n 's/.*bytes in [0-9.]* s = \([0-9.]*\) MB\/s.*/\1/p' | head -1)
    echo "$pair $cc ${mbs:-FAIL}"
  done
done

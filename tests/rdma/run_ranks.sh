#!/bin/sh
# run_ranks.sh NRANKS TIMEOUT_S BINARY MODE
# Starts NRANKS processes of BINARY (gdr-rdma-test) with a shared unique-id
# file, each under `timeout`, prints their output, and exits 0 only if every
# rank did. Mode "kill": the last rank kills itself, so only the others count;
# mode "fault": rank 1 is GDR_FAULT's (it may die), so its status does not.
# RANK_HCAS="rxe0 rxe1": rank i gets GDR_IB_HCA = word (i mod count).
# RANK_HOSTS="a b": rank i gets GDR_HOST_ID = word (i mod count), so ranks of
# one machine count as ranks of different hosts (transport auto picks ib/socket).
# POSIX sh: it also runs under busybox inside the Soft-RoCE VM.
set -u
N=$1; TO=$2; BIN=$3; MODE=$4
D=$(mktemp -d)
export GDR_TEST_NRANKS=$N GDR_TEST_ID_FILE=$D/id
set -- ${RANK_HCAS:-}
NH=$#
host_of() {  # host_of I: the I-th (mod count) word of RANK_HOSTS, or nothing
    [ -n "${RANK_HOSTS:-}" ] || return 0
    idx=$1
    set -- $RANK_HOSTS
    k=$((idx % $# + 1)); eval "echo \${$k}"
}
i=0
while [ $i -lt "$N" ]; do
    h=$(host_of $i)
    if [ -n "$h" ]; then export GDR_HOST_ID="$h"; fi
    if [ "$NH" -gt 0 ]; then
        k=$((i % NH + 1)); eval "hca=\${$k}"
        GDR_IB_HCA=$hca GDR_TEST_RANK=$i timeout -s KILL "$TO" "$BIN" "$MODE" > "$D/out.$i" 2>&1 &
    else
        GDR_TEST_RANK=$i timeout -s KILL "$TO" "$BIN" "$MODE" > "$D/out.$i" 2>&1 &
    fi
    eval "pid_$i=$!"
    i=$((i + 1))
done
fails=0
i=0
while [ $i -lt "$N" ]; do
    eval "wait \$pid_$i"; rc=$?
    sed "s/^/  r$i| /" "$D/out.$i"
    if [ "$MODE" = kill ] && [ $i -eq $((N - 1)) ]; then
        echo "  rank $i (killed on purpose) rc=$rc"
    elif [ "$MODE" = fault ] && [ $i -eq 1 ] && [ $rc -ne 0 ]; then
        echo "  rank $i (GDR_FAULT's rank) rc=$rc"
    elif [ $rc -ne 0 ]; then
        echo "  rank $i rc=$rc"; fails=$((fails + 1))
    fi
    i=$((i + 1))
done
rm -rf "$D"
exit $fails

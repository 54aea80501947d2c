#!/usr/bin/env bash
# Slurm test: a real one-node Slurm (slurmctld, slurmd, munged from Debian's
# slurm-wlm, slurm-wlm-basic-plugins and munge), configured in a temporary
# directory by this script, started here and stopped on exit. Then
# `srun --mpi=pmix -n 4` (Slurm's PMIx v4 plugin) runs the MPI-free collective
# checks (gdr-env-colls) and `gdr-bench allreduce --check`; both must take the
# PMIx bootstrap with no MPI call. Then Slurm without PMIx (--mpi=none): the
# Slurm bootstrap from SLURM_PROCID/SLURM_NTASKS, rendezvous at GDR_COMM_ID,
# key from GDR_AUTH_KEY_FILE.
#   test-slurm.sh BUILD
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD="$(realpath "${1:-build}")"
skip() { echo "SKIP: Slurm test: $*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || skip "needs root (slurmd and munged run as root here)"
for b in munged slurmctld slurmd srun sinfo; do command -v "$b" >/dev/null || skip "$b not installed (scripts/deps.sh)"; done
plugins=/usr/lib/x86_64-linux-gnu/slurm-wlm
[ -e "$plugins/mpi_pmix_v4.so" ] || skip "no $plugins/mpi_pmix_v4.so (slurm-wlm-basic-plugins)"

dir="$(mktemp -d /tmp/gdr-slurm.XXXXXX)"
chmod 700 "$dir"
pids=()
# Processes of this Slurm only: the daemons started here, and any step
# daemon (slurmstepd) or task that carries this run's SLURM_CONF.
ours() {
  local e
  [ -n "${SLURM_CONF:-}" ] || return 0
  for e in /proc/[0-9]*/environ; do
    grep -qz "^SLURM_CONF=$SLURM_CONF\$" "$e" 2>/dev/null && basename "$(dirname "$e")"
  done
}
cleanup() {
  local p
  for _ in $(seq 1 30); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.1; done  # steps finish first
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
  done
  for p in $(ours); do [ "$p" != "$$" ] && [ "$p" != "$BASHPID" ] && kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
node="$(hostname -s)"
port=$(( 30000 + RANDOM % 20000 ))
mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
chmod 700 "$dir/munge"
head -c 1024 /dev/urandom >"$dir/munge/munge.key"
chmod 400 "$dir/munge/munge.key"
export SLURM_CONF="$dir/slurm.conf"
cat >"$SLURM_CONF" <<CONF
ClusterName=gdrtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$(( port + 1 ))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
PluginDir=$plugins
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
NodeName=$node NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=10 State=UP OverSubscribe=FORCE:4
CONF

munged -F -f --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
  --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/seed" >"$dir/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 50); do [ -S "$dir/munge/munge.socket" ] && break; sleep 0.1; done
[ -S "$dir/munge/munge.socket" ] || { cat "$dir/munge/munged.log" 2>/dev/null; fail "munged did not start"; }
slurmctld -D -i -f "$SLURM_CONF" >"$dir/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$node" >"$dir/slurmd.out" 2>&1 &
pids+=($!)
state=""
for _ in $(seq 1 100); do
  state="$(sinfo -h -n "$node" -o %T 2>/dev/null || true)"
  [ "$state" = idle ] && break
  sleep 0.3
done
[ "$state" = idle ] || { cat "$dir"/*.log "$dir"/*.out; fail "the Slurm node is '$state', not idle"; }
echo "# Slurm up: node $node idle (conf $SLURM_CONF)"

out="$dir/colls.out"
timeout -k 5 150 srun --mpi=pmix -n 4 -t 5 --export=ALL,GDR_DEBUG=INFO,GDR_DEBUG_SUBSYS=BOOT \
  "$BUILD/bin/gdr-env-colls" --counts "${COUNTS:-0,1,37,1001}" >"$out" 2>&1 || { tail -30 "$out"; fail "gdr-env-colls under srun"; }
grep "gdr-env-colls:" "$out"
grep -q "gdr-env-colls: 4 ranks, .* 0 failed checks" "$out" || fail "collective checks failed under srun"
grep -q "bootstrap pmix" "$out" || fail "the PMIx bootstrap was not chosen under srun --mpi=pmix"
timeout -k 5 120 srun --mpi=pmix -n 4 -t 5 "$BUILD/bin/gdr-bench" allreduce --check --max 1m --iters 5 \
  >"$out.bench" 2>&1 || { cat "$out.bench"; fail "gdr-bench under srun"; }
grep -q "launcher pmix" "$out.bench" || { cat "$out.bench"; fail "gdr-bench did not launch through PMIx"; }
if grep -q FAIL "$out.bench"; then cat "$out.bench"; fail "gdr-bench --check"; fi
tail -2 "$out.bench"

head -c 32 /dev/urandom >"$dir/job.key"
chmod 600 "$dir/job.key"
timeout -k 5 60 srun --mpi=none -n 3 -t 2 \
  --export=ALL,GDR_COMM_ID=127.0.0.1:$(( port + 2 )),GDR_AUTH_KEY_FILE="$dir/job.key",GDR_DEBUG=INFO,GDR_DEBUG_SUBSYS=BOOT \
  "$BUILD/bin/gdr-bench" allreduce --check --max 64k --iters 5 >"$out.slurm" 2>&1 || { cat "$out.slurm"; fail "gdr-bench under srun --mpi=none"; }
grep -q "bootstrap slurm: SLURM_PROCID=" "$out.slurm" || { cat "$out.slurm"; fail "the Slurm bootstrap was not chosen"; }
grep -q "launcher env" "$out.slurm" || { cat "$out.slurm"; fail "gdr-bench did not take the env launcher"; }
if grep -q FAIL "$out.slurm"; then cat "$out.slurm"; fail "gdr-bench --check under the Slurm bootstrap"; fi
echo "PASS: srun --mpi=pmix -n 4 (collectives, gdr-bench --check through PMIx); srun --mpi=none -n 3 (Slurm bootstrap)"

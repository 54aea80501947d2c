#!/usr/bin/env bash
# Emulated hosts on one machine, for the cluster tests and benchmarks: N
# network namespaces (N <= 8), each with its own veth (eth0, its own
# address) on one bridge in the root namespace, which also holds an address
# so mpirun there reaches every host. Source this file, then:
#   cluster_up N             make hosts 1..N (CLUSTER_HOSTS names, CLUSTER_ADDRS addresses),
#                            a hostfile ($CLUSTER_DIR/hostfile) and an rsh agent
#                            ($CLUSTER_DIR/rsh-agent) that enters a host's namespace
#                            and UTS namespace (its own hostname) for mpirun's launcher
#   cluster_down             remove everything (cluster_up installs it as the EXIT trap)
#   cluster_rate I RATE      shape host I's link both ways with tbf (e.g. 100mbit; none clears);
#                            CLUSTER_TBF_LATENCY (50ms) bounds tbf's queue, CLUSTER_TBF_CHILD
#                            (e.g. fq_codel) replaces its FIFO
#   cluster_cut I / cluster_mend I   take host I's link down / up
#   cluster_exec I CMD...    run CMD inside host I (its namespace and hostname)
#   cluster_mpirun ARGS...   mpirun over the hosts through the agent, TCP on the bridge only,
#                            ended after CLUSTER_TIMEOUT seconds (120); unbound (each host's
#                            daemon would bind its first rank to the same core as every
#                            other host's first rank: they share this machine's cores)
#   fail TEXT                say why a test failed and exit 1
# cluster_skip_unless_able exits 77 (CTest's skip code) with the reason where
# namespaces cannot be made (not root, no CAP_SYS_ADMIN, no ip or tc).
CLUSTER_SKIP=77

fail() { echo "FAIL: $*" >&2; exit 1; }

cluster_skip_unless_able() {
  local why=""
  if [ "$(id -u)" -ne 0 ]; then why="not root"
  elif ! command -v ip >/dev/null || ! command -v tc >/dev/null; then why="ip/tc (iproute2) not installed"
  elif ! command -v unshare >/dev/null; then why="unshare (util-linux) not installed"
  elif ! ip netns add "gdrprobe$$" 2>/dev/null; then why="cannot create network namespaces (no CAP_SYS_ADMIN?)"
  else ip netns del "gdrprobe$$"; return 0; fi
  echo "SKIP: cluster tests need network namespaces: $why" >&2
  exit "$CLUSTER_SKIP"
}

# Names short enough for interface names (15 characters), unique per run.
_cluster_tag() { echo "gc$(( $$ % 100000 ))"; }

cluster_up() {
  local n="$1" i
  [ "$n" -ge 1 ] && [ "$n" -le 8 ] || { echo "cluster_up: 1..8 hosts, not $n" >&2; return 1; }
  CLUSTER_TAG="$(_cluster_tag)"
  CLUSTER_N="$n"
  CLUSTER_NET="10.$(( 100 + $$ % 100 )).$(( $$ / 100 % 250 ))"
  CLUSTER_DIR="$(mktemp -d /tmp/gdr-cluster.XXXXXX)"
  CLUSTER_BR="${CLUSTER_TAG}br"
  CLUSTER_HOSTS=() CLUSTER_ADDRS=()
  trap cluster_down EXIT
  trap 'exit 130' INT TERM
  ip link add "$CLUSTER_BR" type bridge
  ip addr add "$CLUSTER_NET.254/24" dev "$CLUSTER_BR"
  ip link set "$CLUSTER_BR" up
  : >"$CLUSTER_DIR/hostfile"
  for i in $(seq 1 "$n"); do
    local ns="${CLUSTER_TAG}h$i" addr="$CLUSTER_NET.$i"
    ip netns add "$ns"
    ip link add "${ns}v" type veth peer name eth0 netns "$ns"
    ip link set "${ns}v" master "$CLUSTER_BR" up
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
    CLUSTER_HOSTS+=("$ns") CLUSTER_ADDRS+=("$addr")
    echo "$ns $addr" >>"$CLUSTER_DIR/hosts"
    echo "$ns slots=8" >>"$CLUSTER_DIR/hostfile"
  done
  # mpirun calls the agent as `agent HOST COMMAND...`, the command to be run
  # by a shell as ssh would; the agent runs it inside HOST's namespaces.
  cat >"$CLUSTER_DIR/rsh-agent" <<AGENT
#!/usr/bin/env bash
host="\$1"; shift
grep -q "^\$host " "$CLUSTER_DIR/hosts" || { echo "rsh-agent: no emulated host \$host" >&2; exit 255; }
exec ip netns exec "\$host" unshare --uts -- bash -c 'hostname "\$0" && eval "\$*"' "\$host" "\$*"
AGENT
  chmod +x "$CLUSTER_DIR/rsh-agent"
  echo "# cluster: $n hosts on $CLUSTER_NET.0/24 (bridge $CLUSTER_BR), files in $CLUSTER_DIR"
}

cluster_down() {
  local ns
  [ -n "${CLUSTER_TAG:-}" ] || return 0
  # Processes still inside a host would keep its namespace alive: end them
  # (only the ones in our namespaces).
  for ns in "${CLUSTER_HOSTS[@]}"; do
    local pids
    pids="$(ip netns pids "$ns" 2>/dev/null || true)"
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true  # removes its veth pair too
  done
  ip link del "$CLUSTER_BR" 2>/dev/null || true
  rm -rf "$CLUSTER_DIR"
  CLUSTER_TAG=""
}

_cluster_ns() { echo "${CLUSTER_HOSTS[$(( $1 - 1 ))]}"; }

cluster_rate() {
  local ns dev rate="$2"
  ns="$(_cluster_ns "$1")"
  for dev in "ns:eth0" "root:${ns}v"; do  # both directions: each end shapes what it sends
    local where="${dev%%:*}" ifc="${dev#*:}" run=()
    [ "$where" = ns ] && run=(ip netns exec "$ns")
    "${run[@]}" tc qdisc del dev "$ifc" root 2>/dev/null || true
    # burst: at least 128 KiB, as veth hands tbf 64 KiB GSO packets; latency bounds the queue.
    [ "$rate" = none ] && continue
    "${run[@]}" tc qdisc add dev "$ifc" root handle 1: tbf rate "$rate" burst 128kb latency "${CLUSTER_TBF_LATENCY:-50ms}"
    # CLUSTER_TBF_CHILD: the queue inside tbf (e.g. fq_codel, fq); tbf's own FIFO by default.
    [ -z "${CLUSTER_TBF_CHILD:-}" ] || "${run[@]}" tc qdisc add dev "$ifc" parent 1:1 $CLUSTER_TBF_CHILD
  done
}

cluster_cut() { ip -n "$(_cluster_ns "$1")" link set eth0 down; }
cluster_mend() { ip -n "$(_cluster_ns "$1")" link set eth0 up; }

cluster_exec() {
  local ns
  ns="$(_cluster_ns "$1")"
  shift
  ip netns exec "$ns" unshare --uts -- bash -c 'hostname "$0" && exec "$@"' "$ns" "$@"
}

cluster_mpirun() {
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -k 5 "${CLUSTER_TIMEOUT:-120}" \
    mpirun --allow-run-as-root \
    --hostfile "$CLUSTER_DIR/hostfile" --mca plm_rsh_agent "$CLUSTER_DIR/rsh-agent" \
    --mca oob_tcp_if_include "$CLUSTER_NET.0/24" --mca btl_tcp_if_include "$CLUSTER_NET.0/24" \
    --mca plm_rsh_no_tree_spawn 1 --bind-to none "$@"
}

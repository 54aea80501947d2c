#include "core/params.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <strings.h>

#include "core/error.h"

namespace gdr::param {

namespace {

// Add a row here for every variable the library reads (keep them grouped by
// subsystem). The README's table is generated from this list by gdr-info --markdown.
const std::vector<Info> kParams = {
    // general
    {"GDR_DEBUG", Type::String, "WARN", "Log level: NONE, WARN, INFO or TRACE."},
    {"GDR_DEBUG_SUBSYS", Type::String, "ALL",
     "Comma-separated subsystems to log: INIT, BOOT, NET, SHM, TOPO, COLL, P2P, ALL."},
    {"GDR_DEBUG_FILE", Type::String, "", "Log to this file instead of stderr (%h host, %p pid)."},
    {"GDR_TIMEOUT_MS", Type::Int, "300000",
     "Deadline for any single wait, in milliseconds; a timeout names the peer and step."},
    {"GDR_CHECK_MISMATCH", Type::Int, "1",
     "Cross-rank argument checks: 0 off; 1 check every message's operation signature (and agree on "
     "count-0 calls); 2 also agree on (collective, type, op, count, root) before every operation. "
     "What each level catches: docs/reliability.md."},
    {"GDR_FAULT", Type::String, "",
     "Tests only: inject one failure, rank:op:step:kind (op the collective's sequence number, step "
     "1-based "
     "or first/middle/last, kind kill, stall, close or corrupt); see src/core/fault.h."},
    {"GDR_STATUS", Type::Int, "1",
     "Status reports for stuck jobs: 1 writes what every communicator is doing on a timeout, on "
     "SIGUSR1 (unless the program handles it) and when gdr-status asks through the process's unix "
     "socket; 0 off. See docs/reliability.md."},
    {"GDR_STATUS_DIR", Type::String, "/tmp",
     "Where status reports (gdr-status-<host>-<pid>.txt and .json) and the status sockets "
     "(gdr-status-<pid>.sock) go; read when the process's first communicator is made."},
    // algorithms
    {"GDR_ALGO", Type::String, "",
     "Force algorithms per collective, e.g. 'allreduce=ring,bcast=binomial'; "
     "allreduce=ll, allreduce=oneshot or allreduce=twoshot forces the fused cuda_ipc kernels for "
     "device buffers. "
     "See docs/algorithms.md for names."},
    {"GDR_TUNING_FILE", Type::String, "",
     "Algorithm crossovers from this table (gdr-sim --tuning-out writes one) instead of the "
     "built-in "
     "ones; GDR_ALGO still wins. See docs/simulator.md."},
    {"GDR_SIM_CLUSTER", Type::String, "",
     "ncclGroupSimulateEnd's cluster: a gdr-sim preset or description file (unset: h200x2 at the "
     "communicator's size). See docs/simulator.md."},
    {"GDR_SIM_CALIBRATION", Type::String, "",
     "gdr-sim's link parameters file (unset: the build's bench/results/sim/calibration.txt; an "
     "installed library needs it set)."},
    {"GDR_CHUNK_BYTES", Type::Int, "0",
     "Pipelining unit of host schedules in bytes (0: whole blocks; the transports still "
     "stream each message through their own slots). A tiny value forces many chunks (tests)."},
    // transports
    {"GDR_TRANSPORT", Type::String, "auto",
     "Transport between ranks: auto (shm on one host; verbs between hosts where both have a usable "
     "RDMA device, else socket), shm, socket or ib."},
    {"GDR_SOCKET_IFNAME", Type::String, "",
     "Network interface for TCP (bootstrap and socket transport); default: first up, "
     "non-loopback IPv4 interface, else loopback."},
    {"GDR_SOCKET_BUFFER", Type::Int, "4194304",
     "SO_SNDBUF and SO_RCVBUF of each socket-transport connection, in bytes; 0: the kernel sizes "
     "them (TCP autotuning; on the emulated 1 Gbit/s hosts it made an 8 MiB chain broadcast 1.36x "
     "slower: bench/results/cluster.md)."},
    {"GDR_SHM_SLOT_BYTES", Type::Int, "65536", "Size of one slot of the shared-memory main lane."},
    {"GDR_SHM_SLOTS", Type::Int, "8",
     "Slots in each shared-memory main-lane FIFO (per ordered rank pair; a power of two). Messages "
     "of at most 320 bytes take the small lane instead (256 slots per pair)."},
    {"GDR_SHM_CMA", Type::Bool, "1",
     "Use single-copy process_vm_readv for large shared-memory messages when the kernel allows."},
    {"GDR_SHM_CMA_SHARE", Type::Bool, "1",
     "Split a single-copy shared-memory message of a broadcast or send/recv between both ranks: "
     "the receiver reads pieces, the sender writes the others while it would wait."},
    {"GDR_SHM_PREFETCHW", Type::Bool, "1",
     "After each small shared-memory message the sender prefetches the next slot's lines for "
     "writing (PREFETCHW), unless a message came back from that peer since its last one (an "
     "exchange, where it made small all-reduces 1.3-1.5x slower). 0 off."},
    {"GDR_SHM_CMA_THRESHOLD", Type::Int, "-1",
     "Messages at least this large use single-copy process_vm_readv; -1: by operation (64 KiB for "
     "all-gather, all-to-all, reduce-scatter and send/recv, 1 MiB for reduce, 256 KiB for "
     "all-reduce, broadcast and barrier)."},
    {"GDR_SPIN_BEFORE_YIELD", Type::Int, "2000",
     "Idle polls before a waiting rank yields its core."},
    {"GDR_HOST_ID", Type::String, "",
     "Override the host identity used to find co-located ranks (testing)."},
    // topology
    {"GDR_TOPO_FILE", Type::String, "",
     "Load the topology from this hwloc XML instead of the machine."},
    {"GDR_NET_GDR_LEVEL", Type::String, "PXB",
     "Use GPUDirect RDMA for a GPU-NIC pair up to this path class (NVL, PIX, PXB, PHB, NODE, "
     "SYS)."},
    {"GDR_IB_HCA", Type::String, "",
     "Use these RDMA devices instead of the topology's choice: mlx5_0, mlx5_0:1 (one port), "
     "mlx5_0,mlx5_1 (every connection's QPs alternate over both, up to 4), ^mlx5_1 (not it)."},
    // verbs: the ib transport
    {"GDR_IBV_LIB", Type::String, "", "Load libibverbs from this path instead of libibverbs.so.1."},
    {"GDR_IB_GID_INDEX", Type::Int, "-1",
     "GID index for RoCE (-1: the first RoCEv2 IPv4-mapped GID of the port)."},
    {"GDR_IB_QPS_PER_PEER", Type::Int, "2",
     "RC queue pairs per peer (1-8), going round the active ports of the devices (GDR_IB_HCA); "
     "chunks go round them "
     "(docs/congestion.md), and a failed one hands its chunks to the others."},
    {"GDR_IB_FAILOVER", Type::Bool, "1",
     "A verbs QP whose port fails (retries exceeded, queue flushed) hands its chunks to the "
     "peer's other QPs instead of failing the communicator (docs/congestion.md). 0: fail."},
    {"GDR_IB_CHUNK", Type::Int, "0",
     "Bytes per RDMA write (a multiple of 4096); 0: adaptive between 64 KiB and 256 KiB."},
    {"GDR_IB_SLOTS", Type::Int, "8",
     "Receive slots per peer (a power of two): the credit window of chunks in flight."},
    {"GDR_IB_QP_DEPTH", Type::Int, "1024", "Send and receive queue depth of each QP."},
    {"GDR_IB_ZCOPY_BYTES", Type::Int, "262144",
     "Messages of at least this many bytes go zero-copy over verbs: the receiver registers its "
     "buffer and the sender RDMA-writes straight into it (reductions still land in the receive "
     "slots); smaller ones are copied out of the slots. 0: never. Must match on every rank."},
    {"GDR_IB_ZCOPY_CHUNK", Type::Int, "524288",
     "Bytes per RDMA write of a zero-copy message (a multiple of 4096)."},
    {"GDR_IB_PROVIDER", Type::String, "",
     "Verbs provider: empty for libibverbs, softnic for the software NIC (a test device that "
     "carries out RDMA writes itself: memcpy/cudaMemcpy within a process, process_vm_writev "
     "between processes of one host)."},
    {"GDR_SOFTNIC_FAIL_WRITE", Type::Int, "0",
     "Software NIC only: the N-th RDMA write of the process fails (0: none)."},
    {"GDR_SOFTNIC_LOSE_ACK", Type::Int, "0",
     "Software NIC only: the N-th RDMA write of the process lands but completes as if its ACKs "
     "were lost (retries exceeded; 0: none)."},
    {"GDR_SOFTNIC_DELAY_US", Type::Int, "0",
     "Software NIC only: every RDMA write waits this long before it is carried out."},
    {"GDR_SOFTNIC_DEVICES", Type::Int, "1",
     "Software NIC only: devices it lists (1-4: softnic0, softnic1, ...), each with its own keys "
     "and GDR_SOFTNIC_PORTS ports, as separate HCAs."},
    {"GDR_SOFTNIC_PORTS", Type::Int, "1",
     "Software NIC only: active ports of the device (1-8); the verbs QPs go round them."},
    {"GDR_SOFTNIC_PORT_MBPS", Type::Int, "0",
     "Software NIC only: each port sends at most this many MB/s (writes wait their turn on it; "
     "0: no limit)."},
    {"GDR_SOFTNIC_PORT_DOWN", Type::String, "",
     "Software NIC only: PORT:N takes that port of softnic0 down at the process's N-th RDMA write, "
     "softnicD:PORT:N that port of softnicD (its QPs fail; the verbs transport moves their chunks "
     "to the other ports' QPs)."},
    {"GDR_IB_MAX_WR", Type::Int, "128", "Data writes in flight per peer, at most."},
    {"GDR_IB_TC", Type::Int, "0", "Traffic class (RoCE) of the verbs transport's QPs."},
    {"GDR_IB_SL", Type::Int, "0", "Service level of the verbs transport's QPs."},
    {"GDR_IB_TIMEOUT", Type::Int, "20",
     "Local ACK timeout exponent (4.096 us * 2^n, 20: about 4 s) of the QPs; short ones retransmit "
     "spuriously on loaded hosts."},
    {"GDR_IB_RETRY_CNT", Type::Int, "7", "Transport retries before a QP reports the peer gone."},
    {"GDR_IB_CC", Type::String, "auto",
     "Congestion control of each verbs connection: off (only the credits limit bytes in flight), "
     "fixed (a constant window, GDR_IB_CC_WINDOW), linerate (start at the full window, only "
     "decrease) or auto (startup, AIMD around the delay target, probe +5%). docs/congestion.md."},
    {"GDR_IB_CC_TARGET_US", Type::Int, "500",
     "Congestion control: queueing delay of a chunk (above the base delay of its size) that counts "
     "as congestion, in microseconds."},
    {"GDR_IB_CC_INCREASE", Type::Int, "65536",
     "Congestion control (auto): bytes added to the window per round without congestion."},
    {"GDR_IB_CC_DECREASE", Type::Int, "70",
     "Congestion control: percent of the window kept on congestion (at most once per round)."},
    {"GDR_IB_CC_PROBE_MS", Type::Int, "100",
     "Congestion control (auto): how often the stable phase tries the window +5%, in ms."},
    {"GDR_IB_CC_WINDOW", Type::Int, "1048576",
     "Congestion control (fixed): the window of bytes in flight per connection."},
    {"GDR_IB_REG_CACHE", Type::Bool, "1",
     "Keep NIC registrations of buffers registered with gdrCommRegister or allocated by "
     "gdrMemAlloc "
     "until they are deregistered or freed (0: register every buffer per operation). Other buffers "
     "are always registered per operation, so memory freed behind the library's back is never "
     "stale."},
    {"GDR_NET_GDR", Type::Int, "-1",
     "GPU memory over the network: -1 auto (dma-buf, else nvidia-peermem, else staged), 0 always "
     "staged, "
     "1 GPUDirect wherever the hardware allows, even beyond GDR_NET_GDR_LEVEL. GPUDirect registers "
     "device send buffers with the NIC (dma-buf or nvidia-peermem); without it they are staged. "
     "The "
     "decision and its reason are logged (GDR_DEBUG_SUBSYS=NET) and shown by gdr-info."},
    // device buffers, the cuda_ipc transport
    {"GDR_CUDA_IPC", Type::Bool, "1",
     "Run collectives on device buffers as fused kernels over CUDA IPC when every rank is on one "
     "host "
     "(0: the staged path through host memory)."},
    {"GDR_CUDA_IPC_CHUNK_BYTES", Type::Int, "131072",
     "Staging bytes per kernel block and source rank (a multiple of 16); each rank allocates "
     "2 * nranks * 256 of them (and 2 * nranks * 128 KiB of LL packets)."},
    {"GDR_CUDA_IPC_BLOCKS", Type::Int, "128",
     "Most thread blocks one cuda_ipc kernel uses (1-256)."},
    {"GDR_CUDA_IPC_ALGO", Type::String, "auto",
     "Deprecated (logs a warning): the old name of GDR_ALGO=allreduce=oneshot or twoshot, "
     "which wins when both are set. auto, oneshot or twoshot."},
    {"GDR_CUDA_IPC_ONESHOT_BYTES", Type::Int, "0",
     "Auto picks one-shot all-reduce up to this many bytes, two-shot above (0: below 16 MiB with "
     "two "
     "ranks, up to 256 KiB with more)."},
    {"GDR_CUDA_IPC_LL_BYTES", Type::Int, "65536",
     "Auto picks the LL all-reduce (flagged packets, no barrier) up to this many bytes, at most "
     "65536 (the LL area, the default); 0: only when GDR_ALGO=allreduce=ll forces it."},
    {"GDR_CUDA_IPC_WINDOWS", Type::Bool, "1",
     "All-reduces on windows (gdrCommWindowRegister with GDR_WIN_SYMMETRIC, "
     "ncclCommWindowRegister with NCCL_WIN_COLL_SYMMETRIC) read and write the peers' buffers "
     "directly, with no copy through staging (0: they take the staging kernels like any buffer)."},
    {"GDR_CUDA_IPC_PDL", Type::Bool, "1",
     "Launch the LL all-reduce with programmatic dependent launch, so its launch overlaps the "
     "kernel before it on the stream (0: a plain launch)."},
    {"GDR_CUDA_IPC_TWOSHOT_BLOCKS", Type::Int, "256",
     "Most thread blocks of the two-shot all-reduce kernel (1-256)."},
    {"GDR_CUDA_IPC_EXCHANGE_BLOCKS", Type::Int, "256",
     "Most thread blocks of all-gather and all-to-all with at least 64 MiB per peer (1-256)."},
    {"GDR_STAGED_CHUNK_BYTES", Type::Int, "1048576",
     "Segment of the staged device path (device buffers over a host transport; same on every "
     "rank): "
     "copies of one segment overlap the transfer of its neighbours."},
    {"GDR_DIRECT_ORDER", Type::String, "auto",
     "How the GPUDirect device path orders its network part with the caller's stream: flags (the "
     "stream writes a host-mapped start word and waits for a done word, the call returns at "
     "once; see GDR_DIRECT_WAIT), host (the call waits for the stream, runs the network part, "
     "then queues the reduction) or auto: flags where CUDA loads modules eagerly "
     "(CUDA_MODULE_LOADING=EAGER), host otherwise (under lazy loading a kernel's first launch "
     "while a stream waits on a flag can deadlock the process)."},
    {"GDR_DIRECT_WAIT", Type::String, "stream",
     "In the GPUDirect path's flags order, how the caller's stream waits for the network part: "
     "stream (cuStreamWaitValue32) or kernel (a one-thread kernel polls the done word, holding "
     "one thread block while it waits)."},
    {"GDR_HELPER_AFFINITY", Type::String, "auto",
     "auto: a helper thread (staged-path progress, crypto workers) of a process bound to one CPU "
     "runs on any "
     "CPU of the process's cpuset, so it does not take turns with the caller's thread; inherit: "
     "keep the binding."},
    // bootstrap from a launcher's environment (gdrCommInitFromEnv)
    {"GDR_BOOTSTRAP", Type::String, "auto",
     "gdrCommInitFromEnv: auto picks the first that fits of PMIx (PMIX_RANK, PMIX_NAMESPACE), "
     "torchrun "
     "(MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE), Slurm (SLURM_PROCID, SLURM_NTASKS, "
     "GDR_COMM_ID), GDR_COMM_ID "
     "with RANK and WORLD_SIZE; pmix, torchrun, slurm or comm_id forces one."},
    {"GDR_COMM_ID", Type::String, "",
     "host:port of the TCP rendezvous of gdrCommInitFromEnv, which rank 0 serves and the others "
     "connect "
     "to (torchrun: default MASTER_ADDR:MASTER_PORT+1)."},
    {"GDR_PMIX_LIB", Type::String, "", "Load libpmix from this path instead of libpmix.so.2."},
    // security: authenticated connections, encryption between hosts
    {"GDR_AUTH_KEY_FILE", Type::String, "",
     "Read the job's secret from this file (mode 600, at least 16 bytes; every rank needs it) "
     "instead of "
     "drawing one at random; then the unique id carries no key."},
    {"GDR_AUTH_TIMEOUT_MS", Type::Int, "10000",
     "How long a listening rank waits for a connecting peer to finish authenticating before "
     "refusing it."},
    {"GDR_ENCRYPT", Type::Bool, "0",
     "Encrypt and authenticate traffic between hosts (AES-256-GCM): socket and verbs transports on "
     "the "
     "CPU, device buffers of data-movement operations on the GPU; must be the same on every rank."},
    {"GDR_ENCRYPT_THREADS", Type::Int, "-1",
     "Worker threads per process sealing and opening GDR_ENCRYPT records and chunks of large "
     "socket and verbs transfers, "
     "pipelined with the transfer; 0 does it on the progress thread; -1: half the cores, at most "
     "4."},
    // compat: libnccl.so.2 and the PMPI layer (docs/compat.md)
    {"GDR_PMPI", Type::Bool, "1",
     "PMPI layer (libgdrcoll_mpi.so): 0 passes every call to the MPI library untouched."},
    {"GDR_PMPI_HOST", Type::Bool, "0",
     "PMPI layer: also route collectives on host buffers to gdrcoll (default: device buffers "
     "only)."},
    {"NCCL_DEBUG", Type::String, "",
     "NCCL-compatible library: NCCL's log level (VERSION, WARN, INFO, TRACE), used as GDR_DEBUG "
     "when that "
     "is unset."},
    {"NCCL_DEBUG_SUBSYS", Type::String, "",
     "NCCL-compatible library: NCCL's subsystem list, mapped to GDR_DEBUG_SUBSYS when that is "
     "unset."},
    {"NCCL_DEBUG_FILE", Type::String, "",
     "NCCL-compatible library: used as GDR_DEBUG_FILE when that is unset (%h host, %p pid)."},
    {"NCCL_COMM_ID", Type::String, "",
     "NCCL-compatible library: host:port that ncclGetUniqueId's ids name; rank 0 serves the "
     "rendezvous there "
     "inside ncclCommInitRank."},
};

}  // namespace

// One value per row of kParams: the environment's, or none where unset.
struct Snapshot {
  std::vector<std::optional<std::string>> values;
};

namespace {

thread_local const Snapshot* tSnapshot = nullptr;

std::string envOrDefault(const Info& i) {
  if (const Snapshot* s = tSnapshot) {
    const auto& v = s->values[static_cast<size_t>(&i - kParams.data())];
    return v ? *v : std::string(i.defaultValue);
  }
  const char* v = std::getenv(i.name);
  return v ? std::string(v) : std::string(i.defaultValue);
}

}  // namespace

std::shared_ptr<const Snapshot> snapshot() {
  auto s = std::make_shared<Snapshot>();
  s->values.reserve(kParams.size());
  for (const Info& i : kParams) {
    if (tSnapshot) {
      s->values.push_back(tSnapshot->values[s->values.size()]);
    } else {
      const char* v = std::getenv(i.name);
      s->values.push_back(v ? std::optional<std::string>(v) : std::nullopt);
    }
  }
  return s;
}

UseSnapshot::UseSnapshot(std::shared_ptr<const Snapshot> s) : mine_(std::move(s)), before_(tSnapshot) {
  tSnapshot = mine_.get();
}
UseSnapshot::~UseSnapshot() { tSnapshot = before_; }

const std::vector<Info>& all() { return kParams; }

const Info& find(const char* name) {
  for (const Info& i : kParams)
    if (std::strcmp(i.name, name) == 0) return i;
  throw InternalError(strprintf("unregistered parameter %s", name));
}

const char* typeName(Type t) {
  switch (t) {
    case Type::Int: return "int";
    case Type::Bool: return "bool";
    case Type::String: return "string";
  }
  return "?";
}

std::string current(const Info& info) { return envOrDefault(info); }

bool isSet(const char* name) {
  const Info& i = find(name);
  if (const Snapshot* s = tSnapshot) return s->values[static_cast<size_t>(&i - kParams.data())].has_value();
  return std::getenv(i.name) != nullptr;
}

int64_t getInt(const char* name) {
  const Info& i = find(name);
  if (i.type != Type::Int) throw InternalError(strprintf("%s is not an int parameter", name));
  std::string v = envOrDefault(i);
  errno = 0;
  char* end = nullptr;
  long long x = std::strtoll(v.c_str(), &end, 0);
  // Accept k/m/g suffixes for sizes.
  if (end && *end) {
    if (!strcasecmp(end, "k")) x <<= 10;
    else if (!strcasecmp(end, "m")) x <<= 20;
    else if (!strcasecmp(end, "g")) x <<= 30;
    else end = nullptr;
  }
  if (v.empty() || errno || !end)
    throw InvalidArgument(strprintf("%s=%s is not an integer", name, v.c_str()));
  return x;
}

bool getBool(const char* name) {
  const Info& i = find(name);
  if (i.type != Type::Bool) throw InternalError(strprintf("%s is not a bool parameter", name));
  std::string v = envOrDefault(i);
  if (v == "1" || !strcasecmp(v.c_str(), "true") || !strcasecmp(v.c_str(), "yes") ||
      !strcasecmp(v.c_str(), "on"))
    return true;
  if (v == "0" || !strcasecmp(v.c_str(), "false") || !strcasecmp(v.c_str(), "no") ||
      !strcasecmp(v.c_str(), "off"))
    return false;
  throw InvalidArgument(strprintf("%s=%s is not a boolean (use 0 or 1)", name, v.c_str()));
}

std::string getString(const char* name) {
  const Info& i = find(name);
  if (i.type != Type::String) throw InternalError(strprintf("%s is not a string parameter", name));
  return envOrDefault(i);
}

}  // namespace gdr::param

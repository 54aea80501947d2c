// A cluster as the simulator sees it: hosts of identical ranks, each rank a
// GPU or a host process; the link classes between them with their measured
// latency and bandwidth; and the network between hosts (NICs per host, a
// two- or three-level fat tree with oversubscription, rail-optimised or
// not). The topology comes from a preset or a description file; the link
// parameters come from a calibration file (scripts/sim/calibrate.py writes
// it from our own gdr-bench runs), so no rate here is typed in by hand.
//
// File syntax (description and calibration alike): `key = value` lines,
// `#` comments. See docs/simulator.md for every key.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace gdr::sim {

// How two ranks reach each other.
enum class LinkClass : int {
  Shm,     // host memory between processes of one host, eager through slots
  ShmCma,  // host memory, single-copy (process_vm_readv) from the CMA threshold
  NvLink,  // GPU to GPU inside a host
  Nic,     // a NIC port between hosts (also what the fat tree is built of)
  Socket,  // TCP between hosts or over loopback
  kCount,
};
const char* linkClassName(LinkClass c);

struct LinkParams {
  double latencyUs = 0;  // alpha per message
  double gbps = 0;       // GB/s (1e9 bytes/s) one direction, one flow
};

struct Cluster {
  std::string name;
  // Ranks.
  int hosts = 1;
  int ranksPerHost = 2;
  bool device = false;   // ranks are GPUs (device buffers) rather than host processes
  int coresPerHost = 0;  // host ranks: cores they share (0: one per rank)
  // Between hosts.
  int nicsPerHost = 1;
  int treeLevels = 2;             // 1: one switch; 2: leaf/spine; 3: leaf/spine/core
  int leafPorts = 32;             // host-facing ports of one leaf switch
  int podLeaves = 16;             // leaves per pod (three levels)
  double oversubscription = 1.0;  // leaf (and pod) downlink / uplink capacity
  bool railOptimised = true;
  std::string hostTransport = "shm";  // shm or socket between ranks of one host (host ranks)
  std::string netTransport = "nic";   // nic or socket between hosts
  // Measured parameters (calibration).
  LinkParams link[static_cast<int>(LinkClass::kCount)];
  size_t cmaThreshold = 256u << 10;         // shm: single-copy from here (per collective below)
  size_t cmaThresholdExchange = 64u << 10;  // all-gather, all-to-all(v), reduce-scatter
  size_t cmaThresholdReduce = 1u << 20;
  // Broadcast's where every rank of the host has a core of its own
  // (oversub() 1): the library's
  // CollTraits::singleCopyFromOwnCores.
  size_t cmaThresholdOwnCores = 32u << 10;
  // A single-copy message of a collective whose traits share the copy
  // (broadcast) is copied by both ranks, the sender writing pieces while it
  // would wait (GDR_SHM_CMA_SHARE): two cores on one message.
  bool cmaShare = true;
  double cmaShareGain = 2.0;  // the shared copy's rate over one core's (fitted: np 2 broadcast)
  // A message step's own cost on a host rank whose schedule runs without
  // the executor's runner (coll::runsWithoutRunner); negative: send_us.
  double shortSendUs = -1;
  // A transport's FIFO per ordered pair: an eager message takes
  // ceil(bytes / slot_bytes) slots until its receiver has taken it out; a
  // sender with no free slots waits. Messages above slots x slot_bytes are
  // rendezvous (shm: single-copy from the threshold instead).
  int slots = 8;
  size_t chunkBytes = 0;  // GDR_CHUNK_BYTES: the schedules' pipelining unit (0: whole blocks)
  size_t slotBytes = 64u << 10;
  // The socket transport has no slots and no rendezvous: a send is done once
  // the kernel has its bytes. What one direction of a connection holds
  // unread is the sender's SO_SNDBUF plus the receiver's SO_RCVBUF, 4 MiB
  // each (socket_endpoint.cc); a message above it waits for its receiver.
  size_t socketBufferBytes = 8u << 20;
  // Hosts over TCP (net_transport socket): what a host's port, each way,
  // carries while two or more flows share it, as a fraction of its one-flow
  // rate; TCP flows through one tbf-shaped port do not fill it between them
  // the way one flow does (fitted: calibrate.py). NIC ports (verbs) are not
  // affected: no fabric here to measure them.
  double socketSharedEff = 1.0;
  // The measurement a prediction mirrors. 0: the steady period of
  // back-to-back calls. Otherwise gdr-bench's --iters and --warmup (a
  // tenth and a fifth of them above 1 MiB, as gdr-bench does): warm-up
  // calls, a barrier, then the timed calls; each rank's time per call,
  // averaged over the ranks. A few timed calls that the socket buffers
  // absorb read faster than the steady period.
  int benchIters = 0, benchWarmup = 0;
  double launchUs = 0;    // per call: entry, selection, set-up
  double sendUs = 0;      // CPU cost of posting one message
  double reduceGBps = 0;  // host reduction rate of one core (bytes of output per second / 1e9)
  double copyGBps = 0;    // host memcpy rate of one core
  double schedUs = 0;     // per message, per extra rank sharing a core (oversubscribed hosts)
  // Host messages of at most small_lane_bytes take the shm small lane, which
  // a waiting rank polls first: they pay no sched_us.
  size_t smallLaneBytes = 320;
  // A shm message of at most inline_bytes travels inside its slot's header
  // line, so the receiver's one miss on the sequence word brings the data
  // too: inline_us less latency than one whose payload has lines of its own.
  size_t inlineBytes = 16;
  double inlineUs = 0;
  // Core time a receiver burns spinning before it yields, per receive that
  // has to wait, where ranks time-share the cores (GDR_SPIN_BEFORE_YIELD).
  double spinUs = 0;
  // Where ranks outnumber cores and yield_us > 0, the ranks run in turns
  // (sim/turns.h) instead of sharing the cores as flows: a failed poll and
  // its sched_yield cost yield_us of the core, and a rank that works longer
  // than quantum_us is preempted when another of its core's ranks waits
  // (spin_us and sched_us are then not used).
  double yieldUs = 0;
  // A yield's cost is yield_us at 2 ranks per core (or fewer) and grows by
  // yield_growth per doubling of ranks per core: the process the core
  // switches to finds less of its state in the caches the more share them.
  // 3 is the rule before session 20 (yield_us x (ranks per core - 1) at 2
  // and 4 ranks per core); the calibration fits it.
  double yieldGrowth = 3.0;
  // An eager shm message on the main lane (above small_lane_bytes): receiver
  // CPU per message, x ranks per core where they outnumber the cores.
  double laneUs = 0;
  // A call whose schedule is not cached (all-to-all-v: its counts change
  // per call) builds it: per step of the rank's list.
  double buildUs = 0;
  // What all single-copy reads of one host move at once (GB/s; 0: no limit
  // beyond the cores they hold).
  double cmaMemGBps = 0;
  double quantumUs = 4000;  // one scheduler tick at HZ=250 (a task runs out its slice to the tick)
  // Host memory rates above hold while a call's buffers (all ranks of a host
  // together) fit in cache_bytes; beyond it each byte that does not fit
  // moves at the *_mem rate instead (a harmonic blend, see effectiveRates;
  // the eager shm link, a pipeline, at the slower of its rate and a copy's,
  // or a plain copy where ranks take turns, unless mem.shm_gbps is given).
  size_t cacheBytes = 0;  // 0: no cache model
  double shmMemGBps = 0, shmCmaMemGBps = 0, copyMemGBps = 0, reduceMemGBps = 0;
  // A second, slower tier: bytes beyond far_bytes move at the *_mem rates
  // times far_factor (the 2-core VM's memory slows again past tens of MiB).
  size_t farBytes = 0;  // 0: one tier
  double farFactor = 1.0;
  // Fused device kernels (one call does the whole collective over NVLink).
  double kernelLaunchUs = 0;    // launch + the kernel's barrier
  double kernelStoreGBps = 0;   // peer stores per direction, all blocks of one GPU
  double kernelLocalGBps = 0;   // local reads and writes of one GPU (HBM)
  double kernelReduceGBps = 0;  // reduction throughput of one GPU

  int nranks() const { return hosts * ranksPerHost; }
  int hostOf(int rank) const { return rank / ranksPerHost; }
  // Every rank alone on its host, as a communicator's CollArgs::aloneOnHost.
  bool aloneOnHost() const { return ranksPerHost == 1 && nranks() > 1; }
  // Ranks per core on a host (1 when every rank has its own core).
  double oversub() const;
};

// A preset by name (see presetNames()); "hosts=N" style overrides are not
// parsed here: the caller applies a description file or set() afterwards.
bool preset(const std::string& name, Cluster* out);
std::vector<std::string> presetNames();

// Applies one `key = value`; false with *err set for an unknown key or a bad
// value.
bool set(Cluster& c, const std::string& key, const std::string& value, std::string* err);
// Applies every line of a file (description or calibration); a
// `preset = NAME` line applies that preset's topology (the rates read so far
// stay), `calibration = FILE` reads
// that file too (relative to this one's folder). Throws InvalidArgument.
void load(Cluster& c, const std::string& path);
// Applies `key = value; key = value` (command line overrides).
void apply(Cluster& c, const std::string& assignments);
// Every key and its current value, as the file syntax (gdr-sim --dump).
std::string dump(const Cluster& c);
// The host rates for a call whose buffers span `footprint` bytes of a host.
Cluster effectiveRates(const Cluster& c, double footprint);
// Throws InvalidArgument naming what is missing (a link class a path
// needs with no calibrated rate, a bad count).
void validate(const Cluster& c);

}  // namespace gdr::sim

#include "paths/device.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "collectives/fused.h"
#include "core/cuda.h"
#include "core/datatype.h"
#include "core/error.h"
#include "core/log.h"
#include "core/memory_kind.h"
#include "core/params.h"
#include "paths/broadcast_from.h"
#include "paths/device_windows.h"
#include "paths/host.h"
#include "paths/p2p.h"
#include "paths/single_rank.h"
#include "paths/staged/path.h"

#if GDR_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "paths/ipc/kernels.h"
#include "transport/cuda_ipc/ipc_context.h"
#endif

namespace gdr::paths {

bool isDeviceCallAsked(const void* a, const void* b) {
  int dev = 0, host = 0;
  if (b == a) b = nullptr;  // in place: one pointer query (each costs a runtime call)
  for (const void* p : {a, b}) {
    if (!p || p == GDR_IN_PLACE) continue;
    (memoryKind(p) == MemKind::Device ? dev : host)++;
  }
  if (dev && host)
    throw InvalidArgument("the send and receive buffers must both be host memory or both be device memory");
  return dev > 0;
}

#if GDR_HAVE_CUDA

namespace {

using coll::CollKind;
using transport::cuda_ipc::IpcContext;

// All-reduce algorithm choice, read once per communicator (a getenv per
// call shows in small-message latency).
struct AlgoPolicy {
  std::string algoSpec;   // GDR_ALGO as frozen at init, plus the deprecated alias
  size_t oneShotMax = 0;  // 0: by rank count (collectives/fused.h)
  size_t llMax = 0;       // the LL kernel up to this many bytes (capped by the LL area)
  bool llProgrammatic = true;
  int twoShotBlocks = 256;
  int wideExchangeBlocks = 256;  // all-gather and all-to-all with >= 64 MiB per peer
  bool windows = true;           // all-reduces on windows run the window kernel
};

// The device path's per-communicator state (Communicator::devicePath).
struct DeviceState final : PathState {
  explicit DeviceState(status::DeviceOps& b) : board(b) {}
  ~DeviceState() override {
    if (ipc) board.detach();  // before the context frees the words
  }
  bool tried = false;
  std::unique_ptr<IpcContext> ipc;
  WindowTable windows;  // after ipc: its mappings close first
  std::atomic<uint64_t> windowCalls{0};
  std::string whyStaged;
  AlgoPolicy policy;
  status::DeviceOps& board;
};

DeviceState& stateOf(Communicator& comm) {
  return comm.devicePath().get<DeviceState>(
      [&comm] { return std::make_unique<DeviceState>(comm.status().device()); });
}

// A fused kernel on the status board (comm/device_ops.h): the view it is
// launched with counts its completion unless the stream is being captured
// (a graph's replays would count completions nobody launched).
ipc::IpcView boardedView(const IpcContext& ctx, status::DeviceOps& board, cudaStream_t s) {
  ipc::IpcView v = ctx.view();
  if (!board.on()) return v;
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(s, &cs) != cudaSuccess) {
    cudaGetLastError();
    return v;
  }
  v.countDone = cs == cudaStreamCaptureStatusNone;
  return v;
}

// Fails the communicator if a kernel's barrier timed out (a peer died or
// never called the collective).
void checkDeviceErrors(Communicator& comm, const IpcContext& ctx) {
  if (unsigned bits = ctx.deviceErrors()) {
    std::string peers;
    for (int p = 0; p < ipc::kMaxLocalRanks; ++p)
      if (bits >> p & 1u) peers += (peers.empty() ? "" : ",") + std::to_string(p);
    std::string text = strprintf(
        "a device-side wait for rank(s) %s timed out after %lld ms (GDR_TIMEOUT_MS): a peer died or never "
        "called the matching operation",
        peers.c_str(), static_cast<long long>(comm.config().timeoutMs));
    comm.fail(gdrTimeout, text);
    throw TimeoutError(text);
  }
}

// The communicator as the cuda_ipc back end's set-up sees it; its all-gather
// is the host path's.
transport::cuda_ipc::IpcPeers ipcPeersOf(Communicator& comm) {
  transport::cuda_ipc::IpcPeers p;
  p.rank = comm.rank();
  p.size = comm.size();
  for (int r = 0; r < comm.size() && p.firstRemote < 0; ++r)
    if (!comm.sameHost(r)) p.firstRemote = r;
  p.socketForced = comm.config().transport == "socket";
  p.timeoutMs = comm.config().timeoutMs;
  p.allgather = [&comm](const void* mine, void* all, size_t bytes) {
    CollCall call{CollKind::AllGather, mine, all, bytes, gdrUint8};
    runHostCollective(comm, call);
  };
  return p;
}

// The IPC context, created at the communicator's first device operation of
// any kind, send and receive included: the set-up is one host all-gather
// over the communicator, which every rank joins at its own first device
// operation. A two-rank communicator (the pair one made for point-to-point)
// always meets there; with more ranks, ranks whose first device operation
// is a send or receive wait for the others' first device operation (bounded
// by GDR_TIMEOUT_MS). Null when the staged path applies.
IpcContext* ipcFor(Communicator& comm) {
  DeviceState& st = stateOf(comm);
  if (!st.tried) {
    st.tried = true;
    st.policy.algoSpec = comm.config().algo;
    // GDR_CUDA_IPC_ALGO is the old name of GDR_ALGO=allreduce=oneshot|twoshot,
    // which wins when both are set.
    const std::string legacy = param::getString("GDR_CUDA_IPC_ALGO");
    if (legacy != "auto" && legacy != "oneshot" && legacy != "twoshot")
      throw InvalidArgument("GDR_CUDA_IPC_ALGO=" + legacy +
                            " is not one of auto, oneshot, twoshot");
    if (legacy != "auto") {
      coll::Algo forced;
      const bool overridden = coll::forcedAlgo(st.policy.algoSpec, CollKind::AllReduce, &forced);
      GDR_WARN(kColl, "GDR_CUDA_IPC_ALGO is deprecated: set GDR_ALGO=allreduce=%s instead%s",
               legacy.c_str(),
               overridden ? " (GDR_ALGO names an all-reduce algorithm already and wins)" : "");
      if (!overridden) st.policy.algoSpec += ",allreduce=" + legacy;
    }
    st.policy.oneShotMax = static_cast<size_t>(param::getInt("GDR_CUDA_IPC_ONESHOT_BYTES"));
    const int64_t llMax = param::getInt("GDR_CUDA_IPC_LL_BYTES");
    if (llMax < 0 || static_cast<size_t>(llMax) > ipc::kLLBytes)
      throw InvalidArgument(strprintf("GDR_CUDA_IPC_LL_BYTES must be in [0, %zu]", ipc::kLLBytes));
    st.policy.llMax = static_cast<size_t>(llMax);
    st.policy.llProgrammatic = param::getBool("GDR_CUDA_IPC_PDL");
    st.policy.twoShotBlocks = static_cast<int>(param::getInt("GDR_CUDA_IPC_TWOSHOT_BLOCKS"));
    if (st.policy.twoShotBlocks < 1 || st.policy.twoShotBlocks > ipc::kMaxBlocks)
      throw InvalidArgument(strprintf("GDR_CUDA_IPC_TWOSHOT_BLOCKS must be in [1, %d]", ipc::kMaxBlocks));
    st.policy.wideExchangeBlocks = static_cast<int>(param::getInt("GDR_CUDA_IPC_EXCHANGE_BLOCKS"));
    if (st.policy.wideExchangeBlocks < 1 || st.policy.wideExchangeBlocks > ipc::kMaxBlocks)
      throw InvalidArgument(
          strprintf("GDR_CUDA_IPC_EXCHANGE_BLOCKS must be in [1, %d]", ipc::kMaxBlocks));
    st.policy.windows = param::getBool("GDR_CUDA_IPC_WINDOWS");
    st.ipc = IpcContext::create(ipcPeersOf(comm), &st.whyStaged);
    if (st.ipc) st.board.attach(st.ipc->boardWords(), "cuda_ipc");
    if (!st.ipc)
      GDR_WARN(kColl, "device buffers use the staged path (stream sync + host copies + host transport): %s",
               st.whyStaged.c_str());
  }
  if (st.ipc) checkDeviceErrors(comm, *st.ipc);
  return st.ipc.get();
}

// Measured on 2 x H200 (NV18), bench/results/h200x2.md: one-shot with up to
// 128 blocks is fastest below 16 MiB (one barrier; for two ranks both
// algorithms move the whole message over the link once); from 16 MiB
// two-shot with 256 blocks (two per SM, so one block's barrier wait overlaps
// another's copies) wins, as it halves each GPU's reduction and local
// traffic. With more ranks two-shot also moves less: 2(n-1)/n against n-1.
// Up to GDR_CUDA_IPC_LL_BYTES (64 KiB, the whole LL area, by default) the
// LL kernel goes first: no barrier, no fence, and its launch overlaps the
// kernel before it. On one H200 it costs 1.45-1.97 us per operation under
// graph replay against one-shot's 4.66-5.30 (8 B - 64 KiB), and its host
// call is no dearer; on 2 x H200 one-shot took 7.4-8.2 us at every size to
// 64 KiB, bound by launch and barrier, not bytes. LL's packets double the
// bytes on the link: 128 KiB per peer at 64 KiB, about 0.35 us at NVLink's
// rate, well under the 2.7-3.3 us it saves. So LL takes every size it fits;
// the 2-GPU run (bench/results/h200x2.md, "Still to run") is to confirm it.
// The choice is the selector's (collectives/select.cc: GDR_ALGO forces
// any kernel), whose default rule the simulator prices too.
coll::FusedKind allReduceKind(const AlgoPolicy& pol, const ipc::IpcView& v, size_t bytes) {
  return coll::selectFusedAllReduce(v.nranks, bytes, pol.oneShotMax, pol.algoSpec, pol.llMax,
                                    ipc::kLLBytes);
}

// Exchanges whose per-peer size every rank knows alike (all-gather,
// all-to-all) take a wider grid for very large messages: on 2 x H200, 256
// blocks beat 128 by 3-5% from 64 MiB per peer and lose below 32 MiB
// (bench/results/h200x2.md, run 5; broadcast showed no difference). Pairs
// must agree on the grid, so all-to-all-v and send/recv keep the default.
cudaError_t launchUniformExchange(const AlgoPolicy& pol, const ipc::IpcView& v, const ipc::Exchange& x,
                                  size_t perPeerBytes, cudaStream_t s) {
  if (perPeerBytes < (64u << 20)) return ipc::launchExchange(v, x, s);
  ipc::IpcView wide = v;
  wide.maxBlocks = pol.wideExchangeBlocks;
  return ipc::launchExchange(wide, x, s);
}

// An all-reduce whose input and output both lie in windows (at the same
// offset on every rank, the symmetric contract) runs the window kernel; false
// when they do not, and the staging kernels run.
bool tryWindowAllReduce(const WindowTable& wins, const ipc::IpcView& v, const AlgoPolicy& pol,
                        const ipc::ReduceCall& r, size_t bytes, cudaStream_t s) {
  if (!pol.windows || !wins.any()) return false;
  ipc::WindowAllReduce w;
  if (!wins.find(r.input, bytes, const_cast<void**>(w.input)) ||
      !wins.find(r.output, bytes, w.output))
    return false;
  w.count = r.count;
  w.type = r.type;
  w.op = r.op;
  ipc::IpcView wide = v;  // two blocks per SM, as two-shot
  wide.maxBlocks = pol.twoShotBlocks;
  checkCuda(ipc::launchWindowAllReduce(wide, w, s), "launching the cuda_ipc window kernel");
  return true;
}

void runIpc(Communicator& comm, const ipc::IpcView& v, const AlgoPolicy& pol,
            const WindowTable& wins, const CollCall& call, cudaStream_t s) {
  const int n = comm.size(), me = comm.rank();
  const size_t eb = gdr::typeSize(call.type);
  auto in = [&](const void* p) { return static_cast<const char*>(p); };
  cudaError_t rc = cudaSuccess;
  switch (call.kind) {
    case CollKind::AllReduce:
    case CollKind::Reduce:
    case CollKind::ReduceScatter: {
      ipc::ReduceCall r;
      r.type = call.type;
      r.op = call.op;
      r.count = call.count;
      r.root = call.root;
      r.output = call.recvbuf;
      r.input = call.inPlace ? call.recvbuf : call.sendbuf;
      if (call.kind == CollKind::AllReduce) {
        const coll::FusedKind kind = allReduceKind(pol, v, call.count * eb);
        if (kind == coll::FusedKind::LL) {
          checkCuda(ipc::launchLLAllReduce(v, r, pol.llProgrammatic, s),
                    "launching the cuda_ipc LL kernel");
          return;
        }
        if (tryWindowAllReduce(wins, v, pol, r, call.count * eb, s)) {
          stateOf(comm).windowCalls.fetch_add(1, std::memory_order_relaxed);
          return;
        }
        r.mode =
            kind == coll::FusedKind::OneShot ? ipc::ReduceMode::OneShot : ipc::ReduceMode::TwoShot;
        if (r.mode == ipc::ReduceMode::TwoShot) {
          // Every rank picks the same grid (same size, same policy).
          ipc::IpcView wide = v;
          wide.maxBlocks = pol.twoShotBlocks;
          checkCuda(ipc::launchReduce(wide, r, s), "launching the cuda_ipc kernel");
          return;
        }
      } else if (call.kind == CollKind::Reduce) {
        r.mode = ipc::ReduceMode::Reduce;
        if (me != call.root) r.output = nullptr;
      } else {
        // In place the result lands at the start of the input. The kernel
        // works unit by unit, and the output unit [lo, hi) is input block
        // 0's [lo, hi), already pushed earlier in the same unit: safe as is.
        r.mode = ipc::ReduceMode::ReduceScatter;
      }
      rc = ipc::launchReduce(v, r, s);
      break;
    }
    case CollKind::Broadcast: {
      ipc::Exchange x;
      const size_t bytes = call.count * eb;
      for (int p = 0; p < n; ++p) {
        if (p == me) continue;
        if (me == call.root) {
          x.src[p] = in(call.sendbuf);  // recvbuf, or gdrBroadcastFrom's sendbuf
          x.sendBytes[p] = bytes;
        } else if (p == call.root) {
          x.dst[p] = static_cast<char*>(call.recvbuf);
          x.recvBytes[p] = bytes;
        }
      }
      if (me == call.root && call.sendbuf != call.recvbuf) {
        // The root's own copy rides with its sends to the next rank: the
        // source is read once (NCCL's out-of-place broadcast does as much).
        x.src[me] = in(call.sendbuf);
        x.dst[me] = static_cast<char*>(call.recvbuf);
        x.sendBytes[me] = bytes;
        x.localWith = (me + 1) % n;
      }
      rc = ipc::launchExchange(v, x, s);
      break;
    }
    case CollKind::AllGather: {
      ipc::Exchange x;
      const size_t bytes = call.count * eb;
      char* out = static_cast<char*>(call.recvbuf);
      const char* mine = call.inPlace ? out + me * bytes : in(call.sendbuf);
      for (int p = 0; p < n; ++p) {
        x.src[p] = mine;
        x.dst[p] = out + p * bytes;
        x.sendBytes[p] = p == me && call.inPlace ? 0 : bytes;
        x.recvBytes[p] = p == me ? 0 : bytes;
      }
      rc = launchUniformExchange(pol, v, x, bytes, s);
      break;
    }
    case CollKind::AllToAll:
    case CollKind::AllToAllv: {
      ipc::Exchange x;
      const bool vee = call.kind == CollKind::AllToAllv;
      const char* src = in(call.inPlace ? call.recvbuf : call.sendbuf);
      char* out = static_cast<char*>(call.recvbuf);
      for (int p = 0; p < n; ++p) {
        const size_t sc = vee ? (call.inPlace ? call.recvCounts[p] : call.sendCounts[p]) : call.count;
        const size_t sd = vee ? (call.inPlace ? call.recvDispls[p] : call.sendDispls[p]) : p * call.count;
        const size_t rcnt = vee ? call.recvCounts[p] : call.count;
        const size_t rd = vee ? call.recvDispls[p] : p * call.count;
        x.src[p] = src + sd * eb;
        x.dst[p] = out + rd * eb;
        x.sendBytes[p] = sc * eb;
        x.recvBytes[p] = p == me ? 0 : rcnt * eb;
        if (p == me && sc != rcnt)
          throw InvalidArgument(strprintf("rank %d sends %zu elements to itself but receives %zu", me, sc, rcnt));
      }
      rc = vee ? ipc::launchExchange(v, x, s) : launchUniformExchange(pol, v, x, call.count * eb, s);
      break;
    }
    case CollKind::Barrier:
      rc = ipc::launchBarrier(v, s);
      break;
  }
  checkCuda(rc, "launching the cuda_ipc kernel");
}

// ---- the staged path -------------------------------------------------------

// Stream-ordered and pipelined through the progress thread: paths/staged/path.h.
void runStaged(Communicator& comm, const CollCall& call, cudaStream_t s) {
  staged::runCollective(comm, rootCopiedFirst(call, true, reinterpret_cast<gdrStream_t>(s)), s);
}

// ---- send/recv ---------------------------------------------------------------

struct DeviceP2P {
  Communicator* comm;
  bool isSend;
  const void* sendBuf;
  void* recvBuf;
  size_t bytes;
  int peer;
  cudaStream_t stream;
};

// One rank: the k-th send to oneself lands in the k-th receive, one
// cudaMemcpyAsync each.
void selfCopies(const std::vector<DeviceP2P>& ops, cudaStream_t s) {
  std::vector<const DeviceP2P*> sends, recvs;
  for (const auto& o : ops) (o.isSend ? sends : recvs).push_back(&o);
  if (sends.size() != recvs.size())
    throw InvalidUsage("device send/recv to oneself must come in matching pairs inside one group");
  for (size_t k = 0; k < sends.size(); ++k) {
    if (sends[k]->bytes != recvs[k]->bytes)
      throw InvalidArgument("a device send to oneself and its receive differ in size");
    if (sends[k]->bytes && sends[k]->sendBuf != recvs[k]->recvBuf)
      checkCuda(cudaMemcpyAsync(recvs[k]->recvBuf, sends[k]->sendBuf, sends[k]->bytes,
                                cudaMemcpyDeviceToDevice, s),
                "cudaMemcpyAsync (send/recv to oneself)");
  }
}

// Runs one communicator's queued send/recv: the k-th kernel carries the k-th
// send and the k-th receive of every peer (messages between two ranks match
// in order, and both sides count alike).
void runP2P(Communicator& comm, const std::vector<DeviceP2P>& ops) {
  cudaStream_t s = ops.front().stream;
  for (const auto& o : ops)
    if (o.stream != s)
      throw InvalidUsage("device send/recv of one communicator inside a group must use one stream");
  if (comm.size() == 1) return selfCopies(ops, s);
  IpcContext* ctx = ipcFor(comm);
  if (!ctx) {
    std::vector<staged::P2PItem> items;  // the staged path (paths/staged/path.h)
    for (const auto& o : ops)
      items.push_back({o.isSend,
                       static_cast<char*>(o.isSend ? const_cast<void*>(o.sendBuf) : o.recvBuf),
                       o.bytes, o.peer});
    return staged::runP2P(comm, std::move(items), s);
  }
  const int n = comm.size();
  std::vector<std::vector<const DeviceP2P*>> sends(n), recvs(n);
  size_t rounds = 0;
  for (const auto& o : ops) {
    auto& q = o.isSend ? sends[o.peer] : recvs[o.peer];
    q.push_back(&o);
    rounds = std::max(rounds, q.size());
  }
  if (sends[comm.rank()].size() != recvs[comm.rank()].size())
    throw InvalidUsage("device send/recv to oneself must come in matching pairs inside one group");
  {
    ScopedDevice onCtx(ctx->device());
    // The batch is one operation on the board: its last kernel counts.
    DeviceState& st = stateOf(comm);
    const ipc::IpcView boarded = boardedView(*ctx, st.board, s);
    ipc::IpcView plain = ctx->view();
    for (size_t k = 0; k < rounds; ++k) {
      ipc::Exchange x;
      for (int p = 0; p < n; ++p) {
        if (k < sends[p].size()) {
          x.src[p] = static_cast<const char*>(sends[p][k]->sendBuf);
          x.sendBytes[p] = sends[p][k]->bytes;
        }
        if (k < recvs[p].size()) {
          x.dst[p] = static_cast<char*>(recvs[p][k]->recvBuf);
          x.recvBytes[p] = recvs[p][k]->bytes;
        }
      }
      const int me = comm.rank();
      if (x.sendBytes[me] != x.recvBytes[me])
        throw InvalidArgument("a device send to oneself and its receive differ in size");
      checkCuda(ipc::launchExchange(k + 1 == rounds ? boarded : plain, x, s),
                "launching the cuda_ipc send/recv kernel");
    }
    if (boarded.countDone && rounds > 0) {
      const DeviceP2P& o = ops.front();
      size_t bytes = 0;
      for (const auto& x : ops) bytes += x.bytes;
      const bool one = ops.size() == 1;
      st.board.launched(
          status::deviceSig(transport::kP2PKind, gdrUint8, 0, bytes, 0),
          one ? (o.isSend ? status::P2P::Send : status::P2P::Recv) : status::P2P::Batch,
          one ? o.peer : -1);
    }
  }
}

// A lone send/recv (outside any group; groups queue in comm/group.cc and
// hand each communicator's batch to deviceP2PBatch).
void runOne(DeviceP2P op) {
  if (op.peer == op.comm->rank())
    throw InvalidUsage("a device send/recv to oneself must be inside gdrGroupStart/gdrGroupEnd with its match");
  runP2P(*op.comm, {op});
}

}  // namespace

void runDeviceCollective(Communicator& comm, const CollCall& call, gdrStream_t stream) {
  auto s = reinterpret_cast<cudaStream_t>(stream);
  if (comm.size() == 1) {
    const SingleRankCopy c = singleRankCopy(call);
    if (c.bytes)
      checkCuda(cudaMemcpyAsync(c.dst, c.src, c.bytes, cudaMemcpyDeviceToDevice, s),
                "cudaMemcpyAsync (one rank)");
    return;
  }
  if (call.blockAtStart && comm.rank() != 0) {
    // The block moves to its slot first, stream-ordered (paths/host.h).
    const size_t bytes = call.count * gdr::typeSize(call.type);
    char* out = static_cast<char*>(call.recvbuf);
    checkCuda(cudaMemcpyAsync(out + comm.rank() * bytes, out, bytes, cudaMemcpyDeviceToDevice, s),
              "moving this rank's all-gather block to its slot");
  }
  IpcContext* ctx = ipcFor(comm);
  if (ctx) {
    DeviceState& st = stateOf(comm);
    ScopedDevice onCtx(ctx->device());
    const ipc::IpcView v = boardedView(*ctx, st.board, s);
    runIpc(comm, v, st.policy, st.windows, call, s);
    if (v.countDone)
      st.board.launched(status::deviceSig(static_cast<uint8_t>(call.kind), call.type, call.op,
                                          call.count, call.root),
                        status::P2P::None, -1);
    return;
  }
  runStaged(comm, call, s);
}

void deviceSend(Communicator& comm, const void* buf, size_t count, gdrDataType_t type, int peer, gdrStream_t stream) {
  runOne({&comm, true, buf, nullptr, count * gdr::typeSize(type), peer,
          reinterpret_cast<cudaStream_t>(stream)});
}

void deviceRecv(Communicator& comm, void* buf, size_t count, gdrDataType_t type, int peer, gdrStream_t stream) {
  runOne({&comm, false, nullptr, buf, count * gdr::typeSize(type), peer,
          reinterpret_cast<cudaStream_t>(stream)});
}

void deviceP2PBatch(Communicator& comm, const std::vector<P2PCall>& reqs) {
  if (reqs.empty()) return;
  std::vector<DeviceP2P> ops;
  ops.reserve(reqs.size());
  for (const P2PCall& r : reqs)
    ops.push_back({&comm, r.isSend, r.sendBuf, r.recvBuf, r.count * gdr::typeSize(r.type), r.peer,
                   reinterpret_cast<cudaStream_t>(r.stream)});
  runP2P(comm, ops);
}

bool deviceOpsAsync(const Communicator& comm) {
  if (comm.size() == 1) return true;  // copies on the stream
  const DeviceState* st = comm.devicePath().find<DeviceState>();
  return st && st->ipc && st->ipc->deviceErrors() == 0;
}

uint64_t registerDeviceWindow(Communicator& comm, void* buffer, size_t bytes) {
  // What every rank knows alike needs no exchange.
  if (comm.size() == 1 || !anyCudaDevice()) return 0;
  for (int r = 0; r < comm.size(); ++r)
    if (!comm.sameHost(r)) return 0;
  // Every rank's buffer must be device memory; a host buffer anywhere makes
  // the window a registration only, on every rank.
  const int32_t onDevice = memoryKind(buffer) == MemKind::Device;
  std::vector<int32_t> kinds(comm.size());
  runHostCollective(
      comm, CollCall{CollKind::AllGather, &onDevice, kinds.data(), sizeof onDevice, gdrUint8});
  for (int r = 0; r < comm.size(); ++r)
    if (!kinds[r]) {
      GDR_INFO(kColl, "window %p (%zu bytes): rank %d's buffer is host memory, so no rank maps it",
               buffer, bytes, r);
      return 0;
    }
  IpcContext* ctx = ipcFor(comm);  // collective at the communicator's first device operation
  if (!ctx) return 0;
  ScopedDevice onCtx(ctx->device());
  std::string why;
  std::unique_ptr<transport::cuda_ipc::WindowMap> map =
      transport::cuda_ipc::WindowMap::create(ipcPeersOf(comm), ctx->device(), buffer, bytes, &why);
  if (!map) {
    GDR_WARN(kColl,
             "window %p (%zu bytes) is not mapped, its all-reduces take the staging kernels: %s",
             buffer, bytes, why.c_str());
    return 0;
  }
  return stateOf(comm).windows.add(buffer, bytes, std::move(map));
}

uint64_t windowAllReduces(const Communicator& comm) {
  const DeviceState* st = comm.devicePath().find<DeviceState>();
  return st ? st->windowCalls.load(std::memory_order_relaxed) : 0;
}

bool deregisterDeviceWindow(Communicator& comm, uint64_t id) {
  if (id == 0) return true;
  DeviceState* st = comm.devicePath().find<DeviceState>();
  if (!st) return false;
  ScopedDevice onCtx(st->ipc ? st->ipc->device() : currentCudaDevice());
  return st->windows.remove(id);
}

#else  // no CUDA in this build: every pointer is host memory

void runDeviceCollective(Communicator&, const CollCall&, gdrStream_t) {
  throw NotSupported("this build of gdrcoll has no CUDA support");
}
void deviceSend(Communicator&, const void*, size_t, gdrDataType_t, int, gdrStream_t) {
  throw NotSupported("this build of gdrcoll has no CUDA support");
}
void deviceRecv(Communicator&, void*, size_t, gdrDataType_t, int, gdrStream_t) {
  throw NotSupported("this build of gdrcoll has no CUDA support");
}
void deviceP2PBatch(Communicator&, const std::vector<P2PCall>& reqs) {
  if (!reqs.empty()) throw NotSupported("this build of gdrcoll has no CUDA support");
}
bool deviceOpsAsync(const Communicator&) { return false; }
uint64_t registerDeviceWindow(Communicator&, void*, size_t) { return 0; }
bool deregisterDeviceWindow(Communicator&, uint64_t id) { return id == 0; }
uint64_t windowAllReduces(const Communicator&) { return 0; }

#endif

}  // namespace gdr::paths

#include "paths/direct/path.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>

#include "core/datatype.h"
#include "core/error.h"
#include "core/log.h"
#include "core/params.h"
#include "paths/direct/choose.h"
#include "paths/direct/order.h"
#include "paths/host.h"
#include "paths/p2p.h"
#include "paths/staged/path.h"

#if GDR_HAVE_CUDA
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "comm/device_ops.h"
#include "comm/status_report.h"
#include "core/cuda.h"
#include "core/op_sig.h"
#include "device/device_reduce.h"
#include "device/device_wait.h"
#include "paths/progress_thread.h"
#include "paths/staged/driver.h"
#include "progress/progress_engine.h"
#if GDR_HAVE_IB
#include "transport/ib/user_ranges.h"
#endif
#endif

namespace gdr::paths::direct {

namespace {

std::atomic<uint64_t> gOps{0};
std::atomic<uint64_t> gFlagsOps{0};

// The decision, made once per communicator (Communicator::directPath holds
// the context below; this is the answer only).
struct Decision final : PathState {
  bool use = false;
};

}  // namespace

uint64_t opsRun() { return gOps.load(); }
uint64_t flagsOpsQueued() { return gFlagsOps.load(); }

#if GDR_HAVE_CUDA

namespace {

using progress::Deadline;
using staged::cuOk;
using staged::driver;

constexpr size_t kRing = 256;  // operations in flight per communicator

// The flush rule: data a NIC wrote into GPU memory is visible to a kernel
// that starts after the write's completion was seen only where the GPU
// orders such writes for its own context (GPU_DIRECT_RDMA_WRITES_ORDERING
// at least OWNER); elsewhere the writes are flushed first
// (cudaDeviceFlushGPUDirectRDMAWrites, to the owner). The software NIC's
// writes are CUDA copies that returned before their completion was posted:
// ordered already, no flush.
bool needsFlush(int dev) {
  if (param::getString("GDR_IB_PROVIDER") == "softnic") return false;
  int ordering = 0, options = 0;
  cudaDeviceGetAttribute(&ordering, cudaDevAttrGPUDirectRDMAWritesOrdering, dev);
  cudaDeviceGetAttribute(&options, cudaDevAttrGPUDirectRDMAFlushWritesOptions, dev);
  cudaGetLastError();
  return ordering < cudaGPUDirectRDMAWritesOrderingOwner &&
         (options & cudaFlushGPUDirectRDMAWritesOptionHost);
}

// How an operation shows on the status board (comm/device_ops.h).
struct OnBoard {
  OpSig sig;
  status::P2P p2p = status::P2P::None;
  int peer = -1;
};

// The path's progress thread is the only thread that drives the endpoints
// while the path's work runs, in both orders: host order hands it each
// network part and waits for it. So it is the communicator's AsyncDriver: a
// revoke requested meanwhile is applied there (takeRevoke), and every wait
// there stops on Communicator::stopCode() (a revoke or an abort requested
// elsewhere), as on the staged path.
class DirectContext final : public PathState, public AsyncDriver {
 public:
  explicit DirectContext(Communicator& comm) : comm_(comm) {
    staged::RelaxedCapture relaxed;
    const OrderChoice order = chooseOrder(param::getString("GDR_DIRECT_ORDER"), moduleLoading());
    hostOrder_ = !order.flags;
    const std::string wait = param::getString("GDR_DIRECT_WAIT");
    if (wait != "kernel" && wait != "stream")
      throw InvalidArgument("GDR_DIRECT_WAIT=" + wait + " is not kernel or stream");
    waitKernel_ = wait == "kernel";
    timeoutMs_ = comm.config().timeoutMs;
    if (comm.config().chunkBytes > 0) chunkBytes_ = static_cast<size_t>(comm.config().chunkBytes);
    checkCuda(cudaHostAlloc(reinterpret_cast<void**>(&words_), 2 * kRing * sizeof(uint32_t),
                            cudaHostAllocMapped | cudaHostAllocPortable),
              "cudaHostAlloc (flag words) (GPUDirect path)");
    for (size_t i = 0; i < 2 * kRing; ++i) words_[i] = 0;
    void* dev = nullptr;
    checkCuda(cudaHostGetDevicePointer(&dev, words_, 0),
              "cudaHostGetDevicePointer (GPUDirect path)");
    wordsDev_ = reinterpret_cast<CUdeviceptr>(dev);
    flush_ = needsFlush(comm.device());
    const int device = comm.device();
    if (!hostOrder_) {
      // Flags order launches kernels while its stream waits for a word:
      // none of the path's may be loaded lazily then (order.h).
      checkCuda(dev::preloadReduceKernels(), "loading the reduction kernels (GPUDirect path)");
      checkCuda(dev::preloadWaitWord(), "loading the wait kernel (GPUDirect path)");
    }
    if (order.risky)
      GDR_WARN(kNet, "rank %d: GPUDirect path in stream-flags order: %s", comm.rank(),
               order.why.c_str());
    else
      GDR_INFO(kNet, "rank %d: GPUDirect path in %s order: %s", comm.rank(),
               hostOrder_ ? "host" : "stream-flags", order.why.c_str());
    // The transport's CUDA copies (software NIC, eager copy-out) run on this thread.
    engine_ = std::make_unique<progress::Engine>(
        progressThreadConfig(comm, kRing, "GPUDirect-path progress thread",
                             [device] { cudaSetDevice(device); }),
        words_, 2 * kRing);
    checkCuda(cudaEventCreateWithFlags(&lastOp_, cudaEventDisableTiming),
              "cudaEventCreate (GPUDirect path)");
    comm.status().device().attach(&boardWords_, "direct");
    comm.setAsyncDriver(this);
    GDR_INFO(kColl, "GPUDirect path: progress thread started, order by %s%s",
             hostOrder_ ? "the calling thread (GDR_DIRECT_ORDER=host)"
             : waitKernel_
                 ? "stream flags, waited for by a polling kernel (GDR_DIRECT_WAIT=kernel)"
                 : "stream flags, waited for by cuStreamWaitValue32 (GDR_DIRECT_WAIT=stream)",
             flush_ ? ", received data flushed before kernels read it" : "");
  }

  ~DirectContext() {
    // Only this context's own thread can still use the communicator: it
    // applies a revoke itself from now on.
    comm_.setAsyncDriver(nullptr);
    engine_.reset();  // runs what is queued (each under its deadline), joins
    comm_.status().device().detach();
    if (lastOp_) cudaEventDestroy(lastOp_);
    unlistScratch();  // the caches drop its registrations before it is freed
    for (char* p : scratch_) cudaFree(p);
    cudaFreeHost(words_);
  }

  // A revoke requested while this context exists: the progress thread
  // applies it (an empty job: the thread sees the request and fails, and
  // the engine's onError tells the peers).
  void takeRevoke() noexcept override {
    try {
      engine_->push(progress::Job{"a revoke of the communicator", nullptr});
    } catch (...) {
    }
  }

  void waitIdle() { engine_->waitIdle(); }
  size_t chunkBytes() const { return chunkBytes_; }

  // A device scratch of at least `bytes`, one per communicator, grown when
  // needed. The path vouches for it (UserRanges, as for gdrMemAlloc), so
  // the endpoints' registration caches keep its registration from one
  // operation to the next instead of registering it at each. Older ones
  // stay allocated until the end (a queued kernel may still read one, and
  // cudaFree can synchronize) but leave the list, which drops their
  // registrations (an operation still holding one keeps it to its end).
  char* scratch(size_t bytes) {
    if (!bytes) return nullptr;
    if (scratch_.empty() || scratchBytes_ < bytes) {
      staged::RelaxedCapture relaxed;
      bytes = std::max(bytes, 2 * scratchBytes_);  // few regrowths
      char* p = nullptr;
      checkCuda(cudaMalloc(reinterpret_cast<void**>(&p), bytes),
                "cudaMalloc (GPUDirect path scratch)");
      unlistScratch();
      scratch_.push_back(p);
      scratchBytes_ = bytes;
#if GDR_HAVE_IB
      scratchRange_ = transport::ib::UserRanges::instance().add(p, bytes);
#endif
    }
    return scratch_.back();
  }

  void enqueue(std::shared_ptr<const Plan> plan, cudaStream_t s, const OnBoard& board);

 private:
  // The network part of one phase, on the progress thread. `last`: the
  // operation's last phase (it counts the operation).
  void network(const std::vector<Msg>& msgs, bool last) {
    std::vector<P2PCall> reqs(msgs.size());
    bool receives = false;
    for (size_t i = 0; i < reqs.size(); ++i) {
      const Msg& m = msgs[i];
      reqs[i].isSend = m.isSend;
      reqs[i].sendBuf = m.buf;
      reqs[i].recvBuf = m.buf;
      reqs[i].count = m.bytes / typeSize(m.type);
      reqs[i].type = m.type;
      reqs[i].peer = m.peer;
      receives |= !m.isSend && m.bytes;
    }
    if (!reqs.empty()) p2pRunBatch(comm_, reqs);
    if (flush_ && receives)
      checkCuda(cudaDeviceFlushGPUDirectRDMAWrites(cudaFlushGPUDirectRDMAWritesTargetCurrentDevice,
                                                   cudaFlushGPUDirectRDMAWritesToOwner),
                "cudaDeviceFlushGPUDirectRDMAWrites (GPUDirect path)");
    if (last) gOps.fetch_add(1);
  }
  // One-shot: every rank's block in one kernel (more sources fold in).
  void reduce(const Plan& plan, cudaStream_t s) {
    const Reduction& r = plan.reduction;
    const int n = static_cast<int>(r.srcs.size());
    // At most kMaxReduceSources per kernel: beyond, fold the rest into dst
    // (avg divides once, in the last pass).
    for (int lo = 0; lo < n;) {
      std::vector<const void*> srcs;
      if (lo > 0) srcs.push_back(r.dst);
      const int take = std::min(n - lo, dev::kMaxReduceSources - static_cast<int>(srcs.size()));
      for (int i = 0; i < take; ++i) srcs.push_back(r.srcs[lo + i]);
      lo += take;
      checkCuda(dev::launchReduce(r.dst, srcs.data(), static_cast<int>(srcs.size()), r.count,
                                  r.type, r.op, lo == n ? n : 0, s),
                "launching the reduction kernel (GPUDirect path)");
    }
  }
  // A phase's local work, on the caller's stream.
  void local(const std::vector<LocalOp>& ops, cudaStream_t s) {
    for (const LocalOp& o : ops) {
      if (!o.count) continue;
      if (o.isCopy) {
        checkCuda(cudaMemcpyAsync(o.dst, o.srcs[0], o.count * typeSize(o.type),
                                  cudaMemcpyDeviceToDevice, s),
                  "cudaMemcpyAsync (GPUDirect path)");
        continue;
      }
      const void* srcs[2] = {o.srcs[0], o.srcs[1]};
      checkCuda(dev::launchReduce(o.dst, srcs, o.nsrc, o.count, o.type, o.op, o.avgDivisor, s),
                "launching the reduction kernel (GPUDirect path)");
    }
  }
  // Host order: waits (bounded, and stopped by a revoke or an abort) until
  // the stream reached this point; the board says so meanwhile.
  void waitForStream(cudaStream_t s, const Plan& plan) {
    if (cudaStreamQuery(s) == cudaSuccess) return;
    __atomic_store_n(&boardWords_.stage, 1u, __ATOMIC_RELAXED);
    struct Clear {
      uint32_t* w;
      ~Clear() { __atomic_store_n(w, 0u, __ATOMIC_RELAXED); }
    } clear{&boardWords_.stage};
    cudaError_t e = cudaSuccess;
    progress::pollUntil(
        [&] {
          e = cudaStreamQuery(s);
          return e != cudaErrorNotReady;
        },
        progress::Deadline::in(timeoutMs_),
        [&] {
          return "for the caller's stream to reach " + plan.what +
                 " (work queued before it never finished; GDR_DIRECT_ORDER=host)";
        },
        [this] { return comm_.stopCode(); });
    checkCuda(e, "cudaStreamQuery (GPUDirect path, GDR_DIRECT_ORDER=host)");
  }
  // Host order: the progress thread runs phase i's network part; this
  // thread waits for it (the engine's deadline) and then for the verdict.
  // The job holds what it reads: a wait that times out leaves it running.
  void onThread(const Plan& plan, std::shared_ptr<const std::vector<Phase>> phases, size_t i) {
    engine_->push(progress::Job{
        plan.what, [this, phases, i](const Deadline&) { network((*phases)[i].msgs, false); }});
    engine_->waitIdle();
    comm_.throwIfFailed();
  }
  // A failure on this thread, told to the peers by the progress thread
  // (the only one that touches the endpoints while this path exists).
  void failOnThread(const Error& e, const std::string& what) {
    const gdrResult_t code = e.code();
    const std::string text = what + ": " + e.what();
    try {
      engine_->push(
          progress::Job{what, [code, text](const Deadline&) { throw Error(code, text); }});
    } catch (...) {
    }
  }
  using Phases = std::shared_ptr<const std::vector<Phase>>;
  void runHostOrder(const Plan& plan, const Phases& phases, cudaStream_t s);
  void runFlags(std::shared_ptr<const Plan> plan, const Phases& phases, cudaStream_t s);
  void unlistScratch() {
#if GDR_HAVE_IB
    if (scratchRange_) transport::ib::UserRanges::instance().remove(scratchRange_);
#endif
    scratchRange_ = 0;
  }
  CUdeviceptr wordAt(size_t w) const { return wordsDev_ + w * sizeof(uint32_t); }
  // The polling kernel's last-resort bound: the job behind a done word
  // writes it within its gate's and its own deadline (a timeout each), so
  // four timeouts are never reached while the progress thread lives.
  uint64_t waitBoundNs() const {
    return timeoutMs_ > 0 ? static_cast<uint64_t>(timeoutMs_) * 4 * 1000000 : 0;
  }
  void countDone() { __atomic_fetch_add(&boardWords_.done, 1u, __ATOMIC_RELEASE); }

  Communicator& comm_;
  bool hostOrder_ = false;
  bool waitKernel_ = true;  // flags: the stream waits by a polling kernel, not a stream memory wait
  bool flush_ = false;
  int64_t timeoutMs_ = 0;
  size_t chunkBytes_ = 0;      // GDR_CHUNK_BYTES: the ring's pipelining unit (0: none)
  uint32_t* words_ = nullptr;  // host-mapped: the engine's [start, done] per ring slot
  CUdeviceptr wordsDev_ = 0;
  std::mutex enqueueMu_;
  std::vector<char*> scratch_;
  size_t scratchBytes_ = 0;
  uint64_t scratchRange_ = 0;  // the newest scratch in UserRanges (0: none)
  // The last operation's end on its stream: the next one, on another
  // stream, waits for it (the scratch is shared).
  cudaEvent_t lastOp_ = nullptr;
  cudaStream_t lastStream_ = nullptr;
  bool anyOp_ = false;
  // The status board's words (comm/device_ops.h): one completion per
  // operation once its network part ended (either order), and the wait for
  // the caller's stream in host order.
  DeviceWords boardWords_{};
  std::unique_ptr<progress::Engine> engine_;
};

// The calling thread waits for its stream before each phase's network part
// (run by the progress thread), then queues the phase's local work: no
// stream wait is ever pending while the transport makes its own CUDA
// copies.
void DirectContext::runHostOrder(const Plan& plan, const Phases& phases, cudaStream_t s) {
  struct Done {  // the operation ends, done or failed
    DirectContext* c;
    ~Done() { c->countDone(); }
  } done{this};
  try {
    for (size_t i = 0; i < phases->size(); ++i) {
      if (!(*phases)[i].msgs.empty()) {
        waitForStream(s, plan);
        comm_.throwIfFailed();
        onThread(plan, phases, i);
      }
      local((*phases)[i].ops, s);
    }
    if (plan.reduces) reduce(plan, s);
    gOps.fetch_add(1);
    checkCuda(cudaEventRecord(lastOp_, s), "cudaEventRecord (GPUDirect path)");
  } catch (const Error& e) {
    // The peers learn of it (a timeout or a CUDA error here; a network
    // failure failed the communicator already).
    if (comm_.asyncError() == gdrSuccess) failOnThread(e, plan.what);
    throw;
  }
}

// Per phase the stream writes the start word after the local work before
// it, waits for the done word, then runs the phase's local work; every job
// is queued first, so a failure half way still releases every word.
void DirectContext::runFlags(std::shared_ptr<const Plan> plan, const Phases& phases,
                             cudaStream_t s) {
  std::vector<progress::Ticket> tickets;
  for (size_t i = 0; i < phases->size(); ++i) {
    const bool last = i + 1 == phases->size();
    const progress::Ticket t = engine_->reserve();
    tickets.push_back(t);
    engine_->submit(
        t, plan->what,
        [this, plan, phases, i, last](const Deadline&) { network((*phases)[i].msgs, last); },
        last ? std::function<void()>([this] { countDone(); }) : nullptr);
  }
  // A failure half way leaves jobs waiting for start words nobody writes:
  // fail the communicator so they fail fast and release their done words.
  try {
    auto cs = reinterpret_cast<CUstream>(s);
    for (size_t i = 0; i < phases->size(); ++i) {
      const progress::Ticket& t = tickets[i];
      cuOk(driver().writeValue32(cs, wordAt(t.startWord()), t.seq, CU_STREAM_WRITE_VALUE_DEFAULT),
           "cuStreamWriteValue32 (GPUDirect path)");
      if (waitKernel_)  // a poll holds no hardware queue the transport's copies need
        checkCuda(dev::launchWaitWord(reinterpret_cast<const uint32_t*>(wordAt(t.doneWord())),
                                      t.seq, waitBoundNs(), s),
                  "launching the wait for the network part (GPUDirect path)");
      else
        cuOk(driver().waitValue32(cs, wordAt(t.doneWord()), t.seq, CU_STREAM_WAIT_VALUE_GEQ),
             "cuStreamWaitValue32 (GPUDirect path)");
      local((*phases)[i].ops, s);
      if (i + 1 == phases->size() && plan->reduces) reduce(*plan, s);
    }
    checkCuda(cudaEventRecord(lastOp_, s), "cudaEventRecord (GPUDirect path)");
    gFlagsOps.fetch_add(1);
  } catch (const Error& e) {
    comm_.fail(e.code(), plan->what + ": " + e.what());
    throw;
  }
}

void DirectContext::enqueue(std::shared_ptr<const Plan> plan, cudaStream_t s,
                            const OnBoard& board) {
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  checkCuda(cudaStreamIsCapturing(s, &cs), "cudaStreamIsCapturing (GPUDirect path)");
  if (cs != cudaStreamCaptureStatusNone)
    throw NotSupported(
        plan->what +
        ": CUDA-graph capture is not supported on the GPUDirect path (its stream flags are per "
        "call, not per replay); run it outside capture, or set GDR_NET_GDR=0 for the staged "
        "path, which captures");
  std::lock_guard<std::mutex> g(enqueueMu_);
  comm_.throwIfFailed();
  if (anyOp_ && s != lastStream_)
    checkCuda(cudaStreamWaitEvent(s, lastOp_, 0), "cudaStreamWaitEvent (GPUDirect path)");
  for (const LocalCopy& c : plan->before)
    if (c.bytes)
      checkCuda(cudaMemcpyAsync(c.dst, c.src, c.bytes, cudaMemcpyDeviceToDevice, s),
                "cudaMemcpyAsync (GPUDirect path, a rank's own block)");
  // A one-shot plan is one phase: its messages, then its reduction.
  auto ph = std::make_shared<std::vector<Phase>>(plan->phases);
  if (ph->empty()) ph->push_back(Phase{plan->msgs, {}});
  const Phases phases = ph;
  // Every phase holds a ring slot until the stream reaches it, after this
  // call: more than the ring has would wait for themselves.
  if (!hostOrder_ && phases->size() > kRing / 2)
    throw InvalidUsage(
        strprintf("%s needs %zu phases, more than GDR_DIRECT_ORDER=flags can queue (%zu): raise "
                  "GDR_CHUNK_BYTES, or use GDR_DIRECT_ORDER=host",
                  plan->what.c_str(), phases->size(), kRing / 2));
  comm_.status().device().launched(board.sig, board.p2p, board.peer);
  lastStream_ = s;
  anyOp_ = true;
  if (hostOrder_)
    runHostOrder(*plan, phases, s);
  else
    runFlags(plan, phases, s);  // its jobs outlive this call: they hold the plan and the phases
}

DirectContext& contextFor(Communicator& comm) {
  return comm.directPath().get<DirectContext>(
      [&comm] { return std::make_unique<DirectContext>(comm); });
}

}  // namespace

bool chosen(Communicator& comm) {
  const Decision& d = comm.directDecision().get<Decision>([&comm] {
    auto dec = std::make_unique<Decision>();
    // All ranks on this host: every rank sees the same, no need to ask
    // (the cuda_ipc kernels or the staged path take over).
    bool oneHost = true;
    for (int r = 0; r < comm.size() && oneHost; ++r) oneHost = r == comm.rank() || comm.sameHost(r);
    if (oneHost) return dec;
    staged::waitIdle(comm);  // a host collective follows earlier device work
    std::string why;
    // Every rank's answer, by one byte to and from each peer (messages, not
    // a collective: collective sequence numbers stay as they were).
    const char mine = usableHere(comm, &why) ? 1 : 0;
    std::vector<char> all(comm.size(), mine);
    std::vector<P2PCall> reqs;
    for (int r = 0; r < comm.size(); ++r) {
      if (r == comm.rank()) continue;
      P2PCall snd, rcv;
      snd.isSend = true;
      snd.sendBuf = &mine;
      rcv.recvBuf = &all[r];
      snd.count = rcv.count = 1;
      snd.peer = rcv.peer = r;
      reqs.push_back(snd);
      reqs.push_back(rcv);
    }
    p2pRunBatch(comm, reqs);
    dec->use = true;
    for (int r = 0; r < comm.size() && dec->use; ++r)
      if (!all[r]) {
        dec->use = false;
        if (mine) why = strprintf("rank %d cannot take it", r);
      }
    GDR_INFO(kNet, "rank %d: device buffers take the %s path: %s", comm.rank(),
             dec->use ? "GPUDirect" : "staged", why.c_str());
    return dec;
  });
  return d.use;
}

void runCollective(Communicator& comm, const CollCall& call, void* stream) {
  DirectContext& ctx = contextFor(comm);
  const size_t chunkElems =
      ctx.chunkBytes() ? std::max<size_t>(1, ctx.chunkBytes() / typeSize(call.type)) : 0;
  char* scratch = ctx.scratch(scratchBytes(call, comm.rank(), comm.size(), chunkElems));
  auto plan = std::make_shared<const Plan>(
      planCollective(call, comm.rank(), comm.size(), scratch, chunkElems));
  const OnBoard board{status::deviceSig(static_cast<uint8_t>(call.kind), call.type, call.op,
                                        call.count, call.root)};
  ctx.enqueue(std::move(plan), static_cast<cudaStream_t>(stream), board);
}

void runP2P(Communicator& comm, const std::vector<P2PCall>& reqs) {
  if (reqs.empty()) return;
  auto s = static_cast<cudaStream_t>(reqs.front().stream);
  auto plan = std::make_shared<Plan>();
  size_t bytes = 0;
  for (const P2PCall& r : reqs) {
    if (static_cast<cudaStream_t>(r.stream) != s)
      throw InvalidUsage("device send/recv of one communicator inside a group must use one stream");
    if (r.peer == comm.rank())
      throw InvalidUsage("a device send/recv to oneself is not supported on the GPUDirect path");
    const size_t b = r.count * typeSize(r.type);
    plan->msgs.push_back({r.isSend,
                          static_cast<char*>(r.isSend ? const_cast<void*>(r.sendBuf) : r.recvBuf),
                          b, r.peer, r.type});
    bytes += b;
  }
  plan->what = strprintf("%zu send/recv of %zu B (GPUDirect path)", reqs.size(), bytes);
  OnBoard board;
  board.sig = status::deviceSig(kP2PKind, gdrUint8, 0, bytes, 0);
  if (reqs.size() == 1) {
    board.p2p = reqs[0].isSend ? status::P2P::Send : status::P2P::Recv;
    board.peer = reqs[0].peer;
  } else {
    board.p2p = status::P2P::Batch;
  }
  contextFor(comm).enqueue(std::move(plan), s, board);
}

void waitIdle(Communicator& comm) {
  if (DirectContext* ctx = comm.directPath().find<DirectContext>()) ctx->waitIdle();
}

#else  // no CUDA: no device buffers reach this path

bool chosen(Communicator&) { return false; }
void runCollective(Communicator&, const CollCall&, void*) {
  throw NotSupported("this build of gdrcoll has no CUDA support");
}
void runP2P(Communicator&, const std::vector<P2PCall>&) {
  throw NotSupported("this build of gdrcoll has no CUDA support");
}
void waitIdle(Communicator&) {}

#endif

}  // namespace gdr::paths::direct

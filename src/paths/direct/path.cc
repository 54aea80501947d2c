#include "paths/direct/path.h"

#include <atomic>
#include <memory>
#include <mutex>

#include "core/datatype.h"
#include "core/error.h"
#include "core/log.h"
#include "core/params.h"
#include "paths/direct/choose.h"
#include "paths/host.h"
#include "paths/p2p.h"
#include "paths/staged/path.h"

#if GDR_HAVE_CUDA
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "core/cuda.h"
#include "core/thread_affinity.h"
#include "device/device_reduce.h"
#include "paths/staged/driver.h"
#include "progress/progress_engine.h"
#endif

namespace gdr::paths::direct {

namespace {

std::atomic<uint64_t> gOps{0};

// The decision, made once per communicator (Communicator::directPath holds
// the context below; this is the answer only).
struct Decision final : PathState {
  bool use = false;
};

}  // namespace

uint64_t opsRun() { return gOps.load(); }

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

class DirectContext final : public PathState {
 public:
  explicit DirectContext(Communicator& comm) : comm_(comm) {
    staged::RelaxedCapture relaxed;
    const std::string order = param::getString("GDR_DIRECT_ORDER");
    if (order != "flags" && order != "host")
      throw InvalidArgument("GDR_DIRECT_ORDER=" + order + " is not flags or host");
    hostOrder_ = order == "host";
    checkCuda(cudaHostAlloc(reinterpret_cast<void**>(&words_), 2 * kRing * sizeof(uint32_t),
                            cudaHostAllocMapped | cudaHostAllocPortable),
              "cudaHostAlloc (flag words) (GPUDirect path)");
    for (size_t i = 0; i < 2 * kRing; ++i) words_[i] = 0;
    void* dev = nullptr;
    checkCuda(cudaHostGetDevicePointer(&dev, words_, 0),
              "cudaHostGetDevicePointer (GPUDirect path)");
    wordsDev_ = reinterpret_cast<CUdeviceptr>(dev);
    flush_ = needsFlush(comm.device());
    progress::EngineConfig cfg;
    cfg.timeoutMs = comm.config().timeoutMs;
    cfg.ringSlots = kRing;
    cfg.onError = [this](gdrResult_t code, const std::string& text) { comm_.fail(code, text); };
    cfg.asyncError = [this] { return comm_.asyncError(); };
    const int device = comm.device();
    cfg.onThreadStart = [device] {
      widenHelperAffinity("GPUDirect-path progress thread");
      cudaSetDevice(device);  // the transport's CUDA copies (software NIC, eager copy-out)
    };
    engine_ = std::make_unique<progress::Engine>(cfg, words_, 2 * kRing);
    checkCuda(cudaEventCreateWithFlags(&lastOp_, cudaEventDisableTiming),
              "cudaEventCreate (GPUDirect path)");
    GDR_INFO(kColl, "GPUDirect path: progress thread started, order by %s%s",
             hostOrder_ ? "the calling thread (GDR_DIRECT_ORDER=host)" : "stream flags",
             flush_ ? ", received data flushed before kernels read it" : "");
  }

  ~DirectContext() {
    engine_.reset();  // runs what is queued (each under its deadline), joins
    if (lastOp_) cudaEventDestroy(lastOp_);
    for (char* p : scratch_) cudaFree(p);
    cudaFreeHost(words_);
  }

  void waitIdle() { engine_->waitIdle(); }

  // A device scratch of at least `bytes`. Older ones stay until the end: a
  // queued operation may still use one, and cudaFree can synchronize.
  char* scratch(size_t bytes) {
    if (!bytes) return nullptr;
    if (scratch_.empty() || scratchBytes_ < bytes) {
      staged::RelaxedCapture relaxed;
      char* p = nullptr;
      checkCuda(cudaMalloc(reinterpret_cast<void**>(&p), bytes),
                "cudaMalloc (GPUDirect path scratch)");
      scratch_.push_back(p);
      scratchBytes_ = bytes;
    }
    return scratch_.back();
  }

  void enqueue(std::shared_ptr<const Plan> plan, cudaStream_t s);

 private:
  // The network part of one operation, on the progress thread.
  void network(const Plan& plan) {
    std::vector<P2PCall> reqs(plan.msgs.size());
    bool receives = false;
    for (size_t i = 0; i < reqs.size(); ++i) {
      const Msg& m = plan.msgs[i];
      reqs[i].isSend = m.isSend;
      reqs[i].sendBuf = m.buf;
      reqs[i].recvBuf = m.buf;
      reqs[i].count = m.bytes / typeSize(m.type);
      reqs[i].type = m.type;
      reqs[i].peer = m.peer;
      receives |= !m.isSend && m.bytes;
    }
    p2pRunBatch(comm_, reqs);
    if (flush_ && receives)
      checkCuda(cudaDeviceFlushGPUDirectRDMAWrites(cudaFlushGPUDirectRDMAWritesTargetCurrentDevice,
                                                   cudaFlushGPUDirectRDMAWritesToOwner),
                "cudaDeviceFlushGPUDirectRDMAWrites (GPUDirect path)");
    gOps.fetch_add(1);
  }
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
  CUdeviceptr wordAt(size_t w) const { return wordsDev_ + w * sizeof(uint32_t); }

  Communicator& comm_;
  bool hostOrder_ = false;
  bool flush_ = false;
  uint32_t* words_ = nullptr;  // host-mapped: the engine's [start, done] per ring slot
  CUdeviceptr wordsDev_ = 0;
  std::mutex enqueueMu_;
  std::vector<char*> scratch_;
  size_t scratchBytes_ = 0;
  // The last operation's end on its stream: the next one, on another
  // stream, waits for it (the scratch is shared).
  cudaEvent_t lastOp_ = nullptr;
  cudaStream_t lastStream_ = nullptr;
  bool anyOp_ = false;
  std::unique_ptr<progress::Engine> engine_;
};

void DirectContext::enqueue(std::shared_ptr<const Plan> plan, cudaStream_t s) {
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  checkCuda(cudaStreamIsCapturing(s, &cs), "cudaStreamIsCapturing (GPUDirect path)");
  if (cs != cudaStreamCaptureStatusNone)
    throw NotSupported(
        plan->what +
        ": CUDA-graph capture is not supported on the GPUDirect path (its stream flags are per "
        "call, not per replay); run it outside capture, or set GDR_NET_GDR=0 for the staged "
        "path, which captures");
  std::lock_guard<std::mutex> g(enqueueMu_);
  if (anyOp_ && s != lastStream_)
    checkCuda(cudaStreamWaitEvent(s, lastOp_, 0), "cudaStreamWaitEvent (GPUDirect path)");
  for (const LocalCopy& c : plan->before)
    if (c.bytes)
      checkCuda(cudaMemcpyAsync(c.dst, c.src, c.bytes, cudaMemcpyDeviceToDevice, s),
                "cudaMemcpyAsync (GPUDirect path, a rank's own block)");
  // A failure half way leaves a job waiting for a start word nobody writes:
  // fail the communicator so it fails fast and releases its done word.
  auto failing = [&](auto&& body) {
    try {
      body();
    } catch (const Error& e) {
      comm_.fail(e.code(), plan->what + ": " + e.what());
      throw;
    }
  };
  if (hostOrder_) {
    // The caller waits for its stream, then runs the network part itself
    // (after whatever is still queued): no stream wait is ever pending while
    // the transport makes its own CUDA copies.
    failing([&] {
      checkCuda(cudaStreamSynchronize(s), "cudaStreamSynchronize (GPUDirect path, GDR_DIRECT_ORDER=host)");
      engine_->waitIdle();
      comm_.throwIfFailed();
      network(*plan);
    });
  } else {
    const progress::Ticket t = engine_->reserve();
    engine_->submit(t, plan->what, [this, plan](const Deadline&) { network(*plan); });
    failing([&] {
      auto cs2 = reinterpret_cast<CUstream>(s);
      cuOk(driver().writeValue32(cs2, wordAt(t.startWord()), t.seq, CU_STREAM_WRITE_VALUE_DEFAULT),
           "cuStreamWriteValue32 (GPUDirect path)");
      cuOk(driver().waitValue32(cs2, wordAt(t.doneWord()), t.seq, CU_STREAM_WAIT_VALUE_GEQ),
           "cuStreamWaitValue32 (GPUDirect path)");
    });
  }
  failing([&] {
    if (plan->reduces) reduce(*plan, s);
    checkCuda(cudaEventRecord(lastOp_, s), "cudaEventRecord (GPUDirect path)");
  });
  lastStream_ = s;
  anyOp_ = true;
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
  char* scratch = ctx.scratch(scratchBytes(call, comm.rank(), comm.size()));
  auto plan = std::make_shared<const Plan>(planCollective(call, comm.rank(), comm.size(), scratch));
  ctx.enqueue(std::move(plan), static_cast<cudaStream_t>(stream));
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
  contextFor(comm).enqueue(std::move(plan), s);
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

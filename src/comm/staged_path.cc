#include "comm/staged_path.h"

#include <map>
#include <memory>
#include <mutex>

#include "core/error.h"
#include "core/log.h"
#include "core/params.h"

#if GDR_HAVE_CUDA
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include "comm/p2p.h"
#include "progress/progress_engine.h"
#endif

namespace gdr {

#if GDR_HAVE_CUDA

namespace {

using progress::Deadline;
using staged::ChunkHook;
using staged::Copy2D;
using staged::Plan;
using staged::Segment;

constexpr size_t kRing = 256;          // operations in flight per communicator
constexpr size_t kCaptureWords = 512;  // captured operations per communicator
constexpr size_t kSlots = 4;           // pipeline depth (segments in flight)

void cudaOk(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) {
    cudaGetLastError();
    throw Error(gdrCudaError, strprintf("%s: %s (staged path)", what, cudaGetErrorString(rc)));
  }
}

// Driver entry points through the runtime: the library does not link
// libcuda, so it loads where no driver is installed.
struct DriverApi {
  PFN_cuStreamWriteValue32_v11070 writeValue32 = nullptr;
  PFN_cuStreamWaitValue32_v11070 waitValue32 = nullptr;
  PFN_cuGetErrorString_v6000 errorString = nullptr;
};

const DriverApi& driver() {
  static const DriverApi api = [] {
    DriverApi a;
    auto get = [](const char* name, int version, void** fn) {
      cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
      cudaError_t rc = cudaGetDriverEntryPointByVersion(name, fn, version, cudaEnableDefault, &q);
      if (rc != cudaSuccess || q != cudaDriverEntryPointSuccess || !*fn) {
        cudaGetLastError();
        *fn = nullptr;
      }
    };
    get("cuStreamWriteValue32", 11070, reinterpret_cast<void**>(&a.writeValue32));
    get("cuStreamWaitValue32", 11070, reinterpret_cast<void**>(&a.waitValue32));
    get("cuGetErrorString", 6000, reinterpret_cast<void**>(&a.errorString));
    return a;
  }();
  if (!api.writeValue32 || !api.waitValue32)
    throw NotSupported("the CUDA driver lacks cuStreamWriteValue32/cuStreamWaitValue32, which the staged path needs");
  return api;
}

void cuOk(CUresult rc, const char* what) {
  if (rc != CUDA_SUCCESS) {
    const char* s = nullptr;
    if (driver().errorString) driver().errorString(rc, &s);
    throw Error(gdrCudaError, strprintf("%s: %s (staged path)", what, s ? s : "unknown CUDA driver error"));
  }
}

// Set-up calls (allocations) are legal while a stream of this thread is
// being captured only in relaxed mode.
struct RelaxedCapture {
  cudaStreamCaptureMode prev = cudaStreamCaptureModeRelaxed;
  RelaxedCapture() { cudaThreadExchangeStreamCaptureMode(&prev); }
  ~RelaxedCapture() { cudaThreadExchangeStreamCaptureMode(&prev); }
};

// Pinned buffers of the pipeline: an in and an out buffer per slot.
struct SlotSet {
  size_t bytes = 0;
  char* in[kSlots] = {};
  char* out[kSlots] = {};
  explicit SlotSet(size_t b) : bytes(b) {
    RelaxedCapture relaxed;
    for (size_t i = 0; i < kSlots; ++i) {
      cudaOk(cudaHostAlloc(reinterpret_cast<void**>(&in[i]), bytes, cudaHostAllocPortable), "cudaHostAlloc");
      cudaOk(cudaHostAlloc(reinterpret_cast<void**>(&out[i]), bytes, cudaHostAllocPortable), "cudaHostAlloc");
    }
  }
  ~SlotSet() {
    for (size_t i = 0; i < kSlots; ++i) {
      if (in[i]) cudaFreeHost(in[i]);
      if (out[i]) cudaFreeHost(out[i]);
    }
  }
};

class StagedContext;

// One captured operation: pushed to the progress thread by a host function
// at every replay of the graph.
struct Captured {
  StagedContext* ctx;
  size_t word;
  std::string what;
  std::function<void(const Deadline&)> run;
  static void CUDART_CB push(void* p);
};

class StagedContext {
 public:
  StagedContext(Communicator& comm, int device) : comm_(comm), device_(device) {
    RelaxedCapture relaxed;
    const int64_t seg = param::getInt("GDR_STAGED_CHUNK_BYTES");
    if (seg <= 0) throw InvalidArgument("GDR_STAGED_CHUNK_BYTES must be positive");
    segBytes_ = static_cast<size_t>(seg);
    nwords_ = 2 * kRing + kCaptureWords;
    cudaOk(cudaHostAlloc(reinterpret_cast<void**>(&words_), nwords_ * sizeof(uint32_t),
                         cudaHostAllocMapped | cudaHostAllocPortable),
           "cudaHostAlloc (flag words)");
    for (size_t i = 0; i < nwords_; ++i) words_[i] = 0;
    void* dev = nullptr;
    cudaOk(cudaHostGetDevicePointer(&dev, words_, 0), "cudaHostGetDevicePointer");
    wordsDev_ = reinterpret_cast<CUdeviceptr>(dev);
    // Non-blocking: the legacy default stream may be the caller's, and it
    // waits on us.
    cudaOk(cudaStreamCreateWithFlags(&toHost_, cudaStreamNonBlocking), "cudaStreamCreate");
    cudaOk(cudaStreamCreateWithFlags(&toDevice_, cudaStreamNonBlocking), "cudaStreamCreate");
    for (size_t i = 0; i < kSlots; ++i) {
      cudaOk(cudaEventCreateWithFlags(&hostReady_[i], cudaEventDisableTiming), "cudaEventCreate");
      cudaOk(cudaEventCreateWithFlags(&devDone_[i], cudaEventDisableTiming), "cudaEventCreate");
    }
    slots_.push_back(std::make_shared<SlotSet>(segBytes_));
    progress::EngineConfig cfg;
    cfg.timeoutMs = comm.config().timeoutMs;
    cfg.ringSlots = kRing;
    cfg.onError = [this](gdrResult_t code, const std::string& text) { comm_.fail(code, text); };
    cfg.asyncError = [this] { return comm_.asyncError(); };
    cfg.onThreadStart = [this] {
      cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
      cudaThreadExchangeStreamCaptureMode(&mode);
      cudaOk(cudaSetDevice(device_), "cudaSetDevice (progress thread)");
    };
    engine_ = std::make_unique<progress::Engine>(cfg, words_, nwords_);
    GDR_INFO(kColl, "staged path: progress thread started, %zu B segments, %zu in flight", segBytes_, kSlots);
  }

  ~StagedContext() {
    engine_.reset();  // runs what is queued (each under its deadline), joins
    captured_.clear();
    slots_.clear();
    for (size_t i = 0; i < kSlots; ++i) {
      cudaEventDestroy(hostReady_[i]);
      cudaEventDestroy(devDone_[i]);
    }
    cudaStreamDestroy(toHost_);
    cudaStreamDestroy(toDevice_);
    cudaFreeHost(words_);
  }

  size_t segBytes() const { return segBytes_; }
  progress::Engine& engine() { return *engine_; }

  void setHook(std::shared_ptr<ChunkHook> h) {
    std::lock_guard<std::mutex> g(mu_);
    hook_ = std::move(h);
  }

  void enqueue(std::shared_ptr<Plan> plan, cudaStream_t s);

 private:
  std::shared_ptr<SlotSet> slotsFor(size_t bytes) {
    std::lock_guard<std::mutex> g(mu_);
    // Older sets stay until the end: a queued job may still use one, and
    // freeing pinned memory can synchronize the device.
    if (slots_.back()->bytes < bytes) slots_.push_back(std::make_shared<SlotSet>(bytes));
    return slots_.back();
  }
  void runPlan(const Plan& plan, SlotSet& slots, ChunkHook* hook, const Deadline& d);
  void drainCopies() noexcept;

  Communicator& comm_;
  int device_;
  size_t segBytes_ = 0;
  uint32_t* words_ = nullptr;
  size_t nwords_ = 0;
  CUdeviceptr wordsDev_ = 0;
  cudaStream_t toHost_ = nullptr, toDevice_ = nullptr;
  cudaEvent_t hostReady_[kSlots] = {}, devDone_[kSlots] = {};
  std::mutex mu_;
  std::vector<std::shared_ptr<SlotSet>> slots_;
  std::shared_ptr<ChunkHook> hook_;
  std::vector<std::shared_ptr<Captured>> captured_;
  std::unique_ptr<progress::Engine> engine_;
};

void CUDART_CB Captured::push(void* p) {
  auto* c = static_cast<Captured*>(p);
  progress::Job j;
  j.what = c->what;
  j.run = c->run;
  j.doneWord = static_cast<int64_t>(c->word);
  j.doneValue = 1;
  c->ctx->engine().push(std::move(j));
}

bool eventDone(cudaEvent_t e) {
  cudaError_t rc = cudaEventQuery(e);
  if (rc == cudaSuccess) return true;
  if (rc == cudaErrorNotReady) return false;
  cudaOk(rc, "cudaEventQuery");
  return false;
}

void copy2D(const Copy2D& c, char* host, bool toHost, cudaStream_t s) {
  if (toHost)
    cudaOk(cudaMemcpy2DAsync(host + c.hostOff, c.hostPitch, c.dev, c.devPitch, c.width, c.rows,
                             cudaMemcpyDeviceToHost, s),
           "cudaMemcpy2DAsync (device to host)");
  else
    cudaOk(cudaMemcpy2DAsync(c.dev, c.devPitch, host + c.hostOff, c.hostPitch, c.width, c.rows,
                             cudaMemcpyHostToDevice, s),
           "cudaMemcpy2DAsync (host to device)");
}

// Segment k uses slot k % kSlots. Segments k+1 .. k+kSlots-1 are copied to
// the host while segment k's host part (the network) runs, and segment k's
// results go back while segment k+1's runs. Hazards per slot: its in buffer
// is refilled only after the host part that read it returned and after the
// results of the segment before (which may read it: broadcast) landed; its
// out buffer is rewritten only after those results landed.
void StagedContext::runPlan(const Plan& plan, SlotSet& slots, ChunkHook* hook, const Deadline& d) {
  const size_t nseg = plan.segments();
  std::vector<Segment> seg(kSlots);
  auto hostBuf = [&](const Copy2D& c, size_t sl) { return c.hostIn ? slots.in[sl] : slots.out[sl]; };
  auto waitEvent = [&](cudaEvent_t e, size_t k, const char* step) {
    progress::pollUntil([&] { return eventDone(e); }, d,
                        [&] { return strprintf("for the %s of segment %zu of %s", step, k, plan.what().c_str()); },
                        [this] { return comm_.asyncError(); });
  };
  auto issueToHost = [&](size_t k) {
    const size_t sl = k % kSlots;
    seg[sl] = plan.segment(k);
    if (k >= kSlots) cudaOk(cudaStreamWaitEvent(toHost_, devDone_[sl], 0), "cudaStreamWaitEvent");
    for (Copy2D c : seg[sl].toHost) {
      if (hook) hook->beforeToHost(c, toHost_);
      copy2D(c, hostBuf(c, sl), true, toHost_);
    }
    cudaOk(cudaEventRecord(hostReady_[sl], toHost_), "cudaEventRecord");
  };
  try {
    for (size_t k = 0; k < std::min(kSlots, nseg); ++k) issueToHost(k);
    for (size_t k = 0; k < nseg; ++k) {
      const size_t sl = k % kSlots;
      waitEvent(hostReady_[sl], k, "device-to-host copy");
      if (k >= kSlots) waitEvent(devDone_[sl], k - kSlots, "host-to-device copy");
      seg[sl].host(slots.in[sl], slots.out[sl]);
      for (const Copy2D& c : seg[sl].toDevice) {
        copy2D(c, hostBuf(c, sl), false, toDevice_);
        if (hook) hook->afterToDevice(c, toDevice_);
      }
      cudaOk(cudaEventRecord(devDone_[sl], toDevice_), "cudaEventRecord");
      if (k + kSlots < nseg) issueToHost(k + kSlots);
    }
    for (size_t k = nseg > kSlots ? nseg - kSlots : 0; k < nseg; ++k)
      waitEvent(devDone_[k % kSlots], k, "host-to-device copy");
  } catch (...) {
    drainCopies();
    throw;
  }
}

// After a failure: let copies already enqueued finish (bounded) before the
// caller's stream is released, so none lands in a buffer the program reuses.
void StagedContext::drainCopies() noexcept {
  try {
    progress::pollUntil(
        [&] { return cudaStreamQuery(toHost_) != cudaErrorNotReady && cudaStreamQuery(toDevice_) != cudaErrorNotReady; },
        Deadline::in(std::min<int64_t>(comm_.config().timeoutMs, 10000)),
        [] { return std::string("for the staged copies to drain after a failure"); });
  } catch (const std::exception& e) {
    GDR_WARN(kColl, "%s", e.what());
  }
}

void StagedContext::enqueue(std::shared_ptr<Plan> plan, cudaStream_t s) {
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  cudaOk(cudaStreamIsCapturing(s, &cs), "cudaStreamIsCapturing");
  if (cs == cudaStreamCaptureStatusInvalidated)
    throw InvalidUsage("the stream's CUDA graph capture was invalidated by an earlier error");
  std::shared_ptr<SlotSet> slots = slotsFor(plan->slotBytes());
  std::shared_ptr<ChunkHook> hook;
  {
    std::lock_guard<std::mutex> g(mu_);
    hook = hook_;
  }
  auto run = [this, plan, slots, hook](const Deadline& d) { runPlan(*plan, *slots, hook.get(), d); };
  auto cs_ = reinterpret_cast<CUstream>(s);
  auto wordAt = [&](size_t w) { return wordsDev_ + w * sizeof(uint32_t); };
  if (cs == cudaStreamCaptureStatusActive) {
    auto cap = std::make_shared<Captured>();
    cap->ctx = this;
    cap->word = engine_->allocWord();
    cap->what = plan->what();
    cap->run = run;
    cuOk(driver().writeValue32(cs_, wordAt(cap->word), 0, CU_STREAM_WRITE_VALUE_DEFAULT), "cuStreamWriteValue32");
    cudaOk(cudaLaunchHostFunc(s, &Captured::push, cap.get()), "cudaLaunchHostFunc");
    cuOk(driver().waitValue32(cs_, wordAt(cap->word), 1, CU_STREAM_WAIT_VALUE_GEQ), "cuStreamWaitValue32");
    std::lock_guard<std::mutex> g(mu_);
    captured_.push_back(std::move(cap));
    return;
  }
  // A reserved ticket is always submitted (the ring counts on it): with a
  // no-op job, its gate opened here, when the stream operations failed.
  progress::Ticket t = engine_->reserve();
  CUresult rc = driver().writeValue32(cs_, wordAt(t.startWord()), t.seq, CU_STREAM_WRITE_VALUE_DEFAULT);
  const char* failed = rc != CUDA_SUCCESS ? "cuStreamWriteValue32" : nullptr;
  if (!failed) {
    rc = driver().waitValue32(cs_, wordAt(t.doneWord()), t.seq, CU_STREAM_WAIT_VALUE_GEQ);
    if (rc != CUDA_SUCCESS) failed = "cuStreamWaitValue32";
  }
  if (failed) {
    engine_->store(t.startWord(), t.seq);
    engine_->submit(t, plan->what(), nullptr);
    cuOk(rc, failed);
  }
  engine_->submit(t, plan->what(), std::move(run));
}

std::mutex gMu;
std::map<const Communicator*, std::unique_ptr<StagedContext>> gContexts;

StagedContext& contextFor(Communicator& comm) {
  std::lock_guard<std::mutex> g(gMu);
  auto& ctx = gContexts[&comm];
  if (!ctx) {
    int dev = 0;
    cudaOk(cudaGetDevice(&dev), "cudaGetDevice");
    try {
      ctx = std::make_unique<StagedContext>(comm, dev);
    } catch (...) {
      gContexts.erase(&comm);
      throw;
    }
  }
  return *ctx;
}

StagedContext* existingContext(const Communicator& comm) {
  std::lock_guard<std::mutex> g(gMu);
  auto it = gContexts.find(&comm);
  return it == gContexts.end() ? nullptr : it->second.get();
}

}  // namespace

void runStagedCollective(Communicator& comm, const CollCall& call, void* stream) {
  StagedContext& ctx = contextFor(comm);
  std::shared_ptr<Plan> plan = staged::planCollective(call, comm.rank(), comm.size(), ctx.segBytes(),
                                                      [&comm](const CollCall& h) { runHostCollective(comm, h); });
  ctx.enqueue(std::move(plan), static_cast<cudaStream_t>(stream));
}

void runStagedP2P(Communicator& comm, std::vector<staged::P2PItem> items, void* stream) {
  StagedContext& ctx = contextFor(comm);
  std::shared_ptr<Plan> plan =
      staged::planP2P(std::move(items), ctx.segBytes(), [&comm](const std::vector<staged::HostMsg>& msgs) {
        std::vector<P2PRequest> reqs(msgs.size());
        for (size_t i = 0; i < msgs.size(); ++i) {
          reqs[i].isSend = msgs[i].isSend;
          reqs[i].sendBuf = msgs[i].host;
          reqs[i].recvBuf = msgs[i].host;
          reqs[i].count = msgs[i].bytes;
          reqs[i].type = gdrUint8;
          reqs[i].peer = msgs[i].peer;
        }
        p2pRunBatch(comm, reqs);
      });
  ctx.enqueue(std::move(plan), static_cast<cudaStream_t>(stream));
}

void waitStagedIdle(Communicator& comm) {
  if (StagedContext* ctx = existingContext(comm)) ctx->engine().waitIdle();
}

void releaseStagedState(const Communicator* comm) noexcept {
  std::unique_ptr<StagedContext> ctx;
  {
    std::lock_guard<std::mutex> g(gMu);
    auto it = gContexts.find(comm);
    if (it == gContexts.end()) return;
    ctx = std::move(it->second);
    gContexts.erase(it);
  }
  ctx.reset();
}

void staged::setChunkHook(Communicator& comm, std::shared_ptr<ChunkHook> hook) {
  contextFor(comm).setHook(std::move(hook));
}

#else  // no CUDA: no device buffers reach this path

void runStagedCollective(Communicator&, const CollCall&, void*) {
  throw NotSupported("this build of gdrcoll has no CUDA support");
}
void runStagedP2P(Communicator&, std::vector<staged::P2PItem>, void*) {
  throw NotSupported("this build of gdrcoll has no CUDA support");
}
void waitStagedIdle(Communicator&) {}
void releaseStagedState(const Communicator*) noexcept {}
void staged::setChunkHook(Communicator&, std::shared_ptr<ChunkHook>) {}

#endif

}  // namespace gdr

#include "paths/staged/path.h"

#include <atomic>
#include <memory>
#include <mutex>

#include "core/cuda.h"
#include "core/error.h"
#include "core/log.h"
#include "core/params.h"
#include "core/thread_affinity.h"

#if GDR_HAVE_CUDA
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include "paths/p2p.h"
#include "paths/staged/driver.h"
#include "paths/staged/seal.h"
#include "paths/staged/slots.h"
#include "progress/progress_engine.h"
#include "security/aead.h"
#endif

namespace gdr::paths::staged {

#if GDR_HAVE_CUDA

namespace {

using progress::Deadline;

constexpr size_t kRing = 256;          // operations in flight per communicator
constexpr size_t kCaptureWords = 512;  // captured operations per communicator (2 words each)

class StagedContext;

// How a staged operation shows on the status board.
struct OnBoard {
  OpSig sig;
  status::P2P p2p = status::P2P::None;
  int peer = -1;
};

// One captured operation: its words are reset and its job pushed to the
// progress thread by a host function at every replay of the graph.
struct Captured {
  StagedContext* ctx;
  std::shared_ptr<Plan> plan;
  std::shared_ptr<SlotSet> slots;
  size_t ready = 0, result = 0;  // indices into the context's words
  static void CUDART_CB push(void* p);
};

// Every CUDA operation of a staged collective is on the caller's stream, in
// stream order; the progress thread only does host work. Copies issued on
// internal streams while the caller's stream sits in cuStreamWaitValue32
// never complete on the H200 machine (most likely the streams share a
// hardware queue behind the wait), so nothing the progress thread needs
// waits behind the caller's stream.
//
// The caller's stream carries, for segments k = 0, 1, ...: the copies of
// segment k to a pinned slot, then a write of ready = base + k + 1; the
// progress thread waits for that word, runs segment k's host part (the
// network) and writes result = base + k + 1; the stream waits for it, copies
// segment k's results back and then the input of segment k + kSlots into the
// slot just freed. Up to kSlots segments are on their way to the host while
// the network works. Values only grow (base advances by the segment count),
// so a word is never reset and stream waits compare cyclically (GEQ).
class StagedContext final : public PathState, public AsyncDriver {
 public:
  explicit StagedContext(Communicator& comm) : comm_(comm) {
    RelaxedCapture relaxed;
    const int64_t seg = param::getInt("GDR_STAGED_CHUNK_BYTES");
    if (seg <= 0) throw InvalidArgument("GDR_STAGED_CHUNK_BYTES must be positive");
    segBytes_ = static_cast<size_t>(seg);
    nwords_ = 2 * kRing + 2 * kCaptureWords;
    checkCuda(cudaHostAlloc(reinterpret_cast<void**>(&words_), nwords_ * sizeof(uint32_t),
                            cudaHostAllocMapped | cudaHostAllocPortable),
              "cudaHostAlloc (flag words) (staged path)");
    for (size_t i = 0; i < nwords_; ++i) words_[i] = 0;
    void* dev = nullptr;
    checkCuda(cudaHostGetDevicePointer(&dev, words_, 0), "cudaHostGetDevicePointer (staged path)");
    wordsDev_ = reinterpret_cast<CUdeviceptr>(dev);
    engineWords_.assign(2 * kRing, 0);
    slots_.push_back(std::make_shared<SlotSet>(segBytes_));
    progress::EngineConfig cfg;
    cfg.timeoutMs = comm.config().timeoutMs;
    cfg.ringSlots = kRing;
    // A revoke's notice goes out from here (takeRevoke): this thread drives
    // the endpoints while staged work runs. A revoke or an abort requested
    // elsewhere stops every wait of this thread at once.
    cfg.onError = [this](gdrResult_t code, const std::string& text) {
      if (comm_.revokeRequested())
        comm_.revokeHere();
      else
        comm_.fail(code, text);
    };
    cfg.asyncError = [this] { return comm_.stopCode(); };
    cfg.onThreadStart = [] { widenHelperAffinity("staged-path progress thread"); };
    engine_ = std::make_unique<progress::Engine>(cfg, engineWords_.data(), engineWords_.size());
    checkCuda(cudaEventCreateWithFlags(&lastOp_, cudaEventDisableTiming),
              "cudaEventCreate (staged path)");
    // GPU sealing where the transports would encrypt: GDR_ENCRYPT and a peer
    // reached over the network. Every rank decides alike (with two hosts or
    // more every rank has such a peer; GDR_TRANSPORT is the same everywhere).
    if (param::getBool("GDR_ENCRYPT"))
      for (int r = 0; r < comm.size(); ++r) {
        const std::string t = comm.transportTo(r);
        if (t == "socket" || t == "ib") sealing_ = true;
      }
    comm.status().device().attach(&boardWords_, "staged");
    comm.setAsyncDriver(this);
    GDR_INFO(kColl, "staged path: progress thread started, %zu B segments, %zu in flight%s", segBytes_, kSlots,
             sealing_ ? ", data movement sealed on the GPU" : "");
  }

  ~StagedContext() {
    // Only this context's own thread can still use the communicator: it
    // applies a revoke itself from now on.
    comm_.setAsyncDriver(nullptr);
    engine_.reset();  // runs what is queued (each under its deadline), joins
    comm_.status().device().detach();
    sealer_.reset();
    if (lastOp_) cudaEventDestroy(lastOp_);
    captured_.clear();
    slots_.clear();
    cudaFreeHost(words_);
  }

  // A revoke requested while this context exists: the progress thread
  // applies it (an empty job: its thread sees the request, fails, and the
  // engine's onError tells the peers), after failing the job it runs.
  void takeRevoke() noexcept override {
    try {
      engine_->push(progress::Job{"a revoke of the communicator", nullptr});
    } catch (...) {
    }
  }

  size_t segBytes() const { return segBytes_; }
  progress::Engine& engine() { return *engine_; }

  // The GPU sealer when an operation on a stream in capture state `cs` is
  // to be sealed, else null.
  GpuSealer* sealerFor(cudaStreamCaptureStatus cs) {
    if (!sealing_ || cs != cudaStreamCaptureStatusNone) return nullptr;  // captured: see seal.h
    std::lock_guard<std::mutex> g(mu_);
    if (!sealer_) sealer_ = std::make_unique<GpuSealer>(comm_);
    return sealer_.get();
  }

  // `cs`: the capture state of `s` (captureOf); `board`: how the operation
  // shows on the status board.
  void enqueue(std::shared_ptr<Plan> plan, cudaStream_t s, cudaStreamCaptureStatus cs,
               const OnBoard& board);

  // Host side of one operation, on the progress thread.
  // `log`: the opens of a sealed operation, checked at its end (else null).
  void hostRun(const Plan& plan, SlotSet& slots, size_t ready, size_t result, uint32_t base, const Deadline& d,
               const staged::OpenLog* log = nullptr);
  void store(size_t w, uint32_t v) { __atomic_store_n(&words_[w], v, __ATOMIC_RELEASE); }
  uint32_t load(size_t w) const { return __atomic_load_n(&words_[w], __ATOMIC_ACQUIRE); }

 private:
  std::shared_ptr<SlotSet> slotsFor(size_t bytes) {
    std::lock_guard<std::mutex> g(mu_);
    // Older sets stay until the end: a queued operation may still use one,
    // and freeing pinned memory can synchronize the device.
    if (slots_.back()->bytes < bytes) slots_.push_back(std::make_shared<SlotSet>(bytes));
    return slots_.back();
  }
  // The stream side of one operation (see the class comment).
  void issue(const Plan& plan, SlotSet& slots, GpuSealer* sealer, staged::OpenLog* log, size_t ready, size_t result,
             uint32_t base, cudaStream_t s);
  CUdeviceptr wordAt(size_t w) const { return wordsDev_ + w * sizeof(uint32_t); }

  Communicator& comm_;
  size_t segBytes_ = 0;
  uint32_t* words_ = nullptr;  // host-mapped: [ready, result] per ring slot, then per captured op
  size_t nwords_ = 0;
  size_t nextCaptureWord_ = 2 * kRing;
  CUdeviceptr wordsDev_ = 0;
  std::vector<uint32_t> engineWords_;  // the engine's start/done words (host only here)
  uint32_t base_ = 0;
  std::mutex enqueueMu_;
  std::mutex mu_;
  std::vector<std::shared_ptr<SlotSet>> slots_;
  bool sealing_ = false;
  std::unique_ptr<GpuSealer> sealer_;
  // The last operation's end on its stream: the next one, on another
  // stream, waits for it (the pinned slots are shared).
  cudaEvent_t lastOp_ = nullptr;
  cudaStream_t lastStream_ = nullptr;
  bool anyOp_ = false;
  std::vector<std::shared_ptr<Captured>> captured_;
  // The status board's words (comm/device_ops.h): the progress thread
  // counts each ring job's end and says when it waits for the stream.
  DeviceWords boardWords_{};
  std::unique_ptr<progress::Engine> engine_;
};

void CUDART_CB Captured::push(void* p) {
  auto* c = static_cast<Captured*>(p);
  // The previous replay's stream operations are all behind this point.
  c->ctx->store(c->ready, 0);
  c->ctx->store(c->result, 0);
  progress::Job j;
  j.what = c->plan->what();
  StagedContext* ctx = c->ctx;
  std::shared_ptr<Plan> plan = c->plan;
  std::shared_ptr<SlotSet> slots = c->slots;
  const size_t ready = c->ready, result = c->result;
  // The release must not run over the next replay's reset: only after a
  // job that did not finish (both run on the progress thread, in order).
  auto finished = std::make_shared<bool>(false);
  j.run = [=](const Deadline& d) {
    ctx->hostRun(*plan, *slots, ready, result, 0, d);
    *finished = true;
  };
  j.release = [=] {
    if (!*finished) ctx->store(result, static_cast<uint32_t>(plan->segments()));
  };
  ctx->engine().push(std::move(j));
}

void copy2D(const Copy2D& c, char* host, bool toHost, cudaStream_t s) {
  if (toHost)
    checkCuda(cudaMemcpy2DAsync(host + c.hostOff, c.hostPitch, c.dev, c.devPitch, c.width, c.rows,
                                cudaMemcpyDeviceToHost, s),
              "cudaMemcpy2DAsync (device to host) (staged path)");
  else
    checkCuda(cudaMemcpy2DAsync(c.dev, c.devPitch, host + c.hostOff, c.hostPitch, c.width, c.rows,
                                cudaMemcpyHostToDevice, s),
              "cudaMemcpy2DAsync (host to device) (staged path)");
}

cudaStreamCaptureStatus captureOf(cudaStream_t s) {
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  checkCuda(cudaStreamIsCapturing(s, &cs), "cudaStreamIsCapturing (staged path)");
  return cs;
}

char* hostBuf(const Copy2D& c, SlotSet& slots, size_t sl) { return c.hostIn ? slots.in[sl] : slots.out[sl]; }

// Wrap-safe "v has reached want".
bool reached(uint32_t v, uint32_t want) { return static_cast<int32_t>(v - want) >= 0; }

void StagedContext::hostRun(const Plan& plan, SlotSet& slots, size_t ready, size_t result, uint32_t base,
                            const Deadline& d, const staged::OpenLog* log) {
  auto waitReady = [&](uint32_t want, const char* what, size_t k) {
    if (reached(load(ready), want)) return;
    // A wait for the stream shows on the status board while it lasts.
    __atomic_store_n(&boardWords_.stage, static_cast<uint32_t>(k) + 1, __ATOMIC_RELAXED);
    struct Clear {
      uint32_t* w;
      ~Clear() { __atomic_store_n(w, 0u, __ATOMIC_RELAXED); }
    } clear{&boardWords_.stage};
    progress::pollUntil([&] { return reached(load(ready), want); }, d,
                        [&] {
                          return strprintf("for the %s of segment %zu of %s (queued on the caller's stream: work "
                                           "before it may not have finished)",
                                           what, k, plan.what().c_str());
                        },
                        [this] { return comm_.stopCode(); });
  };
  const size_t nseg = plan.segments();
  for (size_t k = 0; k < nseg; ++k) {
    const uint32_t want = base + static_cast<uint32_t>(k) + 1;
    waitReady(want, "device-to-host copy", k);
    const size_t sl = k % kSlots;
    Segment seg = plan.segment(k);
    if (plan.sealed() && !seg.toHost.empty() && seg.toHost[0].seal.on && security::testing::takeCorruptRequest())
      slots.in[sl][seg.toHost[0].hostOff] ^= 1;  // tests: a bit flipped in transit
    seg.host(slots.in[sl], slots.out[sl]);
    store(result, want);
  }
  if (log) {
    // The stream is past every open (the log is complete: the stream wrote
    // this value after all of them were queued): check them before it may
    // go on. Every sealed operation does this, opens or not, so both sides
    // agree without reading the log early.
    const uint32_t want = base + static_cast<uint32_t>(nseg) + 1;
    waitReady(want, "GPU opens", nseg - 1);
    std::string forged = sealer_->verify(*log);
    if (!forged.empty()) throw Error(gdrRemoteError, forged);
    store(result, want);
  }
}

void StagedContext::issue(const Plan& plan, SlotSet& slots, GpuSealer* sealer, staged::OpenLog* log, size_t ready,
                          size_t result, uint32_t base, cudaStream_t s) {
  const size_t nseg = plan.segments();
  auto cs = reinterpret_cast<CUstream>(s);
  auto waitFor = [&](size_t word, uint32_t want) {
    cuOk(driver().waitValue32(cs, wordAt(word), want, CU_STREAM_WAIT_VALUE_GEQ), "cuStreamWaitValue32");
  };
  auto toHost = [&](size_t k) {
    const size_t sl = k % kSlots;
    for (Copy2D c : plan.segment(k).toHost) {
      if (c.seal.on) sealer->seal(c, hostBuf(c, slots, sl), slots.sealBuf(sl), s);
      copy2D(c, hostBuf(c, slots, sl), true, s);
    }
    cuOk(driver().writeValue32(cs, wordAt(ready), base + static_cast<uint32_t>(k) + 1, CU_STREAM_WRITE_VALUE_DEFAULT),
         "cuStreamWriteValue32");
  };
  for (size_t k = 0; k < std::min(kSlots, nseg); ++k) toHost(k);
  for (size_t k = 0; k < nseg; ++k) {
    waitFor(result, base + static_cast<uint32_t>(k) + 1);
    const size_t sl = k % kSlots;
    for (const Copy2D& c : plan.segment(k).toDevice) {
      copy2D(c, hostBuf(c, slots, sl), false, s);
      if (c.seal.on) sealer->open(c, hostBuf(c, slots, sl), *log, s);
    }
    if (k + kSlots < nseg) toHost(k + kSlots);
  }
  if (log) {  // the progress thread checks the opens (hostRun)
    const uint32_t fin = base + static_cast<uint32_t>(nseg) + 1;
    cuOk(driver().writeValue32(cs, wordAt(ready), fin, CU_STREAM_WRITE_VALUE_DEFAULT), "cuStreamWriteValue32");
    waitFor(result, fin);
  }
}

void StagedContext::enqueue(std::shared_ptr<Plan> plan, cudaStream_t s, cudaStreamCaptureStatus cs,
                            const OnBoard& board) {
  if (cs == cudaStreamCaptureStatusInvalidated)
    throw InvalidUsage("the stream's CUDA graph capture was invalidated by an earlier error");
  std::shared_ptr<SlotSet> slots = slotsFor(plan->slotBytes());
  GpuSealer* sealer = plan->sealed() ? sealer_.get() : nullptr;
  if (plan->sealed() && !sealer) throw Error(gdrInternalError, "a sealed staged plan without a sealer");
  const size_t nseg = plan->segments();
  if (nseg >= (1u << 30)) throw InvalidArgument(strprintf("%s needs too many segments (%zu)", plan->what().c_str(), nseg));
  // A failure half way leaves stream operations that wait for words nobody
  // will write unless the job releases them: fail the communicator, so the
  // job (queued first) fails fast and its release frees the stream.
  auto failing = [&](auto&& body) {
    try {
      body();
    } catch (const Error& e) {
      comm_.fail(e.code(), plan->what() + ": " + e.what());
      throw;
    }
  };
  if (cs == cudaStreamCaptureStatusActive) {
    auto cap = std::make_shared<Captured>();
    {
      std::lock_guard<std::mutex> g(mu_);
      if (nextCaptureWord_ + 2 > nwords_)
        throw NotSupported(strprintf("no flag word left for another captured device operation (%zu in use)",
                                     kCaptureWords));
      cap->ready = nextCaptureWord_++;
      cap->result = nextCaptureWord_++;
      cap->ctx = this;
      cap->plan = plan;
      cap->slots = slots;
      captured_.push_back(cap);
    }
    checkCuda(cudaLaunchHostFunc(s, &Captured::push, cap.get()),
              "cudaLaunchHostFunc (staged path)");
    issue(*plan, *slots, nullptr, nullptr, cap->ready, cap->result, 0, s);
    return;
  }
  // Ticket order, value order, job order and stream order agree.
  std::lock_guard<std::mutex> g(enqueueMu_);
  // One operation at a time across streams: the slots are shared.
  if (anyOp_ && s != lastStream_)
    checkCuda(cudaStreamWaitEvent(s, lastOp_, 0), "cudaStreamWaitEvent (staged path)");
  const progress::Ticket t = engine_->reserve();
  const uint32_t base = base_;
  base_ += static_cast<uint32_t>(nseg) + 1;
  const size_t ready = 2 * t.slot, result = 2 * t.slot + 1;
  // The values the stream may wait for end at base + nseg + 1 (the check of
  // a sealed operation's opens); a failed job releases them all.
  const uint32_t last = base + static_cast<uint32_t>(nseg) + 1;
  std::shared_ptr<staged::OpenLog> log = sealer ? std::make_shared<staged::OpenLog>() : nullptr;
  engine_->store(t.startWord(), t.seq);  // the job starts at once: it waits for the ready word itself
  auto finished = std::make_shared<bool>(false);
  // In the order ring jobs end (each release counts one).
  comm_.status().device().launched(board.sig, board.p2p, board.peer);
  engine_->submit(
      t, plan->what(),
      [this, plan, slots, ready, result, base, finished, log](const Deadline& d) {
        hostRun(*plan, *slots, ready, result, base, d, log.get());
        *finished = true;
      },
      [this, result, last, finished, log] {
        __atomic_fetch_add(&boardWords_.done, 1u, __ATOMIC_RELEASE);
        if (*finished) return;
        if (log) sealer_->release(*log);
        store(result, last);
      });
  failing([&] {
    issue(*plan, *slots, sealer, log.get(), ready, result, base, s);
    checkCuda(cudaEventRecord(lastOp_, s), "cudaEventRecord (staged path)");
  });
  lastStream_ = s;
  anyOp_ = true;
}

// The staged path's per-communicator state (Communicator::stagedPath).
StagedContext& contextFor(Communicator& comm) {
  return comm.stagedPath().get<StagedContext>(
      [&comm] { return std::make_unique<StagedContext>(comm); });
}

}  // namespace

void runCollective(Communicator& comm, const CollCall& call, void* stream) {
  StagedContext& ctx = contextFor(comm);
  const auto s = static_cast<cudaStream_t>(stream);
  const cudaStreamCaptureStatus cs = captureOf(s);
  staged::SealSpec seal;
  if (staged::sealable(call.kind) && call.count > 0)
    if (GpuSealer* sealer = ctx.sealerFor(cs)) {
      seal.on = true;
      seal.seq = sealer->nextCollectiveSeq();
    }
  std::shared_ptr<Plan> plan = staged::planCollective(
      call, comm.rank(), comm.size(), ctx.segBytes(), [&comm](const CollCall& h) { runHostCollective(comm, h); },
      seal);
  OnBoard board{status::deviceSig(static_cast<uint8_t>(call.kind), call.type, call.op, call.count,
                                  call.root)};
  ctx.enqueue(std::move(plan), s, cs, board);
}

void runP2P(Communicator& comm, std::vector<P2PItem> items, void* stream) {
  StagedContext& ctx = contextFor(comm);
  const auto s = static_cast<cudaStream_t>(stream);
  const cudaStreamCaptureStatus cs = captureOf(s);
  OnBoard board;
  {
    size_t bytes = 0;
    for (const auto& it : items) bytes += it.bytes;
    board.sig = status::deviceSig(transport::kP2PKind, gdrUint8, 0, bytes, 0);
    if (items.size() == 1) {
      board.p2p = items[0].isSend ? status::P2P::Send : status::P2P::Recv;
      board.peer = items[0].peer;
    } else {
      board.p2p = status::P2P::Batch;
    }
  }
  GpuSealer* sealer = ctx.sealerFor(cs);
  if (sealer)
    for (auto& it : items) it.sealSeq = it.isSend ? sealer->nextSendSeq(it.peer) : sealer->nextRecvSeq(it.peer);
  std::shared_ptr<Plan> plan = staged::planP2P(
      std::move(items), ctx.segBytes(),
      [&comm](const std::vector<staged::HostMsg>& msgs) {
        std::vector<P2PCall> reqs(msgs.size());
        for (size_t i = 0; i < msgs.size(); ++i) {
          reqs[i].isSend = msgs[i].isSend;
          reqs[i].sendBuf = msgs[i].host;
          reqs[i].recvBuf = msgs[i].host;
          reqs[i].count = msgs[i].bytes;
          reqs[i].type = gdrUint8;
          reqs[i].peer = msgs[i].peer;
          reqs[i].preSealed = msgs[i].preSealed;
        }
        p2pRunBatch(comm, reqs);
      },
      comm.rank(), sealer != nullptr);
  ctx.enqueue(std::move(plan), s, cs, board);
}

void waitIdle(Communicator& comm) {
  if (StagedContext* ctx = comm.stagedPath().find<StagedContext>()) ctx->engine().waitIdle();
}

#else  // no CUDA: no device buffers reach this path

void runCollective(Communicator&, const CollCall&, void*) {
  throw NotSupported("this build of gdrcoll has no CUDA support");
}
void runP2P(Communicator&, std::vector<P2PItem>, void*) {
  throw NotSupported("this build of gdrcoll has no CUDA support");
}
void waitIdle(Communicator&) {}

#endif

}  // namespace gdr::paths::staged

// The staged path's per-communicator state (Communicator::stagedPath): the
// host-mapped flag words, the pinned slots, the GPU sealer and the progress
// thread, and the two sides of an operation over them: the stream side
// (issue, pipeline.cc) and the host side on the progress thread (hostRun,
// pipeline.cc); enqueue (enqueue.cc) queues one operation, on the ring of
// jobs or, under CUDA-graph capture, as a host function of the graph.
// Internal to paths/staged/ (path.h is the path's interface).
#pragma once

#if GDR_HAVE_CUDA
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <vector>

#include "comm/comm.h"
#include "paths/staged/plan.h"
#include "paths/staged/seal.h"
#include "paths/staged/slots.h"
#include "progress/progress_engine.h"

namespace gdr::paths::staged {

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
  explicit StagedContext(Communicator& comm);
  ~StagedContext();
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
  void hostRun(const Plan& plan, SlotSet& slots, size_t ready, size_t result, uint32_t base,
               const Deadline& d, const staged::OpenLog* log = nullptr);
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
  void issue(const Plan& plan, SlotSet& slots, GpuSealer* sealer, staged::OpenLog* log,
             size_t ready, size_t result, uint32_t base, cudaStream_t s);
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

// The communicator's context, made on first use.
StagedContext& contextFor(Communicator& comm);

}  // namespace gdr::paths::staged

#endif

#include "paths/staged/context.h"

#if GDR_HAVE_CUDA
#include "core/cuda.h"
#include "core/error.h"
#include "core/log.h"
#include "core/params.h"
#include "paths/progress_thread.h"
#include "paths/staged/driver.h"

namespace gdr::paths::staged {

StagedContext::StagedContext(Communicator& comm) : comm_(comm) {
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
  engine_ = std::make_unique<progress::Engine>(
      progressThreadConfig(comm, kRing, "staged-path progress thread"), engineWords_.data(),
      engineWords_.size());
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
  GDR_INFO(kColl, "staged path: progress thread started, %zu B segments, %zu in flight%s",
           segBytes_, kSlots, sealing_ ? ", data movement sealed on the GPU" : "");
}

StagedContext::~StagedContext() {
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

// The staged path's per-communicator state (Communicator::stagedPath).
StagedContext& contextFor(Communicator& comm) {
  return comm.stagedPath().get<StagedContext>(
      [&comm] { return std::make_unique<StagedContext>(comm); });
}

}  // namespace gdr::paths::staged

#endif

#include "paths/staged/seal.h"

#if GDR_HAVE_CUDA

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "core/cuda.h"
#include "core/error.h"
#include "core/log.h"
#include "paths/staged/nonce.h"
#include "progress/poll_wait.h"
#include "security/gpu_aes_gcm.h"

namespace gdr::paths::staged {

namespace {

constexpr size_t kStatusWords = size_t{1} << 20;  // the status ring (4 MiB, host-mapped)

}  // namespace

struct GpuSealer::Impl {
  Communicator& comm;
  std::mutex mu;
  std::vector<std::unique_ptr<security::GpuGcmKey>> keys;  // by origin rank
  security::GpuGcmScratch scratch;  // staged operations of a communicator are serialised
  uint32_t collSeq = 0;
  std::vector<uint32_t> sendSeq, recvSeq;
  // Status words: a ring of host-mapped words; position p is word p % size.
  // Taken in queue order, given back in the same order once checked.
  uint32_t* status = nullptr;
  uint64_t nextStatus = 0;
  std::atomic<uint64_t> checkedUpTo{0};

  explicit Impl(Communicator& c) : comm(c), keys(c.size()), sendSeq(c.size()), recvSeq(c.size()) {
    checkCuda(cudaHostAlloc(reinterpret_cast<void**>(&status), kStatusWords * sizeof(uint32_t),
                            cudaHostAllocMapped | cudaHostAllocPortable),
              "cudaHostAlloc (sealing status words) (GPU sealing, GDR_ENCRYPT)");
  }

  const security::GpuGcmKey& key(int origin) {
    if (origin < 0 || origin >= comm.size()) throw Error(gdrInternalError, strprintf("sealed row of rank %d", origin));
    auto& k = keys[origin];
    if (!k) {
      uint8_t raw[security::kKeyBytes];
      sealOriginKey(comm.jobSecret(), origin, raw);
      try {
        k = std::make_unique<security::GpuGcmKey>(raw);
      } catch (...) {
        security::wipe(raw, sizeof(raw));
        throw;
      }
      security::wipe(raw, sizeof(raw));
    }
    return *k;
  }

  // The next status word, once the ring has room (older operations checked).
  uint32_t* takeStatus() {
    const uint64_t pos = nextStatus++;
    auto roomy = [&] { return pos - checkedUpTo.load(std::memory_order_acquire) < kStatusWords; };
    if (!roomy())
      progress::pollUntil(roomy, progress::Deadline::in(comm.config().timeoutMs), [] {
        return std::string("for earlier sealed device operations to be checked");
      });
    // Written here, before the open that sets it is queued: no operation
    // still using this word is unchecked (see the wait above).
    uint32_t* w = status + pos % kStatusWords;
    *w = security::kGcmPending;
    return w;
  }
};

GpuSealer::GpuSealer(Communicator& comm) : impl_(std::make_unique<Impl>(comm)) {
  GDR_INFO(kNet, "GDR_ENCRYPT: device buffers of data-movement operations between hosts are sealed on the GPU");
}

GpuSealer::~GpuSealer() {
  cudaDeviceSynchronize();  // kernels in flight use the status words
  cudaGetLastError();
  if (impl_->status) cudaFreeHost(impl_->status);
}

uint32_t GpuSealer::nextCollectiveSeq() {
  std::lock_guard<std::mutex> g(impl_->mu);
  return takeSealSeq(impl_->collSeq);
}
uint32_t GpuSealer::nextSendSeq(int peer) {
  std::lock_guard<std::mutex> g(impl_->mu);
  return takeSealSeq(impl_->sendSeq.at(peer));
}
uint32_t GpuSealer::nextRecvSeq(int peer) {
  std::lock_guard<std::mutex> g(impl_->mu);
  return takeSealSeq(impl_->recvSeq.at(peer));
}

void GpuSealer::seal(Copy2D& c, char* host, char* devSlot, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  char* scratch = devSlot + c.hostOff;
  for (size_t r = 0; r < c.rows; ++r) {
    uint8_t iv[12];
    sealNonce(c.seal.id(r), iv);
    uint8_t* tag = reinterpret_cast<uint8_t*>(host + c.hostOff + r * c.hostPitch + c.width);
    checkCuda(security::gpuAesGcmSeal(impl_->key(c.seal.originOf(r)), iv, nullptr, 0,
                                      c.dev + r * c.devPitch, scratch + r * c.hostPitch, c.width,
                                      tag, impl_->scratch, s),
              "AES-GCM seal kernel (GPU sealing, GDR_ENCRYPT)");
  }
  c.dev = scratch;
  c.devPitch = c.hostPitch;
}

void GpuSealer::open(const Copy2D& c, const char* host, OpenLog& log, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  for (size_t r = 0; r < c.rows; ++r) {
    uint8_t iv[12];
    sealNonce(c.seal.id(r), iv);
    const int origin = c.seal.originOf(r);
    const auto* tag = reinterpret_cast<const uint8_t*>(host + c.hostOff + r * c.hostPitch + c.width);
    uint32_t* st = impl_->takeStatus();
    char* row = c.dev + r * c.devPitch;
    checkCuda(security::gpuAesGcmOpen(impl_->key(origin), iv, nullptr, 0, row, row, c.width, tag,
                                      impl_->scratch, st, s),
              "AES-GCM open kernel (GPU sealing, GDR_ENCRYPT)");
    log.rows.push_back({st, origin});
    log.end.store(impl_->nextStatus, std::memory_order_release);  // read by the progress thread only after the stream passed the opens
  }
}

std::string GpuSealer::verify(const OpenLog& log) {
  std::string text;
  for (const OpenLog::Row& r : log.rows) {
    const uint32_t st = __atomic_load_n(r.status, __ATOMIC_ACQUIRE);
    if (st == security::kGcmAuthentic) continue;
    text = strprintf(
        "data from rank %d failed authentication on the GPU (AES-GCM tag mismatch: altered or corrupted in "
        "transit%s); it was not delivered (zeros written in its place)",
        r.origin, st == security::kGcmForged ? "" : ", or its check never ran");
    break;
  }
  release(log);
  return text;
}

void GpuSealer::release(const OpenLog& log) {
  const uint64_t end = log.end.load(std::memory_order_acquire);
  uint64_t cur = impl_->checkedUpTo.load(std::memory_order_relaxed);
  while (end > cur && !impl_->checkedUpTo.compare_exchange_weak(cur, end, std::memory_order_release)) {
  }
}

}  // namespace gdr::paths::staged

#endif  // GDR_HAVE_CUDA

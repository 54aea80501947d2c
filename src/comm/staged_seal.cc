#include "comm/staged_seal.h"

#if GDR_HAVE_CUDA

#include <cuda_runtime_api.h>

#include <cstring>
#include <mutex>

#include "core/error.h"
#include "core/log.h"
#include "security/gpu_aes_gcm.h"
#include "security/staged_nonce.h"

namespace gdr::staged {

namespace {

constexpr size_t kMaxSlots = 16;  // more than the staged path's pipeline depth

void ok(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) {
    cudaGetLastError();
    throw Error(gdrCudaError, strprintf("%s: %s (GPU sealing, GDR_ENCRYPT)", what, cudaGetErrorString(rc)));
  }
}

// A row whose open is queued: its status word and whose data it was.
struct OpenedRow {
  const uint32_t* status;
  int origin;
};

struct CheckJob {
  const GpuSealer::ForgedFn* onForged;
  std::vector<OpenedRow> rows;
  static void CUDART_CB run(void* p) {
    std::unique_ptr<CheckJob> j(static_cast<CheckJob*>(p));
    for (const OpenedRow& r : j->rows) {
      uint32_t st = __atomic_load_n(r.status, __ATOMIC_ACQUIRE);
      if (st == security::kGcmAuthentic) continue;
      std::string text = strprintf(
          "data from rank %d failed authentication on the GPU (AES-GCM tag mismatch: altered or corrupted in "
          "transit%s); it was not delivered (zeros written in its place)",
          r.origin, st == security::kGcmForged ? "" : ", or its check never ran");
      (*j->onForged)(gdrRemoteError, text);
      return;
    }
  }
};

}  // namespace

struct GpuSealer::Impl {
  Communicator& comm;
  ForgedFn onForged;
  std::mutex mu;
  std::vector<std::unique_ptr<security::GpuGcmKey>> keys;  // by origin rank
  security::GpuGcmScratch scratch;  // staged operations of a communicator are serialised
  uint32_t collSeq = 0;
  std::vector<uint32_t> sendSeq, recvSeq;
  // per slot: device scratch the rows are sealed into, and mapped status words
  char* dev[kMaxSlots] = {};
  size_t devBytes[kMaxSlots] = {};
  uint32_t* status[kMaxSlots] = {};
  size_t statusCap[kMaxSlots] = {};
  std::vector<OpenedRow> opened[kMaxSlots];
  std::vector<void*> retiredDev, retiredHost;  // outgrown; an operation in flight may still use them

  Impl(Communicator& c, ForgedFn f) : comm(c), onForged(std::move(f)), keys(c.size()), sendSeq(c.size()), recvSeq(c.size()) {}

  const security::GpuGcmKey& key(int origin) {
    if (origin < 0 || origin >= comm.size()) throw Error(gdrInternalError, strprintf("sealed row of rank %d", origin));
    auto& k = keys[origin];
    if (!k) {
      uint8_t raw[security::kKeyBytes];
      security::sealOriginKey(comm.jobSecret(), origin, raw);
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

  char* devScratch(size_t slot, size_t bytes) {
    if (devBytes[slot] < bytes) {
      if (dev[slot]) retiredDev.push_back(dev[slot]);
      dev[slot] = nullptr;
      devBytes[slot] = 0;
      ok(cudaMalloc(reinterpret_cast<void**>(&dev[slot]), bytes), "cudaMalloc (sealing scratch)");
      devBytes[slot] = bytes;
    }
    return dev[slot];
  }

  // A fresh status word for a row of `slot`'s segment (words are reused from
  // the next segment of the slot on, which comes after this one's check).
  uint32_t* statusWord(size_t slot) {
    if (statusNext[slot] == statusCap[slot]) {
      // Rows of this segment already point into the old block: keep it.
      if (status[slot]) retiredHost.push_back(status[slot]);
      size_t cap = std::max<size_t>(64, 2 * statusCap[slot]);
      status[slot] = nullptr;
      statusCap[slot] = statusNext[slot] = 0;
      ok(cudaHostAlloc(reinterpret_cast<void**>(&status[slot]), cap * sizeof(uint32_t),
                       cudaHostAllocMapped | cudaHostAllocPortable),
         "cudaHostAlloc (sealing status words)");
      statusCap[slot] = cap;
    }
    // Not initialised from here: this runs when the operation is queued,
    // while the stream may still be using the word for an earlier segment.
    // The open writes it before the check (stream order) reads it.
    return status[slot] + statusNext[slot]++;
  }
  size_t statusNext[kMaxSlots] = {};
};

GpuSealer::GpuSealer(Communicator& comm, ForgedFn onForged)
    : impl_(std::make_unique<Impl>(comm, std::move(onForged))) {
  GDR_INFO(kNet, "GDR_ENCRYPT: device buffers of data-movement operations between hosts are sealed on the GPU");
}

GpuSealer::~GpuSealer() {
  cudaDeviceSynchronize();  // host functions in flight use this object's words
  cudaGetLastError();
  for (size_t i = 0; i < kMaxSlots; ++i) {
    if (impl_->dev[i]) cudaFree(impl_->dev[i]);
    if (impl_->status[i]) cudaFreeHost(impl_->status[i]);
  }
  for (void* p : impl_->retiredDev) cudaFree(p);
  for (void* p : impl_->retiredHost) cudaFreeHost(p);
}

uint32_t GpuSealer::nextCollectiveSeq() {
  std::lock_guard<std::mutex> g(impl_->mu);
  return security::takeSealSeq(impl_->collSeq);
}
uint32_t GpuSealer::nextSendSeq(int peer) {
  std::lock_guard<std::mutex> g(impl_->mu);
  return security::takeSealSeq(impl_->sendSeq.at(peer));
}
uint32_t GpuSealer::nextRecvSeq(int peer) {
  std::lock_guard<std::mutex> g(impl_->mu);
  return security::takeSealSeq(impl_->recvSeq.at(peer));
}

void GpuSealer::seal(Copy2D& c, char* host, size_t slot, size_t slotBytes, void* stream) {
  if (slot >= kMaxSlots) throw Error(gdrInternalError, "sealing: slot index out of range");
  auto s = static_cast<cudaStream_t>(stream);
  char* scratch = impl_->devScratch(slot, slotBytes) + c.hostOff;
  for (size_t r = 0; r < c.rows; ++r) {
    uint8_t iv[12];
    security::sealNonce(c.seal.id(r), iv);
    uint8_t* tag = reinterpret_cast<uint8_t*>(host + c.hostOff + r * c.hostPitch + c.width);
    ok(security::gpuAesGcmSeal(impl_->key(c.seal.originOf(r)), iv, nullptr, 0, c.dev + r * c.devPitch,
                               scratch + r * c.hostPitch, c.width, tag, impl_->scratch, s),
       "AES-GCM seal kernel");
  }
  c.dev = scratch;
  c.devPitch = c.hostPitch;
}

void GpuSealer::open(const Copy2D& c, const char* host, size_t slot, void* stream) {
  if (slot >= kMaxSlots) throw Error(gdrInternalError, "sealing: slot index out of range");
  auto s = static_cast<cudaStream_t>(stream);
  for (size_t r = 0; r < c.rows; ++r) {
    uint8_t iv[12];
    security::sealNonce(c.seal.id(r), iv);
    const int origin = c.seal.originOf(r);
    const auto* tag = reinterpret_cast<const uint8_t*>(host + c.hostOff + r * c.hostPitch + c.width);
    uint32_t* st = impl_->statusWord(slot);
    char* row = c.dev + r * c.devPitch;
    ok(security::gpuAesGcmOpen(impl_->key(origin), iv, nullptr, 0, row, row, c.width, tag, impl_->scratch, st, s),
       "AES-GCM open kernel");
    impl_->opened[slot].push_back({st, origin});
  }
}

void GpuSealer::check(size_t slot, void* stream) {
  if (slot >= kMaxSlots || impl_->opened[slot].empty()) return;
  auto job = std::make_unique<CheckJob>();
  job->onForged = &impl_->onForged;
  job->rows.swap(impl_->opened[slot]);
  impl_->statusNext[slot] = 0;
  ok(cudaLaunchHostFunc(static_cast<cudaStream_t>(stream), &CheckJob::run, job.get()), "cudaLaunchHostFunc");
  job.release();
}

}  // namespace gdr::staged

#endif  // GDR_HAVE_CUDA

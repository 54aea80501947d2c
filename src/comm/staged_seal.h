// GDR_ENCRYPT=1 for device buffers on the staged path: the GPU seals each
// row of a sealed plan (progress/staged_plan.h) before it leaves the device
// and opens it after it lands, with the AES-256-GCM kernels of
// security/gpu_aes_gcm.h, keys and nonces from security/staged_nonce.h.
//
// On the caller's stream, per row: seal from the user's buffer into a device
// scratch laid out like the host slot, the tag written straight into the
// pinned slot (the GPU reaches pinned memory); then the ordinary copy to the
// host. Coming back: the copy of the ciphertext into the user's buffer, then
// an open in place that checks the tag before it decrypts and writes zeros
// when it fails, so forged data is never delivered. A host function after
// each segment's opens reads their status words and puts the communicator in
// the error state, naming the rank whose data failed.
//
// Not under CUDA-graph capture: a nonce is fixed when the operation is
// queued, and a replay would use it again. Captured operations go unsealed
// and the transports encrypt them on the CPU, as they do reductions.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/comm.h"
#include "progress/staged_plan.h"

namespace gdr::staged {

class GpuSealer {
 public:
  // Called from a CUDA host function when a row failed its check (so it must
  // not touch the transports).
  using ForgedFn = std::function<void(gdrResult_t, const std::string&)>;
  // On the communicator's device; keys are made per origin rank on first use.
  GpuSealer(Communicator& comm, ForgedFn onForged);
  ~GpuSealer();  // waits for the device
  GpuSealer(const GpuSealer&) = delete;
  GpuSealer& operator=(const GpuSealer&) = delete;

  // The next sequence numbers (see security/staged_nonce.h).
  uint32_t nextCollectiveSeq();
  uint32_t nextSendSeq(int peer);
  uint32_t nextRecvSeq(int peer);

  // `c` has seal.on; `host` is the slot buffer it copies to, `slot` its index
  // and `slotBytes` the slot's size. Seals c's rows into a device scratch
  // (tags into `host`) and points `c` at the scratch. `stream`: cudaStream_t.
  void seal(Copy2D& c, char* host, size_t slot, size_t slotBytes, void* stream);
  // After the host->device copy of `c` was queued: opens its rows in place.
  void open(const Copy2D& c, const char* host, size_t slot, void* stream);
  // After a segment's opens: queues the check of their status words.
  void check(size_t slot, void* stream);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gdr::staged

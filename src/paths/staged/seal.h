// GDR_ENCRYPT=1 for device buffers on the staged path: the GPU seals each
// row of a sealed plan (paths/staged/plan.h) before it leaves the device
// and opens it after it lands, with the AES-256-GCM kernels of
// security/gpu_aes_gcm.h, keys and nonces from paths/staged/nonce.h.
//
// On the caller's stream, per row: seal from the user's buffer into a device
// scratch laid out like the host slot, the tag written straight into the
// pinned slot (the GPU reaches pinned memory); then the ordinary copy to the
// host. Coming back: the copy of the ciphertext into the user's buffer, then
// an open in place that checks the tag before it decrypts and writes zeros
// when it fails, so forged data is never delivered. Each open writes a status
// word (host-mapped); at the end of the operation the stream signals the
// progress thread, which reads the words, fails the communicator naming the
// rank whose data failed, and only then lets the stream go on. (Not a CUDA
// host function: its thread inherits the process's CPU binding and took
// ~0.5 ms to get a turn on the H200 machine.)
//
// Not under CUDA-graph capture: a nonce is fixed when the operation is
// queued, and a replay would use it again. Captured operations go unsealed
// and the transports encrypt them on the CPU, as they do reductions.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/comm.h"
#include "paths/staged/plan.h"

namespace gdr::paths::staged {

// The opens of one operation: where each row's status goes, whose row it was.
struct OpenLog {
  struct Row {
    const uint32_t* status;
    int origin;
  };
  std::vector<Row> rows;  // read only once the stream is past the opens
  std::atomic<uint64_t> end{0};  // status-ring position after the last row
};

class GpuSealer {
 public:
  // On the communicator's device; keys are made per origin rank on first use.
  explicit GpuSealer(Communicator& comm);
  ~GpuSealer();  // waits for the device
  GpuSealer(const GpuSealer&) = delete;
  GpuSealer& operator=(const GpuSealer&) = delete;

  // The next sequence numbers (see paths/staged/nonce.h).
  uint32_t nextCollectiveSeq();
  uint32_t nextSendSeq(int peer);
  uint32_t nextRecvSeq(int peer);

  // `c` has seal.on; `host` is the slot buffer it copies to and `devSlot` a
  // device buffer of the slot's size. Seals c's rows into devSlot at c's
  // host layout (tags into `host`) and points `c` there. `stream`:
  // cudaStream_t.
  void seal(Copy2D& c, char* host, char* devSlot, void* stream);
  // After the host->device copy of `c` was queued: opens its rows in place,
  // each with a fresh status word recorded in `log`. May wait (up to the
  // communicator's timeout) for older operations' words to be checked.
  void open(const Copy2D& c, const char* host, OpenLog& log, void* stream);
  // Progress thread, once the stream is past the operation's opens: "" when
  // every row was authentic, else the error naming the first forged row's
  // rank. Frees the operation's status words.
  std::string verify(const OpenLog& log);
  // An operation that failed before its check: its words are free.
  void release(const OpenLog& log);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gdr::paths::staged

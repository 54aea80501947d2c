// A window: a device buffer that every rank of a communicator registers
// together, each its own, mapped into every rank's process, so the fused
// kernels read and write the peers' buffers in place of their staging.
// Peer allocations are opened once per process and device however many
// windows (of any communicator) lie in them, and closed with the last.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "transport/cuda_ipc/ipc_context.h"

namespace gdr::transport::cuda_ipc {

class WindowMap {
 public:
  // Collective over the ranks of `peers`, each passing its own buffer on
  // `device` (the current device): every rank gets a map, or every rank gets
  // null with the reason in *whyNot (memory that cannot be exported, such as
  // pool or managed memory, or a failed open anywhere).
  static std::unique_ptr<WindowMap> create(const IpcPeers& peers, int device, void* buffer,
                                           size_t bytes, std::string* whyNot);
  // Closes this rank's mappings of the peers' buffers; not collective. The
  // caller's kernels that use them must have finished.
  ~WindowMap();
  WindowMap(const WindowMap&) = delete;
  WindowMap& operator=(const WindowMap&) = delete;

  // Rank r's buffer as this process reaches it, and its size.
  char* base(int r) const { return base_[r]; }
  size_t bytes(int r) const { return bytes_[r]; }
  int nranks() const { return nranks_; }

 private:
  WindowMap() = default;
  int nranks_ = 0;
  int device_ = -1;
  char* base_[kMaxLocalRanks] = {};
  size_t bytes_[kMaxLocalRanks] = {};
  // Per peer in another process: the opened allocation, released in the
  // process's cache on destruction.
  int32_t pid_[kMaxLocalRanks] = {};
  uint64_t allocBase_[kMaxLocalRanks] = {};
};

}  // namespace gdr::transport::cuda_ipc

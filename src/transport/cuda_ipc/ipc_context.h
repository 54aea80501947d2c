// The cuda_ipc transport's set-up: one peer-mapped device allocation per rank
// (flags and staging, see ipc_view.h), its IPC handle exchanged with every
// rank of the communicator, peer access enabled, and the view the kernels
// take by value. Created at a communicator's first device operation.
// Ranks in this same process (one process driving several GPUs) are reached
// by their raw device pointers with peer access enabled, not by IPC handles.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "transport/cuda_ipc/ipc_view.h"

namespace gdr::transport::cuda_ipc {

// What the set-up needs to know of the ranks it joins, from the caller (the
// communicator's cuda_ipc path), so the back end knows no communicator.
struct IpcPeers {
  int rank = 0;
  int size = 1;
  int firstRemote = -1;       // the first rank on another host, -1: none
  bool socketForced = false;  // GDR_TRANSPORT=socket
  int64_t timeoutMs = 0;      // per device-side barrier wait
  // Every rank's `bytes` from `mine` into `all` (rank order), over the
  // host transport: set-up traffic only, before any kernel runs.
  std::function<void(const void* mine, void* all, size_t bytes)> allgather;
};

// Every rank's `mine`, in rank order (trivially copyable T).
template <typename T>
std::vector<T> allgatherOf(const IpcPeers& peers, const T& mine) {
  std::vector<T> all(peers.size);
  peers.allgather(&mine, all.data(), sizeof(T));
  return all;
}

class IpcContext {
 public:
  // Collective over the ranks: every rank calls it, and every rank gets a
  // context or every rank gets null with the reason in *whyNot (ranks on
  // several hosts, more than kMaxLocalRanks, no device, GDR_CUDA_IPC=0,
  // GDR_TRANSPORT=socket, or a failed allocation or handle open anywhere).
  static std::unique_ptr<IpcContext> create(const IpcPeers& peers, std::string* whyNot);
  ~IpcContext();
  IpcContext(const IpcContext&) = delete;
  IpcContext& operator=(const IpcContext&) = delete;

  const IpcView& view() const { return view_; }
  int device() const { return device_; }
  // Non-zero once a kernel's barrier timed out: bit p names local rank p.
  unsigned deviceErrors() const { return *hostError_; }
  // What the kernels write for the status board (ipc_view.h); freed with
  // the context.
  const DeviceWords* boardWords() const { return hostBoard_; }

 private:
  IpcContext() = default;
  IpcView view_;
  int device_ = -1;
  void* own_ = nullptr;
  void* mapped_[kMaxLocalRanks] = {};
  unsigned* hostError_ = nullptr;
  DeviceWords* hostBoard_ = nullptr;
};

}  // namespace gdr::transport::cuda_ipc

// Windows on the device path: device buffers that every rank of a
// communicator registered together (gdrCommWindowRegister,
// ncclCommWindowRegister), each rank's mapped into every rank's process by
// the cuda_ipc back end (transport/cuda_ipc/ipc_window.h). An all-reduce
// whose input and output lie in windows at the same offset on every rank
// (NCCL's symmetric contract) runs the window kernel, which reads and writes
// the peers' buffers directly instead of copying through staging; any other
// buffer takes the staging kernels as before.
#pragma once

#include <cstddef>
#include <cstdint>

#include "comm/comm.h"

namespace gdr::paths {

// Collective over `comm` (every rank, in the same order, its own buffer):
// maps the buffer on every rank where all ranks share a host, hold device
// memory and can export it; returns the window's id on this communicator,
// or 0 on every rank alike when it is not mapped (the reason at INFO): the
// buffer then only counts as registered.
uint64_t registerDeviceWindow(Communicator& comm, void* buffer, size_t bytes);
// Drops the window's mappings on this rank (0: nothing to do). The work
// that used it must have finished, as before freeing the buffer. False if
// the communicator holds no window `id`.
bool deregisterDeviceWindow(Communicator& comm, uint64_t id);
// All-reduces launched with the window kernel on this communicator (tests
// tell the window kernel from the staging ones by it).
uint64_t windowAllReduces(const Communicator& comm);

}  // namespace gdr::paths

#if GDR_HAVE_CUDA
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "transport/cuda_ipc/ipc_window.h"

namespace gdr::paths {

// A communicator's mapped windows (a member of its device path state).
// Lookups take a lock only while some window exists.
class WindowTable {
 public:
  uint64_t add(const void* base, size_t bytes, std::unique_ptr<transport::cuda_ipc::WindowMap> map);
  bool remove(uint64_t id);
  // Where every rank's counterpart of [p, p + bytes) lies (the same offset
  // in the window holding it on this rank), if a window holds it and that
  // offset fits every rank's window: at[r] for each of the window's ranks.
  bool find(const void* p, size_t bytes, void** at) const;
  bool any() const { return count_.load(std::memory_order_acquire) > 0; }

 private:
  struct Entry {
    uint64_t id;
    const char* base;
    size_t bytes;
    std::unique_ptr<transport::cuda_ipc::WindowMap> map;
  };
  mutable std::mutex mu_;
  std::vector<Entry> entries_;
  uint64_t next_ = 1;
  std::atomic<size_t> count_{0};
};

}  // namespace gdr::paths
#endif

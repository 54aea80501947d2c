// The CUDA device a communicator belongs to: the one current when it was
// created (as in NCCL). Device work on a communicator runs with that device
// set and gives the caller's back afterwards; a group's worker thread sets
// it once. Without CUDA (or without a device) every call here is a no-op.
#pragma once

namespace gdr {

// The calling thread's current CUDA device, or -1 without a usable device.
int currentCudaDevice();
// Makes `device` current on this thread (nothing for -1); throws on failure.
void setCudaDevice(int device);

// Sets `device` for a scope, restoring the previous one (nothing for -1 or
// when it is already current).
class ScopedDevice {
 public:
  explicit ScopedDevice(int device);
  ~ScopedDevice();
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace gdr

// The CUDA helpers every layer shares: the one device guard and the one
// runtime error check. A communicator's device is the one current when it
// was created (as in NCCL); device work on it runs with that device set and
// gives the caller's back afterwards. Without CUDA (or without a device) the
// device calls are no-ops. The header names no CUDA type, so host-only code
// may include it.
#pragma once

namespace gdr {

// Whether this process sees a usable CUDA device (asked once).
bool anyCudaDevice();

// The calling thread's current CUDA device, or -1 without a usable device.
int currentCudaDevice();
// Makes `device` current on this thread (nothing for -1); throws on failure.
void setCudaDevice(int device);

// Throws Error(gdrCudaError, "<what>: <CUDA's text>") unless `rc` (a
// cudaError_t) is cudaSuccess, and clears the runtime's last error so the
// next call does not report it again.
void checkCuda(int rc, const char* what);

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

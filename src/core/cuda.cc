#include "core/cuda.h"

#include "core/error.h"

#if GDR_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace gdr {

#if GDR_HAVE_CUDA

// Asked once: on a host without a device every runtime call fails, and a
// failed call per communicator or operation is wasted time.
bool anyCudaDevice() {
  static const bool any = [] {
    int n = 0;
    const bool ok = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
    cudaGetLastError();
    return ok;
  }();
  return any;
}

int currentCudaDevice() {
  if (!anyCudaDevice()) return -1;
  int dev = -1;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return dev;
}

void checkCuda(int rc, const char* what) {
  if (rc == cudaSuccess) return;
  cudaGetLastError();
  throw Error(gdrCudaError,
              strprintf("%s: %s", what, cudaGetErrorString(static_cast<cudaError_t>(rc))));
}

void setCudaDevice(int device) {
  if (device < 0) return;
  checkCuda(cudaSetDevice(device),
            strprintf("cudaSetDevice(%d) for the communicator's device", device).c_str());
}

ScopedDevice::ScopedDevice(int device) {
  if (device < 0) return;
  const int cur = currentCudaDevice();
  // No usable driver or device (host buffers on a machine without a GPU):
  // nothing to switch; a device operation reports the CUDA error itself.
  if (cur < 0 || cur == device) return;
  setCudaDevice(device);
  previous_ = cur;
}

ScopedDevice::~ScopedDevice() {
  if (previous_ >= 0 && cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
}

#else

void checkCuda(int rc, const char* what) {
  if (rc != 0) throw Error(gdrCudaError, strprintf("%s: CUDA error %d", what, rc));
}
bool anyCudaDevice() { return false; }
int currentCudaDevice() { return -1; }
void setCudaDevice(int) {}
ScopedDevice::ScopedDevice(int) {}
ScopedDevice::~ScopedDevice() {}

#endif

}  // namespace gdr

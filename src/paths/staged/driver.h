// The CUDA driver entry points the staged path's flag words need
// (cuStreamWriteValue32 / cuStreamWaitValue32 on host-mapped words), reached
// through the runtime: the library does not link libcuda, so it loads where
// no driver is installed. And the capture mode set-up calls need.
#pragma once

#if GDR_HAVE_CUDA
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

namespace gdr::paths::staged {

struct DriverApi {
  PFN_cuStreamWriteValue32_v11070 writeValue32 = nullptr;
  PFN_cuStreamWaitValue32_v11070 waitValue32 = nullptr;
  PFN_cuGetErrorString_v6000 errorString = nullptr;
};

// Throws NotSupported where the driver lacks the stream memory operations.
const DriverApi& driver();
// Throws gdrCudaError naming `what` unless rc is CUDA_SUCCESS.
void cuOk(CUresult rc, const char* what);

// Set-up calls (allocations) are legal while a stream of this thread is
// being captured only in relaxed mode.
struct RelaxedCapture {
  cudaStreamCaptureMode prev = cudaStreamCaptureModeRelaxed;
  RelaxedCapture() { cudaThreadExchangeStreamCaptureMode(&prev); }
  ~RelaxedCapture() { cudaThreadExchangeStreamCaptureMode(&prev); }
};

}  // namespace gdr::paths::staged
#endif

#include "transport/ib/gpu_copy.h"

#include <cstring>

#include "core/error.h"

#if GDR_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace gdr::transport::ib {

#if GDR_HAVE_CUDA

namespace {

// One stream per thread and device, kept for the thread's life (creating a
// stream per copy costs more than the copies below a few KiB).
cudaStream_t threadStream() {
  int dev = 0;
  cudaGetDevice(&dev);
  thread_local cudaStream_t streams[64] = {};
  if (dev < 0 || dev >= 64) throw Error(gdrCudaError, "gpuCopy: device number out of range");
  if (!streams[dev])
    if (cudaStreamCreateWithFlags(&streams[dev], cudaStreamNonBlocking) != cudaSuccess) {
      cudaGetLastError();
      streams[dev] = nullptr;
      throw Error(gdrCudaError, "gpuCopy: cudaStreamCreateWithFlags failed");
    }
  return streams[dev];
}

}  // namespace

void gpuCopy(void* dst, const void* src, size_t n, const char* what) {
  if (!n) return;
  cudaStream_t s = threadStream();
  cudaError_t rc = cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, s);
  if (rc == cudaSuccess) rc = cudaStreamSynchronize(s);
  if (rc != cudaSuccess) {
    cudaGetLastError();
    throw Error(gdrCudaError, strprintf("%s: cudaMemcpyAsync of %zu bytes (%p -> %p): %s", what, n,
                                        src, dst, cudaGetErrorString(rc)));
  }
}

#else

void gpuCopy(void* dst, const void* src, size_t n, const char*) { std::memcpy(dst, src, n); }

#endif

}  // namespace gdr::transport::ib

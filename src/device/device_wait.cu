#include "device/device_wait.h"

namespace gdr::dev {

namespace {

__device__ __forceinline__ uint64_t nowNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void waitWordKernel(const volatile uint32_t* word, uint32_t value, uint64_t timeoutNs) {
  const uint64_t t0 = nowNs();
  while (static_cast<int32_t>(*word - value) < 0) {
    if (timeoutNs && nowNs() - t0 > timeoutNs) break;
#if __CUDA_ARCH__ >= 700
    __nanosleep(500);
#endif
  }
  // What the word's writer made visible before it (the network's data in
  // device memory) is read by the kernels after this one.
  __threadfence_system();
}

}  // namespace

cudaError_t preloadWaitWord() {
  cudaFuncAttributes attr;
  return cudaFuncGetAttributes(&attr, waitWordKernel);
}

cudaError_t launchWaitWord(const uint32_t* word, uint32_t value, uint64_t timeoutNs,
                           cudaStream_t stream) {
  waitWordKernel<<<1, 1, 0, stream>>>(word, value, timeoutNs);
  return cudaGetLastError();
}

}  // namespace gdr::dev

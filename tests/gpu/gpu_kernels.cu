// Small kernels the GPU tests queue around collectives.
#include "gpu_kernels.h"

namespace {

__global__ void spinThenFill(uint32_t* p, size_t n, uint32_t value, long long spinCycles) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    const long long start = clock64();
    while (clock64() - start < spinCycles) {
    }
  }
  __syncthreads();
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = value;
}

__global__ void spinNs(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

__global__ void addOne(int32_t* p, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] += 1;
}

}  // namespace

cudaError_t testSpinThenFill(uint32_t* p, size_t n, uint32_t value, long long spinCycles, cudaStream_t s) {
  // One block: the spin delays every write of the fill.
  spinThenFill<<<1, 256, 0, s>>>(p, n, value, spinCycles);
  return cudaGetLastError();
}

cudaError_t testSpinNs(unsigned long long ns, cudaStream_t s) {
  spinNs<<<1, 1, 0, s>>>(ns);
  return cudaGetLastError();
}

cudaError_t testAddOne(int32_t* p, size_t n, cudaStream_t s) {
  addOne<<<64, 256, 0, s>>>(p, n);
  return cudaGetLastError();
}

// A stand-in for a library that links the CUDA runtime statically (as
// libnccl.so.2 must): the same copy through its own runtime, through the
// driver's entry point, and as its own kernel, called with the program's
// stream. copy_cost loads it with dlopen to price each way.
//   nvcc -O2 -arch=sm_90 -Xcompiler -fPIC -shared -cudart static -o libsrt.so static_rt_copy.cu
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {
__global__ void copy16(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}
using MemcpyAsync = CUresult (*)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
MemcpyAsync driverCopy() {
  static MemcpyAsync f = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q{};
    cudaGetDriverEntryPointByVersion("cuMemcpyAsync", &fn, 12000, cudaEnableDefault, &q);
    return reinterpret_cast<MemcpyAsync>(fn);
  }();
  return f;
}
}  // namespace

extern "C" int srtRuntimeCopy(void* dst, const void* src, size_t bytes, void* stream) {
  return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(stream));
}
extern "C" int srtDriverCopy(void* dst, const void* src, size_t bytes, void* stream) {
  return driverCopy()(CUdeviceptr(dst), CUdeviceptr(src), bytes, static_cast<CUstream>(stream));
}
extern "C" int srtKernelCopy(void* dst, const void* src, size_t bytes, void* stream) {
  const size_t n16 = bytes / 16;
  const int threads = 512;
  size_t blocks = (n16 + threads - 1) / threads;
  if (blocks > 528) blocks = 528;
  copy16<<<unsigned(blocks), threads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const uint4*>(src), static_cast<uint4*>(dst), n16);
  return cudaGetLastError();
}

#include "device/device_reduce.h"

#include "device/vec_copy.cuh"

namespace gdr::dev {

namespace {

struct ReduceArgs {
  void* dst;
  const void* srcs[kMaxSources];
  int nsrc;
  size_t count;
  int avgDiv;
};

// Each block takes a contiguous, vector-aligned slice, so the 16-byte path
// stays aligned inside every slice.
template <typename T, typename Op>
__global__ void __launch_bounds__(512) reduceKernel(ReduceArgs a) {
  constexpr size_t V = kVecElems<T>;
  const size_t per = ((a.count + gridDim.x - 1) / gridDim.x + V - 1) / V * V;
  const size_t lo = per * blockIdx.x;
  if (lo >= a.count) return;
  const size_t n = min(per, a.count - lo);
  const T* srcs[kMaxSources];
#pragma unroll
  for (int s = 0; s < kMaxSources; ++s) srcs[s] = s < a.nsrc ? static_cast<const T*>(a.srcs[s]) + lo : nullptr;
  reduceElems<T, Op>(static_cast<T*>(a.dst) + lo, srcs, a.nsrc, n, a.avgDiv, threadIdx.x, blockDim.x, 0u);
}

}  // namespace

cudaError_t launchReduce(void* dst, const void* const* srcs, int nsrc, size_t count, gdrDataType_t type,
                         gdrRedOp_t op, int avgDivisor, cudaStream_t stream) {
  if (nsrc < 1 || nsrc > kMaxSources) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  ReduceArgs a{};
  a.dst = dst;
  for (int s = 0; s < nsrc; ++s) a.srcs[s] = srcs[s];
  a.nsrc = nsrc;
  a.count = count;
  a.avgDiv = op == gdrAvg ? avgDivisor : 0;
  const int threads = 512;
  // Enough blocks to fill the chip, none smaller than 8 KiB of output.
  size_t blocks = (count + 4095) / 4096;
  if (blocks > 1024) blocks = 1024;
  cudaError_t rc = cudaErrorInvalidValue;
  dispatchType(type, [&](auto t) {
    using T = decltype(t);
    dispatchOp(op, [&](auto o) {
      using Op = decltype(o);
      reduceKernel<T, Op><<<static_cast<unsigned>(blocks), threads, 0, stream>>>(a);
      rc = cudaGetLastError();
    });
  });
  return rc;
}

cudaError_t preloadReduceKernels() {
  cudaError_t rc = cudaSuccess;
  for (int t = 0; t < gdrNumTypes; ++t)
    dispatchType(static_cast<gdrDataType_t>(t), [&](auto ty) {
      using T = decltype(ty);
      for (int op = 0; op < gdrNumOps; ++op)
        dispatchOp(static_cast<gdrRedOp_t>(op), [&](auto o) {
          using Op = decltype(o);
          cudaFuncAttributes attr;
          const cudaError_t e = cudaFuncGetAttributes(&attr, reduceKernel<T, Op>);
          if (rc == cudaSuccess) rc = e;
        });
    });
  return rc;
}

}  // namespace gdr::dev

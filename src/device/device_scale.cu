#include "device/device_scale.h"

#include <cstring>
#include <type_traits>

#include "device/reduce_ops.cuh"

namespace gdr::dev {

namespace {

// Products use the reduction's prod (same accumulator and rounding); integer
// products wrap through the unsigned type, as the host path does.
template <typename T> __device__ __forceinline__ T scaleOne(T x, T s) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(x) * static_cast<U>(s));
  } else {
    return fromAcc<T>(OpProd::apply(toAcc(x), toAcc(s)));
  }
}

template <typename T>
__global__ void __launch_bounds__(256) scaleKernel(T* dst, const T* src, size_t count, const T* scalarDev, T imm) {
  const T s = scalarDev ? *scalarDev : imm;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    dst[i] = scaleOne(src[i], s);
}

}  // namespace

cudaError_t launchScale(void* dst, const void* src, size_t count, gdrDataType_t type, const void* scalarDev,
                        const void* scalarHost, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  if (!scalarDev && !scalarHost) return cudaErrorInvalidValue;
  const int threads = 256;
  size_t blocks = (count + 4 * threads - 1) / (4 * threads);  // a few elements per thread
  if (blocks > 2048) blocks = 2048;
  cudaError_t rc = cudaErrorInvalidValue;
  dispatchType(type, [&](auto t) {
    using T = decltype(t);
    T imm{};
    if (!scalarDev) std::memcpy(static_cast<void*>(&imm), scalarHost, sizeof(T));
    scaleKernel<T><<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
        static_cast<T*>(dst), static_cast<const T*>(src), count, static_cast<const T*>(scalarDev), imm);
    rc = cudaGetLastError();
  });
  return rc;
}

}  // namespace gdr::dev

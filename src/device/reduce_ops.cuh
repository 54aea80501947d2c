// Device-side reduction operators for every gdrcoll type and op, and the
// 16-byte vector helpers the kernels build on. fp16, bf16 and fp8 accumulate
// in fp32 (Acc) and round once when stored (fp8 saturating, __NV_SATFINITE,
// as NCCL's __nv_fp8 conversions do); integers wrap like the host path;
// avg reduces as sum and the caller divides once at the end.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>

#include "gdrcoll.h"

namespace gdr::dev {

// Storage type -> accumulator type.
template <typename T> struct AccOf { using type = T; };
template <> struct AccOf<__half> { using type = float; };
template <> struct AccOf<__nv_bfloat16> { using type = float; };
template <> struct AccOf<__nv_fp8_e4m3> { using type = float; };
template <> struct AccOf<__nv_fp8_e5m2> { using type = float; };

template <typename T> __device__ __forceinline__ typename AccOf<T>::type toAcc(T x) { return x; }
template <> __device__ __forceinline__ float toAcc<__half>(__half x) { return __half2float(x); }
template <> __device__ __forceinline__ float toAcc<__nv_bfloat16>(__nv_bfloat16 x) { return __bfloat162float(x); }
template <> __device__ __forceinline__ float toAcc<__nv_fp8_e4m3>(__nv_fp8_e4m3 x) { return static_cast<float>(x); }
template <> __device__ __forceinline__ float toAcc<__nv_fp8_e5m2>(__nv_fp8_e5m2 x) { return static_cast<float>(x); }

template <typename T> __device__ __forceinline__ T fromAcc(typename AccOf<T>::type x) { return static_cast<T>(x); }
template <> __device__ __forceinline__ __half fromAcc<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 fromAcc<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
template <> __device__ __forceinline__ __nv_fp8_e4m3 fromAcc<__nv_fp8_e4m3>(float x) {
  __nv_fp8_e4m3 r;
  r.__x = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
  return r;
}
template <> __device__ __forceinline__ __nv_fp8_e5m2 fromAcc<__nv_fp8_e5m2>(float x) {
  __nv_fp8_e5m2 r;
  r.__x = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2);
  return r;
}

struct OpSum {
  template <typename A> __device__ __forceinline__ static A apply(A a, A b) { return static_cast<A>(a + b); }
};
struct OpProd {
  template <typename A> __device__ __forceinline__ static A apply(A a, A b) { return static_cast<A>(a * b); }
};
struct OpMax {
  template <typename A> __device__ __forceinline__ static A apply(A a, A b) { return a > b ? a : b; }
};
struct OpMin {
  template <typename A> __device__ __forceinline__ static A apply(A a, A b) { return a < b ? a : b; }
};

// Divides by n at the end of avg (integers truncate, as on the host).
template <typename A> __device__ __forceinline__ A divideBy(A x, int n) { return static_cast<A>(x / static_cast<A>(n)); }

// Elements of T in one 16-byte vector.
template <typename T> constexpr int kVecElems = 16 / sizeof(T);

// One 16-byte vector seen as elements (whole-struct copies stay in registers).
template <typename T> struct alignas(16) VecOf {
  T e[kVecElems<T>];
};
template <typename T> __device__ __forceinline__ VecOf<T> asVec(uint4 u) {
  VecOf<T> v;
  memcpy(&v, &u, 16);
  return v;
}
template <typename T> __device__ __forceinline__ uint4 asU4(const VecOf<T>& v) {
  uint4 u;
  memcpy(&u, &v, 16);
  return u;
}

// Calls f(Type{}) with the CUDA storage type for `t`.
template <typename F> void dispatchType(gdrDataType_t t, F&& f) {
  switch (t) {
    case gdrInt8: f(int8_t{}); break;
    case gdrUint8: f(uint8_t{}); break;
    case gdrInt32: f(int32_t{}); break;
    case gdrUint32: f(uint32_t{}); break;
    case gdrInt64: f(int64_t{}); break;
    case gdrUint64: f(uint64_t{}); break;
    case gdrFloat16: f(__half{}); break;
    case gdrBfloat16: f(__nv_bfloat16{}); break;
    case gdrFloat32: f(float{}); break;
    case gdrFloat64: f(double{}); break;
    case gdrFloat8e4m3: f(__nv_fp8_e4m3{}); break;
    case gdrFloat8e5m2: f(__nv_fp8_e5m2{}); break;
    default: break;
  }
}

// Calls f(Op{}) for `op` (avg as OpSum).
template <typename F> void dispatchOp(gdrRedOp_t op, F&& f) {
  switch (op) {
    case gdrSum:
    case gdrAvg: f(OpSum{}); break;
    case gdrProd: f(OpProd{}); break;
    case gdrMax: f(OpMax{}); break;
    case gdrMin: f(OpMin{}); break;
    default: break;
  }
}

}  // namespace gdr::dev

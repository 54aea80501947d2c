// Block-cooperative copy and n-way reduction over element ranges, in 16-byte
// vectors where every pointer allows it (else element by element). Several
// independent vectors are loaded before the first use, so each thread keeps
// a few loads in flight (the kernels are memory- and NVLink-bound).
#pragma once

#include "device/reduce_ops.cuh"

namespace gdr::dev {

constexpr int kMaxSources = 8;
constexpr int kUnroll = 4;

__device__ __forceinline__ bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

// Staging memory is written by peers over NVLink: read it from L2, never a
// possibly stale L1 line.
__device__ __forceinline__ uint4 loadVec(const uint4* p, bool fromL2) { return fromL2 ? __ldcg(p) : *p; }

// dst[0, bytes) = src[0, bytes), by threads [tid, nthreads).
__device__ __forceinline__ void copyBytes(char* dst, const char* src, size_t bytes, int tid, int nthreads,
                                          bool srcFromL2) {
  if (bytes == 0 || dst == src) return;
  size_t done = 0;
  if (aligned16(dst) && aligned16(src)) {
    const size_t nvec = bytes / 16;
    const uint4* s = reinterpret_cast<const uint4*>(src);
    uint4* d = reinterpret_cast<uint4*>(dst);
    size_t i = tid;
    for (; i + (kUnroll - 1) * nthreads < nvec; i += kUnroll * nthreads) {
      uint4 v[kUnroll];
#pragma unroll
      for (int k = 0; k < kUnroll; ++k) v[k] = loadVec(s + i + k * nthreads, srcFromL2);
#pragma unroll
      for (int k = 0; k < kUnroll; ++k) d[i + k * nthreads] = v[k];
    }
    for (; i < nvec; i += nthreads) d[i] = loadVec(s + i, srcFromL2);
    done = nvec * 16;
  }
  for (size_t i = done + tid; i < bytes; i += nthreads) dst[i] = src[i];
}

// dst[i] = op over s of srcs[s][i] for i in [0, count), sources combined in
// index order (so every rank that reduces the same inputs gets the same
// bits); avgDiv > 0 divides the result once. srcFromL2 bit s marks staging.
// MaxS bounds nsrc at compile time (fewer registers for two ranks).
template <typename T, typename Op, int MaxS = kMaxSources>
__device__ void reduceElems(T* dst, const T* const* srcs, int nsrc, size_t count, int avgDiv, int tid,
                            int nthreads, unsigned srcFromL2) {
  using Acc = typename AccOf<T>::type;
  constexpr int V = kVecElems<T>;
  bool vec = aligned16(dst);
  for (int s = 0; s < nsrc; ++s) vec = vec && aligned16(srcs[s]);
  size_t done = 0;
  if (vec) {
    const size_t nvec = count / V;
    for (size_t i = tid; i < nvec; i += nthreads) {
      uint4 raw[MaxS];
#pragma unroll
      for (int s = 0; s < MaxS; ++s)
        if (s < nsrc) raw[s] = loadVec(reinterpret_cast<const uint4*>(srcs[s]) + i, (srcFromL2 >> s) & 1);
      VecOf<T> acc0 = asVec<T>(raw[0]);
      Acc a[V];
#pragma unroll
      for (int e = 0; e < V; ++e) a[e] = toAcc(acc0.e[e]);
#pragma unroll
      for (int s = 1; s < MaxS; ++s) {
        if (s < nsrc) {
          VecOf<T> x = asVec<T>(raw[s]);
#pragma unroll
          for (int e = 0; e < V; ++e) a[e] = Op::apply(a[e], toAcc(x.e[e]));
        }
      }
      VecOf<T> out;
#pragma unroll
      for (int e = 0; e < V; ++e) out.e[e] = fromAcc<T>(avgDiv > 0 ? divideBy(a[e], avgDiv) : a[e]);
      reinterpret_cast<uint4*>(dst)[i] = asU4<T>(out);
    }
    done = nvec * V;
  }
  for (size_t i = done + tid; i < count; i += nthreads) {
    Acc a = toAcc(srcs[0][i]);
    for (int s = 1; s < nsrc; ++s) a = Op::apply(a, toAcc(srcs[s][i]));
    if (avgDiv > 0) a = divideBy(a, avgDiv);
    dst[i] = fromAcc<T>(a);
  }
}

}  // namespace gdr::dev

// The LL all-reduce for small messages (NCCL's LL idea: the flag travels in
// the same 8-byte word as the data). Thread i of the grid owns packet i, the
// message's bytes [8i, 8i + 8): it stores them with the call's flag into
// packet i of every peer's LL area, then waits for packet i from every peer
// in its own area, reduces the n words in rank order (so every rank gets the
// same bits), writes its output and zeroes the packets it read. No barrier
// and no fence: a packet is complete when both its flags are the expected
// one (transport/cuda_ipc/ipc_view.h has the layout and why two slots are
// enough).
//
// The kernel waits for the work before it on the stream (griddepcontrol.wait)
// before it reads the user's input or its epochs, and at once lets the next
// kernel start launching, so with programmatic dependent launch a sequence of
// small all-reduces pays the launch latency while the previous one runs.
#include <cuda_runtime.h>

#include "device/reduce_ops.cuh"
#include "paths/ipc/kernel_common.cuh"
#include "paths/ipc/kernels.h"

namespace gdr::paths::ipc {

namespace {

using transport::cuda_ipc::kLLMaxBlocks;
using transport::cuda_ipc::kLLThreads;
using transport::cuda_ipc::llAreaOffset;

__device__ __forceinline__ void waitForPriorGrids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void letDependentsLaunch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ void storePacket(uint4* p, uint4 v) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y),
               "r"(v.z), "r"(v.w)
               : "memory");
}
__device__ __forceinline__ uint4 loadPacket(const uint4* p) {
  uint4 v;
  asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}

// Packet i that `src` sends to `owner`, in owner's LL area, slot `slot`.
__device__ __forceinline__ uint4* packetAt(const IpcView& v, int owner, uint32_t slot, int src,
                                           size_t i) {
  constexpr size_t kPackets = kLLBytes / 8;
  char* area = v.base[owner] + llAreaOffset(v.nranks, v.chunkBytes);
  return reinterpret_cast<uint4*>(area) + (static_cast<size_t>(slot) * v.nranks + src) * kPackets +
         i;
}

// The packet from `peer` once both its flags are `flag`. A wait past the
// deadline (or one for a peer another thread already timed out on) records
// the peer in the host-mapped error word and gives up, so a dead peer fails
// the communicator instead of hanging the GPU.
__device__ uint2 awaitPacket(const IpcView& v, const uint4* p, uint32_t flag, int peer) {
  uint4 x = loadPacket(p);
  if (x.y == flag && x.w == flag) return make_uint2(x.x, x.z);
  const unsigned long long start = globalTimer();
  for (unsigned spins = 1;; ++spins) {
    x = loadPacket(p);
    if (x.y == flag && x.w == flag) break;
    if ((spins & 1023u) != 0) continue;
    const unsigned bit = 1u << peer;
    if (*static_cast<volatile unsigned*>(v.errorWord) & bit) break;
    if (globalTimer() - start > v.timeoutNs) {
      atomicOr_system(v.errorWord, bit);
      break;
    }
  }
  return make_uint2(x.x, x.z);
}

// The W elements of T one packet carries.
template <typename T>
struct alignas(8) Word {
  static constexpr int W = 8 / sizeof(T);
  T e[W];
};
template <typename T>
__device__ __forceinline__ Word<T> asWord(uint2 u) {
  Word<T> w;
  memcpy(&w, &u, 8);
  return w;
}
template <typename T>
__device__ __forceinline__ uint2 asBits(const Word<T>& w) {
  uint2 u;
  memcpy(&u, &w, 8);
  return u;
}

// Elements [first, first + W) of p, zeros past `count` (the last packet's
// tail; any pointer alignment the element type allows).
template <typename T>
__device__ __forceinline__ uint2 loadWord(const T* p, size_t first, size_t count) {
  constexpr int W = Word<T>::W;
  const T* at = p + first;
  if (first + W <= count && (reinterpret_cast<uintptr_t>(at) & 7) == 0)
    return *reinterpret_cast<const uint2*>(at);
  Word<T> w = asWord<T>(make_uint2(0, 0));
#pragma unroll
  for (int k = 0; k < W; ++k)
    if (first + k < count) w.e[k] = at[k];
  return asBits(w);
}
template <typename T>
__device__ __forceinline__ void storeWord(T* p, size_t first, size_t count, uint2 bits) {
  constexpr int W = Word<T>::W;
  T* at = p + first;
  if (first + W <= count && (reinterpret_cast<uintptr_t>(at) & 7) == 0) {
    *reinterpret_cast<uint2*>(at) = bits;
    return;
  }
  const Word<T> w = asWord<T>(bits);
#pragma unroll
  for (int k = 0; k < W; ++k)
    if (first + k < count) at[k] = w.e[k];
}

template <typename T, typename Op>
__global__ void __launch_bounds__(kLLThreads)
    llAllReduceKernel(IpcView v, const T* in, T* out, size_t count, int avgDiv) {
  using Acc = typename dev::AccOf<T>::type;
  constexpr int W = Word<T>::W;
  waitForPriorGrids();
  letDependentsLaunch();
  __shared__ uint32_t blockFlag;
  if (threadIdx.x == 0) {
    // Never 0 (a zeroed packet) and alternating in parity across the wrap.
    const uint32_t last = v.llEpochs[blockIdx.x];
    blockFlag = last == 0xffffffffu ? 2u : last + 1u;
  }
  __syncthreads();
  const uint32_t flag = blockFlag, slot = flag & 1u;
  const int me = v.rank, n = v.nranks;
  const size_t packets = (count + W - 1) / W;
  const size_t i = static_cast<size_t>(blockIdx.x) * kLLThreads + threadIdx.x;
  if (i < packets) {
    const uint2 mine = loadWord(in, i * W, count);
    const uint4 pk = make_uint4(mine.x, flag, mine.y, flag);
    for (int p = 1; p < n; ++p) {  // me + 1 first: every rank's stores spread over the peers
      const int q = (me + p) % n;
      storePacket(packetAt(v, q, slot, me, i), pk);
    }
    Acc a[W];
    for (int r = 0; r < n; ++r) {
      uint2 bits = mine;
      if (r != me) {
        uint4* p = packetAt(v, me, slot, r, i);
        bits = awaitPacket(v, p, flag, r);
        storePacket(p, make_uint4(0, 0, 0, 0));  // read: the slot is clean for two calls on
      }
      const Word<T> x = asWord<T>(bits);
#pragma unroll
      for (int k = 0; k < W; ++k)
        a[k] = r == 0 ? dev::toAcc(x.e[k]) : Op::apply(a[k], dev::toAcc(x.e[k]));
    }
    Word<T> res;
#pragma unroll
    for (int k = 0; k < W; ++k)
      res.e[k] = dev::fromAcc<T>(avgDiv > 0 ? dev::divideBy(a[k], avgDiv) : a[k]);
    storeWord(out, i * W, count, asBits(res));
  }
  __syncthreads();
  if (threadIdx.x == 0) v.llEpochs[blockIdx.x] = flag;
  countDone(v);
}

template <typename T, typename Op>
cudaError_t launchTyped(const IpcView& v, const ReduceCall& c, bool programmatic,
                        cudaStream_t stream) {
  constexpr size_t W = 8 / sizeof(T);
  const size_t packets = (c.count + W - 1) / W;
  const unsigned grid = static_cast<unsigned>((packets + kLLThreads - 1) / kLLThreads);
  const int avgDiv = c.op == gdrAvg ? v.nranks : 0;
  const T* in = static_cast<const T*>(c.input);
  T* out = static_cast<T*>(c.output);
#if CUDART_VERSION >= 11080
  if (programmatic) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(kLLThreads);
    cfg.stream = stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cudaLaunchKernelEx(&cfg, llAllReduceKernel<T, Op>, v, in, out, c.count, avgDiv);
  }
#else
  (void)programmatic;
#endif
  llAllReduceKernel<T, Op><<<grid, kLLThreads, 0, stream>>>(v, in, out, c.count, avgDiv);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launchLLAllReduce(const IpcView& v, const ReduceCall& c, bool programmatic,
                              cudaStream_t stream) {
  if (c.count == 0) {
    ReduceCall none = c;
    none.mode = ReduceMode::OneShot;
    return launchReduce(v, none, stream);  // nothing to move; still counted on the board
  }
  cudaError_t rc = cudaErrorInvalidValue;
  dev::dispatchType(c.type, [&](auto t) {
    using T = decltype(t);
    if (c.count > kLLBytes / sizeof(T)) return;  // larger than the LL area: the caller's mistake
    static_assert(kLLMaxBlocks * kLLThreads * 8 == kLLBytes,
                  "one packet per thread of the largest grid");
    dev::dispatchOp(c.op,
                    [&](auto o) { rc = launchTyped<T, decltype(o)>(v, c, programmatic, stream); });
  });
  return rc;
}

}  // namespace gdr::paths::ipc

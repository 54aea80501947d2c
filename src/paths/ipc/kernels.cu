// The fused IPC kernels; the protocol is described in kernels.h and transport/cuda_ipc/ipc_view.h.
#include "device/vec_copy.cuh"
#include "paths/ipc/kernel_common.cuh"
#include "paths/ipc/kernels.h"

namespace gdr::paths::ipc {

namespace {

using dev::copyBytes;
constexpr int kThreads = 512;

__device__ __forceinline__ void storeRelease(uint64_t* p, uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ uint64_t loadAcquire(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ uint64_t* flagWord(const IpcView& v, int owner, int block, int src) {
  return reinterpret_cast<uint64_t*>(v.base[owner]) + block * kMaxLocalRanks + src;
}
__device__ __forceinline__ char* staging(const IpcView& v, int owner, uint64_t region, int src, int block) {
  return v.base[owner] + kFlagBytes +
         ((static_cast<size_t>(region & 1) * v.nranks + src) * kMaxBlocks + block) * v.chunkBytes;
}

// Bytes per unit for a transfer of `total` bytes: small enough that the
// grid's blocks share the work, at least 4 KiB, at most a staging chunk.
__host__ __device__ inline size_t unitBytes(size_t total, int maxBlocks, size_t chunk) {
  size_t u = (total + maxBlocks - 1) / maxBlocks;
  u = (u + 15) / 16 * 16;
  if (u < 4096) u = 4096;
  return u < chunk ? u : chunk;
}

struct BlockEpochs {
  uint64_t e[kMaxLocalRanks];
};

__device__ void loadEpochs(const IpcView& v, BlockEpochs& ep) {
  if (threadIdx.x < kMaxLocalRanks) ep.e[threadIdx.x] = v.epochs[blockIdx.x * kMaxLocalRanks + threadIdx.x];
  __syncthreads();
}
__device__ void saveEpochs(const IpcView& v, const BlockEpochs& ep) {
  __syncthreads();
  if (threadIdx.x < kMaxLocalRanks) v.epochs[blockIdx.x * kMaxLocalRanks + threadIdx.x] = ep.e[threadIdx.x];
}

// Barrier of this block with the peers in `mask` (see transport/cuda_ipc/ipc_view.h). A wait
// past the deadline records the peer in the host-mapped error word and gives
// up, so a dead peer fails the communicator instead of hanging the GPU.
__device__ void barrier(const IpcView& v, unsigned mask, BlockEpochs& ep) {
  __syncthreads();
  const int p = threadIdx.x;
  if (p < v.nranks && ((mask >> p) & 1u)) {
    const uint64_t e = ep.e[p] + 1;
    ep.e[p] = e;
    __threadfence_system();
    storeRelease(flagWord(v, p, blockIdx.x, v.rank), e);
    const uint64_t* mine = flagWord(v, v.rank, blockIdx.x, p);
    if (loadAcquire(mine) < e) {
      const unsigned long long start = globalTimer();
      unsigned spins = 0;
      bool slow = false;  // counted in the board's waiting[p]
      while (loadAcquire(mine) < e) {
        if ((++spins & 255u) != 0) continue;
        const unsigned long long waited = globalTimer() - start;
        if (!slow && waited > kDeviceSlowWaitNs && v.board && p < kDeviceWaitPeers) {
          slow = true;
          atomicAdd_system(&v.board->waiting[p], 1u);
        }
        if (waited > v.timeoutNs) {
          atomicOr_system(v.errorWord, 1u << p);
          break;
        }
      }
      if (slow) atomicSub_system(&v.board->waiting[p], 1u);
    }
  }
  __syncthreads();
}

__global__ void __launch_bounds__(kThreads, 2) exchangeKernel(IpcView v, Exchange x) {
  __shared__ BlockEpochs ep;
  loadEpochs(v, ep);
  const int me = v.rank, b = blockIdx.x, nb = gridDim.x;
  if (x.localWith < 0) {  // the local part: a slice per block
    const size_t bytes = x.sendBytes[me];
    const size_t per = ((bytes + nb - 1) / nb + 15) / 16 * 16;
    const size_t lo = per * b;
    if (lo < bytes) copyBytes(x.dst[me] + lo, x.src[me] + lo, min(per, bytes - lo), threadIdx.x, blockDim.x, false);
  }
  // Pair p's units go to its first grid[p] blocks, a number both sides of
  // the pair compute alike (a block's flags and staging are per block index).
  size_t unit[kMaxLocalRanks], units[kMaxLocalRanks], grid[kMaxLocalRanks];
  for (int p = 0; p < v.nranks; ++p) {
    const size_t most = max(x.sendBytes[p], x.recvBytes[p]);
    unit[p] = unitBytes(most, v.maxBlocks, v.chunkBytes);
    units[p] = p == me ? 0 : (most + unit[p] - 1) / unit[p];
    grid[p] = min(units[p], static_cast<size_t>(v.maxBlocks));
  }
  for (size_t j = 0;; ++j) {
    unsigned mask = 0;
    for (int p = 0; p < v.nranks; ++p)
      if (static_cast<size_t>(b) < grid[p] && b + j * grid[p] < units[p]) mask |= 1u << p;
    if (!mask) break;
    for (int p = 0; p < v.nranks; ++p) {
      const size_t off = (b + j * grid[p]) * unit[p];
      if (((mask >> p) & 1u) && off < x.sendBytes[p]) {
        const size_t len = min(unit[p], x.sendBytes[p] - off);
        copyBytes(staging(v, p, ep.e[p] + 1, me, b), x.src[p] + off, len, threadIdx.x, blockDim.x,
                  false);
        // The same bytes, still in L2, to this rank's own destination.
        if (p == x.localWith)
          copyBytes(x.dst[me] + off, x.src[p] + off, len, threadIdx.x, blockDim.x, false);
      }
    }
    barrier(v, mask, ep);
    for (int p = 0; p < v.nranks; ++p) {
      const size_t off = (b + j * grid[p]) * unit[p];
      if (((mask >> p) & 1u) && off < x.recvBytes[p])
        copyBytes(x.dst[p] + off, staging(v, me, ep.e[p], p, b), min(unit[p], x.recvBytes[p] - off), threadIdx.x,
                  blockDim.x, true);
    }
  }
  saveEpochs(v, ep);
  countDone(v);
}

// MaxS: the most ranks the instance handles (2 keeps registers low enough
// for two blocks per SM, so one block's barrier wait overlaps another's copy).
template <typename T, typename Op, int MaxS>
__global__ void __launch_bounds__(kThreads, MaxS <= 2 ? 2 : 1) reduceKernel(IpcView v, ReduceCall c, size_t unitElems, size_t segElems,
                                                          size_t nunits, int avgDiv) {
  __shared__ BlockEpochs ep;
  loadEpochs(v, ep);
  const int me = v.rank, n = v.nranks, b = blockIdx.x, nb = gridDim.x;
  const unsigned peers = ((1u << n) - 1u) & ~(1u << me);
  const T* in = static_cast<const T*>(c.input);
  T* out = static_cast<T*>(c.output);
  const int tid = threadIdx.x, nt = blockDim.x;
  const T* srcs[dev::kMaxSources];
  for (size_t u = b; u < nunits; u += nb) {
    const size_t lo = u * unitElems;
    switch (c.mode) {
      case ReduceMode::OneShot:
      case ReduceMode::Reduce: {
        const size_t len = min(unitElems, c.count - lo);
        if (c.mode == ReduceMode::Reduce && me != c.root) {
          copyBytes(staging(v, c.root, ep.e[c.root] + 1, me, b), reinterpret_cast<const char*>(in + lo), len * sizeof(T),
                    tid, nt, false);
          barrier(v, 1u << c.root, ep);
          break;
        }
        if (c.mode == ReduceMode::OneShot)
          for (int p = 0; p < n; ++p)
            if (p != me)
              copyBytes(staging(v, p, ep.e[p] + 1, me, b), reinterpret_cast<const char*>(in + lo), len * sizeof(T), tid,
                        nt, false);
        barrier(v, peers, ep);
        for (int r = 0; r < n; ++r)
          srcs[r] = r == me ? in + lo : reinterpret_cast<const T*>(staging(v, me, ep.e[r], r, b));
        dev::reduceElems<T, Op, MaxS>(out + lo, srcs, n, len, avgDiv, tid, nt, peers);
        break;
      }
      case ReduceMode::ReduceScatter: {
        const size_t len = min(unitElems, c.count - lo);
        for (int p = 0; p < n; ++p)
          if (p != me)
            copyBytes(staging(v, p, ep.e[p] + 1, me, b), reinterpret_cast<const char*>(in + p * c.count + lo),
                      len * sizeof(T), tid, nt, false);
        barrier(v, peers, ep);
        for (int r = 0; r < n; ++r)
          srcs[r] = r == me ? in + me * c.count + lo : reinterpret_cast<const T*>(staging(v, me, ep.e[r], r, b));
        dev::reduceElems<T, Op, MaxS>(out + lo, srcs, n, len, avgDiv, tid, nt, peers);
        break;
      }
      case ReduceMode::TwoShot: {
        // Segment p of the message is reduced by rank p, then sent to all.
        auto segLen = [&](int p) -> size_t {
          const size_t s = p * segElems + lo;
          if (s >= c.count) return 0;
          return min(min(unitElems, segElems - lo), c.count - s);
        };
        for (int p = 0; p < n; ++p)
          if (p != me && segLen(p))
            copyBytes(staging(v, p, ep.e[p] + 1, me, b), reinterpret_cast<const char*>(in + p * segElems + lo),
                      segLen(p) * sizeof(T), tid, nt, false);
        barrier(v, peers, ep);
        const size_t myLen = segLen(me), myLo = me * segElems + lo;
        if (myLen) {
          for (int r = 0; r < n; ++r)
            srcs[r] = r == me ? in + myLo : reinterpret_cast<const T*>(staging(v, me, ep.e[r], r, b));
          dev::reduceElems<T, Op, MaxS>(out + myLo, srcs, n, myLen, avgDiv, tid, nt, peers);
          __syncthreads();
          for (int p = 0; p < n; ++p)
            if (p != me)
              copyBytes(staging(v, p, ep.e[p] + 1, me, b), reinterpret_cast<const char*>(out + myLo), myLen * sizeof(T),
                        tid, nt, false);
        }
        barrier(v, peers, ep);
        for (int p = 0; p < n; ++p)
          if (p != me && segLen(p))
            copyBytes(reinterpret_cast<char*>(out + p * segElems + lo), staging(v, me, ep.e[p], p, b),
                      segLen(p) * sizeof(T), tid, nt, true);
        break;
      }
    }
  }
  saveEpochs(v, ep);
  countDone(v);
}

// The all-reduce over windows (kernels.h): block b reduces slice b of this
// rank's segment straight from every rank's input and stores it into every
// rank's output, between a barrier that says every rank's kernel has begun
// (its input is written, its output free) and one that says every rank is
// done with this rank's buffers.
template <typename T, typename Op, int MaxS>
__global__ void __launch_bounds__(kThreads, MaxS <= 2 ? 2 : 1)
    windowAllReduceKernel(IpcView v, WindowAllReduce c, size_t segElems, size_t sliceElems,
                          int avgDiv) {
  __shared__ BlockEpochs ep;
  loadEpochs(v, ep);
  const int me = v.rank, n = v.nranks;
  const unsigned peers = ((1u << n) - 1u) & ~(1u << me);
  barrier(v, peers, ep);
  const size_t segLo = me * segElems;
  const size_t segLen = segLo < c.count ? min(segElems, c.count - segLo) : 0;
  const size_t lo = blockIdx.x * sliceElems;
  if (lo < segLen) {
    const size_t len = min(sliceElems, segLen - lo), at = segLo + lo;
    const T* srcs[dev::kMaxSources];
    for (int r = 0; r < n; ++r) srcs[r] = static_cast<const T*>(c.input[r]) + at;
    T* mine = static_cast<T*>(c.output[me]) + at;
    // Peers' inputs are read past L1: another GPU wrote them.
    dev::reduceElems<T, Op, MaxS>(mine, srcs, n, len, avgDiv, threadIdx.x, blockDim.x, peers);
    __syncthreads();
    for (int p = 0; p < n; ++p)
      if (p != me)
        copyBytes(reinterpret_cast<char*>(static_cast<T*>(c.output[p]) + at),
                  reinterpret_cast<const char*>(mine), len * sizeof(T), threadIdx.x, blockDim.x,
                  false);
  }
  barrier(v, peers, ep);
  saveEpochs(v, ep);
  countDone(v);
}

__global__ void barrierKernel(IpcView v) {
  __shared__ BlockEpochs ep;
  loadEpochs(v, ep);
  barrier(v, ((1u << v.nranks) - 1u) & ~(1u << v.rank), ep);
  saveEpochs(v, ep);
  countDone(v);
}

// An operation with nothing to move still counts on the board, in order.
__global__ void countOnlyKernel(IpcView v) { countDone(v); }
cudaError_t nothingToLaunch(const IpcView& v, cudaStream_t stream) {
  if (!v.countDone || !v.board) return cudaSuccess;
  countOnlyKernel<<<1, 32, 0, stream>>>(v);
  return cudaGetLastError();
}

unsigned gridFor(size_t units, const IpcView& v) {
  size_t g = units < static_cast<size_t>(v.maxBlocks) ? units : static_cast<size_t>(v.maxBlocks);
  return static_cast<unsigned>(g ? g : 1);
}

}  // namespace

cudaError_t launchExchange(const IpcView& v, const Exchange& x, cudaStream_t stream) {
  size_t units = 0, local = x.src[v.rank] != x.dst[v.rank] ? x.sendBytes[v.rank] : 0;
  for (int p = 0; p < v.nranks; ++p) {
    if (p == v.rank) continue;
    const size_t most = x.sendBytes[p] > x.recvBytes[p] ? x.sendBytes[p] : x.recvBytes[p];
    const size_t u = unitBytes(most, v.maxBlocks, v.chunkBytes);
    const size_t k = (most + u - 1) / u;
    if (k > units) units = k;
  }
  if (x.localWith >= 0) local = 0;  // it rides with peer localWith's units
  if (units == 0 && local == 0) return nothingToLaunch(v, stream);
  Exchange xx = x;
  if (!local) xx.sendBytes[v.rank] = 0;
  const size_t localBlocks = (local + (1u << 20) - 1) >> 20;  // a block per MiB of local copy
  exchangeKernel<<<gridFor(units > localBlocks ? units : localBlocks, v), kThreads, 0, stream>>>(v, xx);
  return cudaGetLastError();
}

cudaError_t launchReduce(const IpcView& v, const ReduceCall& c, cudaStream_t stream) {
  if (v.nranks > dev::kMaxSources) return cudaErrorInvalidValue;
  if (c.count == 0) return nothingToLaunch(v, stream);
  cudaError_t rc = cudaErrorInvalidValue;
  dev::dispatchType(c.type, [&](auto t) {
    using T = decltype(t);
    constexpr size_t V = dev::kVecElems<T>;
    size_t segElems = c.count;
    if (c.mode == ReduceMode::TwoShot) segElems = ((c.count + v.nranks - 1) / v.nranks + V - 1) / V * V;
    const size_t unitElems = unitBytes(segElems * sizeof(T), v.maxBlocks, v.chunkBytes) / sizeof(T);
    const size_t nunits = (segElems + unitElems - 1) / unitElems;
    const int avgDiv = c.op == gdrAvg ? v.nranks : 0;
    dev::dispatchOp(c.op, [&](auto o) {
      using Op = decltype(o);
      if (v.nranks <= 2)
        reduceKernel<T, Op, 2><<<gridFor(nunits, v), kThreads, 0, stream>>>(v, c, unitElems, segElems, nunits, avgDiv);
      else
        reduceKernel<T, Op, dev::kMaxSources>
            <<<gridFor(nunits, v), kThreads, 0, stream>>>(v, c, unitElems, segElems, nunits, avgDiv);
      rc = cudaGetLastError();
    });
  });
  return rc;
}

cudaError_t launchWindowAllReduce(const IpcView& v, const WindowAllReduce& c, cudaStream_t stream) {
  if (v.nranks > dev::kMaxSources) return cudaErrorInvalidValue;
  if (c.count == 0) return nothingToLaunch(v, stream);
  cudaError_t rc = cudaErrorInvalidValue;
  dev::dispatchType(c.type, [&](auto t) {
    using T = decltype(t);
    constexpr size_t V = dev::kVecElems<T>;
    const size_t segElems = ((c.count + v.nranks - 1) / v.nranks + V - 1) / V * V;
    // No staging chunk bounds a slice: the grid spreads the segment.
    const size_t sliceElems = unitBytes(segElems * sizeof(T), v.maxBlocks, ~size_t{0}) / sizeof(T);
    const unsigned grid = gridFor((segElems + sliceElems - 1) / sliceElems, v);
    const int avgDiv = c.op == gdrAvg ? v.nranks : 0;
    dev::dispatchOp(c.op, [&](auto o) {
      using Op = decltype(o);
      if (v.nranks <= 2)
        windowAllReduceKernel<T, Op, 2>
            <<<grid, kThreads, 0, stream>>>(v, c, segElems, sliceElems, avgDiv);
      else
        windowAllReduceKernel<T, Op, dev::kMaxSources>
            <<<grid, kThreads, 0, stream>>>(v, c, segElems, sliceElems, avgDiv);
      rc = cudaGetLastError();
    });
  });
  return rc;
}

cudaError_t launchBarrier(const IpcView& v, cudaStream_t stream) {
  if (v.nranks < 2) return nothingToLaunch(v, stream);
  barrierKernel<<<1, 32, 0, stream>>>(v);
  return cudaGetLastError();
}

}  // namespace gdr::paths::ipc

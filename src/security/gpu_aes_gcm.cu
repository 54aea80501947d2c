// The kernels behind gpu_aes_gcm.h. One kernel template serves the three
// passes (Seal: encrypt and hash; Hash: hash the ciphertext and check the tag;
// Decrypt: decrypt once the check said authentic); the arithmetic is in
// gpu_aes_gcm_core.h, shared with the host tests.
#include <algorithm>
#include <cstring>
#include <memory>

#include "core/cuda.h"
#include "core/error.h"
#include "security/gpu_aes_gcm.h"

namespace gdr::security {

using gcm::kThreads;
using gcm::LaunchParams;
using gcm::Mode;
using gcm::U128;

struct GpuGcmScratch::Device {
  uint4 partial[gcm::kMaxGrid];  // one hash per block of the grid
  uint32_t arrived;               // blocks done; the last one resets it
  uint32_t status;                // kGcm* of the last open
};

namespace {

__device__ __forceinline__ uint32_t bswap32(uint32_t x) { return __byte_perm(x, 0, 0x0123); }
__device__ __forceinline__ U128 fromVec(uint4 v) { return U128{{v.x, v.y, v.z, v.w}}; }
__device__ __forceinline__ uint4 toVec(U128 x) { return make_uint4(x.w[0], x.w[1], x.w[2], x.w[3]); }

// Te0 with one copy per bank: lane l reads entry x at word 32x + l, so a
// warp's 32 lookups never collide.
struct BankedTe {
  const uint32_t* t;
  uint32_t lane;
  __device__ uint32_t operator()(uint32_t x) const { return t[(x << 5) | lane]; }
};

struct SharedTab {
  const uint4* t;
  __device__ U128 operator()(uint32_t b) const { return fromVec(t[b]); }
};

// Data blocks in device memory; kAligned: in and out are 16-byte aligned.
template <bool kAligned>
struct DeviceIo {
  const uint8_t* in;
  uint8_t* out;
  __device__ U128 load(uint64_t i, unsigned n) const {
    if (kAligned && n == 16) {
      uint4 v = __ldcs(reinterpret_cast<const uint4*>(in) + i);
      return U128{{bswap32(v.x), bswap32(v.y), bswap32(v.z), bswap32(v.w)}};
    }
    uint8_t b[16] = {};
    for (unsigned k = 0; k < n; ++k) b[k] = in[16 * i + k];
    return gcm::loadBlock(b);
  }
  __device__ void store(uint64_t i, U128 x, unsigned n) const {
    if (kAligned && n == 16) {
      __stcs(reinterpret_cast<uint4*>(out) + i,
             make_uint4(bswap32(x.w[0]), bswap32(x.w[1]), bswap32(x.w[2]), bswap32(x.w[3])));
      return;
    }
    uint8_t b[16];
    gcm::storeBlock(b, x);
    for (unsigned k = 0; k < n; ++k) out[16 * i + k] = b[k];
  }
};

__device__ __forceinline__ U128 warpXor(U128 y) {
  for (int d = 16; d; d >>= 1)
    for (int i = 0; i < 4; ++i) y.w[i] ^= __shfl_xor_sync(0xffffffffu, y.w[i], d);
  return y;
}

// XOR of y over the block; the result is valid in thread 0.
__device__ U128 blockXor(U128 y, U128* warpSums) {
  y = warpXor(y);
  if ((threadIdx.x & 31) == 0) warpSums[threadIdx.x >> 5] = y;
  __syncthreads();
  U128 s = gcm::zero128();
  if (threadIdx.x == 0)
    for (int w = 0; w < kThreads / 32; ++w) s = gcm::xor128(s, warpSums[w]);
  return s;
}

struct KernelArgs {
  const uint8_t* in;
  uint8_t* out;
  const gcm::Tables* tables;
  GpuGcmScratch::Device* scratch;
  uint8_t* tagOut;        // Seal
  const uint8_t* tagIn;   // Hash
  uint32_t* userStatus;   // Hash, may be null
};

// Thread 0 of the last block to finish: the tag, written (Seal) or checked (Hash).
template <Mode kMode>
__device__ void finish(const LaunchParams& p, const KernelArgs& a, U128 hash) {
  uint8_t tag[16];
  gcm::storeBlock(tag, gcm::xor128(hash, p.ej0));
  if (kMode == Mode::Seal) {
    for (int i = 0; i < 16; ++i) a.tagOut[i] = tag[i];
  } else {
    uint32_t diff = 0;
    for (int i = 0; i < 16; ++i) diff |= tag[i] ^ a.tagIn[i];
    const uint32_t st = diff ? kGcmForged : kGcmAuthentic;
    a.scratch->status = st;
    if (a.userStatus) *a.userStatus = st;
  }
  a.scratch->arrived = 0;
}

template <Mode kMode, bool kAligned>
__global__ void __launch_bounds__(kThreads) gcmKernel(const LaunchParams p, const KernelArgs a) {
  constexpr bool kAes = kMode != Mode::Hash, kGhash = kMode != Mode::Decrypt;
  __shared__ uint32_t teSm[kAes ? 256 * 32 : 1];
  __shared__ uint4 stepTab[kGhash ? 256 : 1];  // bytes times H^P: the Horner step
  __shared__ uint4 gridTab[kGhash ? 256 : 1];  // bytes times H^(g*T): this block's weight
  __shared__ U128 warpSums[kThreads / 32];
  __shared__ bool isLast;
  const uint32_t t = threadIdx.x, lane = t & 31;
  if (kAes) {
    const uint32_t v = a.tables->te0[t];
    for (uint32_t k = 0; k < 32; ++k) teSm[(t << 5) | ((k + lane) & 31)] = v;
  }
  if (kGhash) {
    stepTab[t] = toVec(gcm::gfTable8Entry(a.tables->hGrid[gridDim.x], t));
    gridTab[t] = toVec(gcm::gfTable8Entry(a.tables->hGrid[blockIdx.x], t));
  }
  const bool authentic = kMode != Mode::Decrypt || a.scratch->status == kGcmAuthentic;
  __syncthreads();

  const uint64_t P = uint64_t(gridDim.x) * kThreads, u = uint64_t(blockIdx.x) * kThreads + t;
  U128 y = gcm::threadPart<kMode>(p, u, P, DeviceIo<kAligned>{a.in, a.out}, BankedTe{teSm, lane},
                                  SharedTab{stepTab}, authentic);
  if (!kGhash) return;

  if (u < p.positions) y = gcm::gfMul(y, a.tables->hThread[t]);
  U128 s = blockXor(y, warpSums);
  if (t == 0) {
    s = gcm::gfMulTable8(s, SharedTab{gridTab});
    __stcg(&a.scratch->partial[blockIdx.x], toVec(s));
    __threadfence();
    isLast = atomicAdd(&a.scratch->arrived, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!isLast) return;
  __threadfence();
  U128 acc = gcm::zero128();
  for (uint32_t g = t; g < gridDim.x; g += kThreads) acc = gcm::xor128(acc, fromVec(__ldcg(&a.scratch->partial[g])));
  __syncthreads();  // warpSums is reused
  s = blockXor(acc, warpSums);
  if (t == 0) finish<kMode>(p, a, s);
}

template <Mode kMode>
cudaError_t launch(const GpuGcmKey& key, const LaunchParams& p, const KernelArgs& a, cudaStream_t stream) {
  const int grid = gcm::launchGrid(p.positions, key.gridCap(kMode));
  const bool aligned = (reinterpret_cast<uintptr_t>(a.in) | reinterpret_cast<uintptr_t>(a.out)) % 16 == 0;
  if (aligned)
    gcmKernel<kMode, true><<<grid, kThreads, 0, stream>>>(p, a);
  else
    gcmKernel<kMode, false><<<grid, kThreads, 0, stream>>>(p, a);
  return cudaGetLastError();
}

template <Mode kMode>
int occupancyCap(int sms) {
  int perSm = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, gcmKernel<kMode, true>, kThreads, 0) != cudaSuccess)
    throw InternalError("AES-GCM: cudaOccupancyMaxActiveBlocksPerMultiprocessor failed");
  return std::clamp(perSm * sms, 1, gcm::kMaxGrid);
}

LaunchParams prepare(const GpuGcmKey& key, const uint8_t* iv, const void* aad, size_t aadLen, const void* in,
                     const void* out, size_t len, const void* tag, const char* what) {
  GDR_CHECK_ARG(len == 0 || (in && out), "AES-GCM %s: null buffer for %zu bytes", what, len);
  GDR_CHECK_ARG(iv && tag, "AES-GCM %s: null nonce or tag", what);
  LaunchParams p;
  gcm::makeLaunchParams(key.host(), iv, aad, aadLen, len, p);
  return p;
}

}  // namespace

GpuGcmKey::GpuGcmKey(const uint8_t key[kKeyBytes]) {
  checkCuda(cudaGetDevice(&device_), "AES-GCM: cudaGetDevice");
  int sms = 0;
  checkCuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device_),
            "AES-GCM: SM count");
  caps_[static_cast<int>(Mode::Seal)] = occupancyCap<Mode::Seal>(sms);
  caps_[static_cast<int>(Mode::Hash)] = occupancyCap<Mode::Hash>(sms);
  caps_[static_cast<int>(Mode::Decrypt)] = occupancyCap<Mode::Decrypt>(sms);
  gcm::expandKey(key, host_);
  auto tables = std::make_unique<gcm::Tables>();
  gcm::buildTables(host_.h, *tables);
  checkCuda(cudaMalloc(&tables_, sizeof(gcm::Tables)), "AES-GCM: cudaMalloc of the key tables");
  // A cudaMemcpy from pageable memory may return before the data lands, and
  // the kernels run on the caller's streams, which need not wait for the
  // default stream (cudaStreamNonBlocking): wait until the tables are there.
  cudaError_t e = cudaMemcpyAsync(tables_, tables.get(), sizeof(gcm::Tables), cudaMemcpyHostToDevice,
                                  cudaStreamPerThread);
  if (e == cudaSuccess) e = cudaStreamSynchronize(cudaStreamPerThread);
  wipe(tables.get(), sizeof(gcm::Tables));
  if (e != cudaSuccess) {
    cudaFree(tables_);
    wipe(&host_, sizeof(host_));
    checkCuda(e, "AES-GCM: upload of the key tables");
  }
}

GpuGcmKey::~GpuGcmKey() {
  wipe(&host_, sizeof(host_));
  // The tables are powers of H, which authenticates: clear them before freeing,
  // once no kernel on any stream can still read them.
  cudaDeviceSynchronize();
  cudaMemset(tables_, 0, sizeof(gcm::Tables));
  cudaFree(tables_);
}

GpuGcmScratch::GpuGcmScratch() {
  checkCuda(cudaMalloc(&dev_, sizeof(Device)), "AES-GCM: cudaMalloc of the scratch");
  // Zeroed before the first kernel reads it, whatever stream that runs on
  // (cudaMemset on device memory returns before it is done).
  cudaError_t e = cudaMemsetAsync(dev_, 0, sizeof(Device), cudaStreamPerThread);
  if (e == cudaSuccess) e = cudaStreamSynchronize(cudaStreamPerThread);
  if (e != cudaSuccess) {
    cudaFree(dev_);
    checkCuda(e, "AES-GCM: cudaMemset of the scratch");
  }
}

GpuGcmScratch::~GpuGcmScratch() { cudaFree(dev_); }

const uint32_t* GpuGcmScratch::status() const { return &dev_->status; }

cudaError_t gpuAesGcmSeal(const GpuGcmKey& key, const uint8_t iv[gcm::kIvBytes], const void* aad,
                          size_t aadLen, const void* in, void* out, size_t len, uint8_t* tag,
                          GpuGcmScratch& scratch, cudaStream_t stream) {
  LaunchParams p = prepare(key, iv, aad, aadLen, in, out, len, tag, "seal");
  KernelArgs a{static_cast<const uint8_t*>(in), static_cast<uint8_t*>(out), key.tables(), scratch.device(),
               tag, nullptr, nullptr};
  cudaError_t e = launch<Mode::Seal>(key, p, a, stream);
  wipe(&p, sizeof(p));
  return e;
}

cudaError_t gpuAesGcmOpen(const GpuGcmKey& key, const uint8_t iv[gcm::kIvBytes], const void* aad,
                          size_t aadLen, const void* in, void* out, size_t len, const uint8_t* tag,
                          GpuGcmScratch& scratch, uint32_t* status, cudaStream_t stream) {
  LaunchParams p = prepare(key, iv, aad, aadLen, in, out, len, tag, "open");
  KernelArgs a{static_cast<const uint8_t*>(in), static_cast<uint8_t*>(out), key.tables(), scratch.device(),
               nullptr, tag, status};
  cudaError_t e = launch<Mode::Hash>(key, p, a, stream);
  if (e == cudaSuccess && len) e = launch<Mode::Decrypt>(key, p, a, stream);
  wipe(&p, sizeof(p));
  return e;
}

}  // namespace gdr::security

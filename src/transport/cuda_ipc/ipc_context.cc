#include "transport/cuda_ipc/ipc_context.h"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/log.h"
#include "core/params.h"
#include "transport/cuda_ipc/peer_access.h"

namespace gdr::transport::cuda_ipc {

namespace {

// Ranks of one process (one communicator per GPU, driven by one process)
// cannot open each other's IPC handles (cudaIpcOpenMemHandle refuses its own
// process): they use the raw pointer with peer access enabled instead. The
// host is the same (ranksFit), so an equal pid is the same process.
struct HandleRecord {
  int32_t ok;
  int32_t device;
  int32_t pid;
  int32_t pad;
  uint64_t ptr;
  cudaIpcMemHandle_t handle;
};

bool ranksFit(const IpcPeers& peers, std::string* why) {
  if (!param::getBool("GDR_CUDA_IPC")) return *why = "GDR_CUDA_IPC=0", false;
  if (peers.socketForced) return *why = "GDR_TRANSPORT=socket forces the staged path", false;
  if (peers.size > kMaxLocalRanks)
    return *why = strprintf("%d ranks (the cuda_ipc kernels join at most %d)", peers.size,
                            kMaxLocalRanks),
           false;
  if (peers.firstRemote >= 0)
    return *why = strprintf("rank %d is on another host", peers.firstRemote), false;
  return true;
}

}  // namespace

std::unique_ptr<IpcContext> IpcContext::create(const IpcPeers& peers, std::string* whyNot) {
  std::unique_ptr<IpcContext> ctx(new IpcContext());
  IpcView& v = ctx->view_;
  v.rank = peers.rank;
  v.nranks = peers.size;
  v.chunkBytes = static_cast<size_t>(param::getInt("GDR_CUDA_IPC_CHUNK_BYTES"));
  v.maxBlocks = static_cast<int>(param::getInt("GDR_CUDA_IPC_BLOCKS"));
  if (v.chunkBytes < 4096 || v.chunkBytes % 16 != 0)
    throw InvalidArgument("GDR_CUDA_IPC_CHUNK_BYTES must be a multiple of 16, at least 4096");
  if (v.maxBlocks < 1 || v.maxBlocks > kMaxBlocks)
    throw InvalidArgument(strprintf("GDR_CUDA_IPC_BLOCKS must be in [1, %d]", kMaxBlocks));
  v.timeoutNs = static_cast<unsigned long long>(peers.timeoutMs) * 1000000ull;

  std::string why;
  HandleRecord mine{};
  if (ranksFit(peers, &why)) {
    auto step = [&](cudaError_t rc, const char* what) {
      if (rc == cudaSuccess) return true;
      why = strprintf("rank %d: %s: %s", peers.rank, what, cudaGetErrorString(rc));
      cudaGetLastError();
      return false;
    };
    const size_t bytes = allocationBytes(v.nranks, v.chunkBytes);
    mine.ok = step(cudaGetDevice(&ctx->device_), "cudaGetDevice") &&
              step(cudaMalloc(&ctx->own_, bytes), "cudaMalloc of the IPC staging") &&
              step(cudaMemset(ctx->own_, 0, bytes), "cudaMemset") &&
              step(cudaMalloc(reinterpret_cast<void**>(&v.epochs), kMaxBlocks * kMaxLocalRanks * sizeof(uint64_t)),
                   "cudaMalloc") &&
              step(cudaMemset(v.epochs, 0, kMaxBlocks * kMaxLocalRanks * sizeof(uint64_t)), "cudaMemset") &&
              step(cudaHostAlloc(reinterpret_cast<void**>(&ctx->hostError_), sizeof(unsigned), cudaHostAllocMapped),
                   "cudaHostAlloc") &&
              step(cudaHostGetDevicePointer(reinterpret_cast<void**>(&v.errorWord), ctx->hostError_, 0),
                   "cudaHostGetDevicePointer") &&
              step(cudaHostAlloc(reinterpret_cast<void**>(&ctx->hostBoard_), sizeof(DeviceWords), cudaHostAllocMapped),
                   "cudaHostAlloc (status board words)") &&
              step(cudaHostGetDevicePointer(reinterpret_cast<void**>(&v.board), ctx->hostBoard_, 0),
                   "cudaHostGetDevicePointer") &&
              step(cudaMalloc(reinterpret_cast<void**>(&v.blocksDone), sizeof(unsigned)), "cudaMalloc") &&
              step(cudaMemset(v.blocksDone, 0, sizeof(unsigned)), "cudaMemset") &&
              step(cudaMalloc(reinterpret_cast<void**>(&v.llEpochs), kLLMaxBlocks * sizeof(uint32_t)),
                   "cudaMalloc") &&
              step(cudaMemset(v.llEpochs, 0, kLLMaxBlocks * sizeof(uint32_t)), "cudaMemset") &&
              step(cudaIpcGetMemHandle(&mine.handle, ctx->own_), "cudaIpcGetMemHandle") &&
              step(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    if (ctx->hostError_) *ctx->hostError_ = 0;
    if (ctx->hostBoard_) *ctx->hostBoard_ = DeviceWords{};
    mine.device = ctx->device_;
    mine.pid = static_cast<int32_t>(getpid());
    mine.ptr = reinterpret_cast<uint64_t>(ctx->own_);
  }
  std::vector<HandleRecord> all = allgatherOf(peers, mine);
  int32_t opened = 1;
  for (int r = 0; r < v.nranks; ++r) {
    if (!all[r].ok) {
      opened = 0;
      if (why.empty()) why = strprintf("rank %d could not set up CUDA IPC", r);
    }
  }
  for (int r = 0; opened && r < v.nranks; ++r) {
    if (r == v.rank) {
      v.base[r] = static_cast<char*>(ctx->own_);
      continue;
    }
    if (all[r].pid == mine.pid) {
      const cudaError_t rc = enablePeerAccess(ctx->device_, all[r].device);
      if (rc != cudaSuccess) {
        why = strprintf("rank %d: peer access from device %d to device %d (rank %d, same process) failed: %s", v.rank,
                        ctx->device_, all[r].device, r, cudaGetErrorString(rc));
        cudaGetLastError();
        opened = 0;
        break;
      }
      v.base[r] = reinterpret_cast<char*>(all[r].ptr);  // not in mapped_: nothing to close
      continue;
    }
    cudaError_t rc = cudaIpcOpenMemHandle(&ctx->mapped_[r], all[r].handle, cudaIpcMemLazyEnablePeerAccess);
    if (rc != cudaSuccess) {
      why = strprintf("rank %d: cudaIpcOpenMemHandle of rank %d (device %d) failed: %s", v.rank, r, all[r].device,
                      cudaGetErrorString(rc));
      cudaGetLastError();
      opened = 0;
      break;
    }
    v.base[r] = static_cast<char*>(ctx->mapped_[r]);
  }
  std::vector<int32_t> agreed = allgatherOf(peers, opened);
  for (int r = 0; r < v.nranks; ++r)
    if (!agreed[r]) {
      if (why.empty()) why = strprintf("rank %d could not map its peers' IPC memory", r);
      *whyNot = why;
      return nullptr;
    }
  GDR_INFO(kInit, "cuda_ipc: %d ranks joined, device %d, %zu B staging chunks, up to %d blocks", v.nranks,
           ctx->device_, v.chunkBytes, v.maxBlocks);
  return ctx;
}

IpcContext::~IpcContext() {
  // Not collective (destroy is not): a peer may still map our allocation;
  // the driver keeps it alive until every mapping is closed. Freed on our
  // own device: one process may destroy the communicators of several GPUs.
  int cur = -1;
  const bool swap = device_ >= 0 && cudaGetDevice(&cur) == cudaSuccess && cur != device_ &&
                    cudaSetDevice(device_) == cudaSuccess;
  for (void* p : mapped_)
    if (p) cudaIpcCloseMemHandle(p);
  if (own_) cudaFree(own_);
  if (view_.epochs) cudaFree(view_.epochs);
  if (hostError_) cudaFreeHost(hostError_);
  if (hostBoard_) cudaFreeHost(hostBoard_);
  if (view_.blocksDone) cudaFree(view_.blocksDone);
  if (view_.llEpochs) cudaFree(view_.llEpochs);
  if (swap) cudaSetDevice(cur);
  cudaGetLastError();
}

}  // namespace gdr::transport::cuda_ipc

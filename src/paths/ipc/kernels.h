// Fused collective kernels over CUDA IPC (GPUs of one host, NVLink or PCIe
// peer access). One kernel does a whole collective on the caller's stream,
// over the peer-mapped memory of the cuda_ipc back end
// (transport/cuda_ipc/ipc_view.h describes it and the barrier).
//
// Shape (push model, the way NCCL's simple protocol and MSCCL++'s packet
// kernels move data): every rank owns one peer-mapped allocation holding
// flags and staging. A transfer is cut into *units* of `chunkBytes`; block b
// of the grid takes units b, b + grid, ... For each unit a block stores its
// data straight into the receiver's staging (NVLink stores), then runs a
// barrier with the peers the unit involves, then reads what peers stored
// into its own staging and reduces or copies it to the user's buffer.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "gdrcoll.h"
#include "transport/cuda_ipc/ipc_view.h"

namespace gdr::paths::ipc {

using transport::cuda_ipc::IpcView;
using transport::cuda_ipc::kFlagBytes;
using transport::cuda_ipc::kLLBytes;
using transport::cuda_ipc::kMaxBlocks;
using transport::cuda_ipc::kMaxLocalRanks;

// Pairwise exchange: for each peer p, send sendBytes[p] from src[p] into
// peer p's dst for this rank, and receive recvBytes[p] from p into dst[p].
// Peers agree pairwise (this rank's sendBytes[p] is p's recvBytes[me]). The
// entry for this rank is a local copy src[me] -> dst[me] (skipped if equal).
// Broadcast, all-gather, all-to-all(v) and grouped send/recv are all this.
// localWith >= 0 (a peer): the local copy is the data sent to that peer
// (src[me] == src[localWith], sendBytes[me] == sendBytes[localWith]; a
// broadcast root's own destination) and moves unit by unit with those
// sends, so the source is read from memory once.
struct Exchange {
  const char* src[kMaxLocalRanks] = {};
  char* dst[kMaxLocalRanks] = {};
  size_t sendBytes[kMaxLocalRanks] = {};
  size_t recvBytes[kMaxLocalRanks] = {};
  int localWith = -1;
};
cudaError_t launchExchange(const IpcView& v, const Exchange& x, cudaStream_t stream);

enum class ReduceMode : int {
  OneShot,        // all-reduce: push everything to everyone, each reduces all
  TwoShot,        // all-reduce: reduce-scatter then all-gather through staging
  ReduceScatter,  // count is the per-rank block
  Reduce,         // to `root`
};
struct ReduceCall {
  ReduceMode mode = ReduceMode::OneShot;
  const void* input = nullptr;
  void* output = nullptr;  // root's only for Reduce
  size_t count = 0;
  int root = 0;
  gdrDataType_t type = gdrFloat32;
  gdrRedOp_t op = gdrSum;
};
cudaError_t launchReduce(const IpcView& v, const ReduceCall& c, cudaStream_t stream);

// The LL all-reduce (ll_kernel.cu, packets described in ipc_view.h): every
// rank stores its input as flagged packets into every peer's LL area and
// reduces what arrives in rank order, without a barrier; for messages of at
// most kLLBytes (c.mode is ignored). `programmatic`: launched with
// programmatic dependent launch, so the launch overlaps the kernel before it
// on the stream (cudaLaunchKernelEx where the toolkit has it).
cudaError_t launchLLAllReduce(const IpcView& v, const ReduceCall& c, bool programmatic,
                              cudaStream_t stream);

// The all-reduce over windows (buffers every rank registered together,
// transport/cuda_ipc/ipc_window.h): every rank's input and output as this
// rank reaches it, so nothing goes through staging. Rank p reduces segment
// p straight from every rank's input and stores the result into every
// rank's output, between a barrier before (each rank's input is ready, its
// output free) and one after (no rank moves on while a peer still uses its
// buffers). In place is safe: segment p is read and written by rank p
// alone. The grid depends only on the count, type and view, so every rank
// launches the same one.
struct WindowAllReduce {
  const void* input[kMaxLocalRanks] = {};
  void* output[kMaxLocalRanks] = {};
  size_t count = 0;
  gdrDataType_t type = gdrFloat32;
  gdrRedOp_t op = gdrSum;
};
cudaError_t launchWindowAllReduce(const IpcView& v, const WindowAllReduce& c, cudaStream_t stream);

// A barrier among all ranks, on the stream.
cudaError_t launchBarrier(const IpcView& v, cudaStream_t stream);

}  // namespace gdr::paths::ipc

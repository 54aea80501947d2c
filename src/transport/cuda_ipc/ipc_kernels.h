// Fused collective kernels over CUDA IPC (GPUs of one host, NVLink or PCIe
// peer access). One kernel does a whole collective on the caller's stream.
//
// Shape (push model, the way NCCL's simple protocol and MSCCL++'s packet
// kernels move data): every rank owns one peer-mapped allocation holding
// flags and staging. A transfer is cut into *units* of `chunkBytes`; block b
// of the grid takes units b, b + grid, ... For each unit a block stores its
// data straight into the receiver's staging (NVLink stores), then runs a
// barrier with the peers the unit involves, then reads what peers stored
// into its own staging and reduces or copies it to the user's buffer.
//
// Barrier: per (block, peer) epoch counters kept in device memory, so a
// kernel needs no host-side sequence number and can be captured in a CUDA
// graph and replayed. Thread p of the block bumps the epoch it shares with
// peer p, stores it into peer p's flag word (release, system scope) and
// spins on its own flag word from p (acquire) until p has stored the same
// epoch. Data stored before the barrier of epoch e lives in staging region
// e % 2 and is consumed before the next barrier with that peer, so two
// regions suffice: a writer can only reach region e % 2 again after the
// reader has passed barrier e + 1.
//
// Layout of rank r's allocation: flags [kMaxBlocks][kMaxLocalRanks] (written
// by peers), then staging [2 regions][nranks source slots][kMaxBlocks]
// [chunkBytes]. Blocks never share a staging chunk, whatever the grid size of
// a kernel, so kernels of different grid sizes can follow each other.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "gdrcoll.h"

namespace gdr::ipc {

constexpr int kMaxLocalRanks = 8;
constexpr int kMaxBlocks = 256;
constexpr size_t kFlagBytes = 65536;  // >= kMaxBlocks * kMaxLocalRanks * 8, keeps staging aligned

// What a kernel needs to reach every rank's memory (by value: no host state).
struct IpcView {
  int rank = 0;
  int nranks = 1;
  int maxBlocks = kMaxBlocks;        // grid cap (GDR_CUDA_IPC_BLOCKS)
  size_t chunkBytes = 0;             // a multiple of 16
  char* base[kMaxLocalRanks] = {};   // each rank's allocation, mapped here
  uint64_t* epochs = nullptr;        // own, [kMaxBlocks][kMaxLocalRanks], device memory
  unsigned* errorWord = nullptr;     // host-mapped: non-zero after a device-side timeout
  unsigned long long timeoutNs = 0;  // per barrier wait
};

inline size_t allocationBytes(int nranks, size_t chunkBytes) {
  return kFlagBytes + 2 * static_cast<size_t>(nranks) * kMaxBlocks * chunkBytes;
}

// Pairwise exchange: for each peer p, send sendBytes[p] from src[p] into
// peer p's dst for this rank, and receive recvBytes[p] from p into dst[p].
// Peers agree pairwise (this rank's sendBytes[p] is p's recvBytes[me]). The
// entry for this rank is a local copy src[me] -> dst[me] (skipped if equal).
// Broadcast, all-gather, all-to-all(v) and grouped send/recv are all this.
struct Exchange {
  const char* src[kMaxLocalRanks] = {};
  char* dst[kMaxLocalRanks] = {};
  size_t sendBytes[kMaxLocalRanks] = {};
  size_t recvBytes[kMaxLocalRanks] = {};
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

// A barrier among all ranks, on the stream.
cudaError_t launchBarrier(const IpcView& v, cudaStream_t stream);

}  // namespace gdr::ipc

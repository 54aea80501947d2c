// The peer memory of the cuda_ipc back end, as the fused kernels of
// paths/ipc/kernels.h see it: every rank owns one peer-mapped allocation
// holding flags and staging.
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
// [chunkBytes], then the LL area [2 slots][nranks source slots][kLLBytes / 8]
// 16-byte packets. Blocks never share a staging chunk, whatever the grid size
// of a kernel, so kernels of different grid sizes can follow each other.
//
// LL packets (the small all-reduce, paths/ipc/ll_kernel.cu): a packet is
// {data, flag, data, flag} of 32-bit words, stored by the writer in one
// 16-byte store, so each 8-byte half arrives whole and a reader that sees
// the flag it expects in both halves holds the data: no barrier, no fence.
// The flag is the call's epoch (per block, never 0); the reader zeroes each
// packet after reading it, so a packet holds either 0 or the current call's
// flag. Slot e % 2: a writer reaches a slot again two calls later, after
// every reader has finished the call before (it needs their packets of it).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/device_words.h"

namespace gdr::transport::cuda_ipc {

constexpr int kMaxLocalRanks = 8;
constexpr int kMaxBlocks = 256;
constexpr size_t kFlagBytes = 65536;  // >= kMaxBlocks * kMaxLocalRanks * 8, keeps staging aligned
// The LL all-reduce: data bytes per rank it carries (packets are twice
// that), threads per block (a packet each) and so its largest grid.
constexpr size_t kLLBytes = 65536;
constexpr int kLLThreads = 256;
constexpr int kLLMaxBlocks = static_cast<int>(kLLBytes / 8 / kLLThreads);

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
  // The status board's words (host-mapped, core/device_words.h): every
  // kernel counts its waits for a peer that last; one whose countDone is
  // set also counts its completion (its last block to finish, found with
  // blocksDone, device memory, back to 0 after each such kernel).
  DeviceWords* board = nullptr;
  unsigned* blocksDone = nullptr;
  int countDone = 0;
  uint32_t* llEpochs = nullptr;  // own, [kLLMaxBlocks], device memory: each LL block's last flag
};

// Where the LL area starts in an allocation; the LL kernel computes it too.
#if defined(__CUDACC__)
__host__ __device__
#endif
inline size_t llAreaOffset(int nranks, size_t chunkBytes) {
  return kFlagBytes + 2 * static_cast<size_t>(nranks) * kMaxBlocks * chunkBytes;
}
inline size_t allocationBytes(int nranks, size_t chunkBytes) {
  return llAreaOffset(nranks, chunkBytes) + 2 * static_cast<size_t>(nranks) * 2 * kLLBytes;
}

}  // namespace gdr::transport::cuda_ipc

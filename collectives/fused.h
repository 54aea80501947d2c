// What the fused device kernels (one kernel does the whole collective over
// peer memory, src/transport/cuda_ipc) move, per GPU, so that the
// simulator and the selector can cost them like a schedule. Bytes are for
// one call of `bytes` (gdr-bench's size: the whole buffer for all-reduce,
// broadcast and reduce, the gathered or scattered total otherwise) over
// `nranks` GPUs of one host.
#pragma once

#include <cstddef>
#include <string>

#include "collectives/schedule.h"

namespace gdr::coll {

enum class FusedKind : unsigned char { OneShot, TwoShot, ReduceScatter, Reduce, Exchange, LL };

struct FusedTraffic {
  FusedKind kind = FusedKind::Exchange;
  double peerOut = 0;  // bytes this GPU stores to peers (its busiest direction)
  double peerIn = 0;   // bytes peers store into this GPU
  double reduced = 0;  // elements' bytes this GPU reduces
  int barriers = 1;    // kernel-wide barriers among the GPUs
};

// The all-reduce kernel's automatic choice: LL (flagged packets, no
// barrier) up to `llMax` bytes (GDR_CUDA_IPC_LL_BYTES, capped by the LL
// area; 0: never), one-shot (every GPU pulls every input, one barrier) up to
// 16 MiB with two ranks and 256 KiB with more, two-shot (reduce-scatter then
// all-gather) above; `oneShotMax` nonzero overrides that crossover
// (GDR_CUDA_IPC_ONESHOT_BYTES).
FusedKind fusedAllReduceKind(int nranks, size_t bytes, size_t oneShotMax = 0, size_t llMax = 0);
// The cuda_ipc path's all-reduce kernel: GDR_ALGO's allreduce=oneshot,
// twoshot or ll when `algoSpec` forces one, else fusedAllReduceKind
// (collectives/select.cc). A forced ll larger than `llCapacity` (the bytes
// the LL area holds) takes the automatic choice without LL.
FusedKind selectFusedAllReduce(int nranks, size_t bytes, size_t oneShotMax,
                               const std::string& algoSpec, size_t llMax = 0,
                               size_t llCapacity = 0);

// The traffic of collective `k` on the fused path (the busiest rank: the
// root for broadcast and reduce).
FusedTraffic fusedTraffic(CollKind k, int nranks, size_t bytes, size_t oneShotMax = 0);

}  // namespace gdr::coll

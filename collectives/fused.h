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

enum class FusedKind : unsigned char { OneShot, TwoShot, ReduceScatter, Reduce, Exchange };

struct FusedTraffic {
  FusedKind kind = FusedKind::Exchange;
  double peerOut = 0;  // bytes this GPU stores to peers (its busiest direction)
  double peerIn = 0;   // bytes peers store into this GPU
  double reduced = 0;  // elements' bytes this GPU reduces
  int barriers = 1;    // kernel-wide barriers among the GPUs
};

// The all-reduce kernel's automatic choice: one-shot (every GPU pulls every
// input, one barrier) up to 16 MiB with two ranks and 256 KiB with more,
// two-shot (reduce-scatter then all-gather) above; `oneShotMax` nonzero
// overrides the crossover (GDR_CUDA_IPC_ONESHOT_BYTES).
FusedKind fusedAllReduceKind(int nranks, size_t bytes, size_t oneShotMax = 0);
// The cuda_ipc path's all-reduce kernel: GDR_ALGO's allreduce=oneshot or
// allreduce=twoshot when `algoSpec` forces one, else fusedAllReduceKind
// (collectives/select.cc).
FusedKind selectFusedAllReduce(int nranks, size_t bytes, size_t oneShotMax,
                               const std::string& algoSpec);

// The traffic of collective `k` on the fused path (the busiest rank: the
// root for broadcast and reduce).
FusedTraffic fusedTraffic(CollKind k, int nranks, size_t bytes, size_t oneShotMax = 0);

}  // namespace gdr::coll

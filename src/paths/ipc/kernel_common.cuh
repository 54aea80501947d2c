// Device helpers every fused cuda_ipc kernel shares: the global timer its
// bounded waits read, and the status board's completion count.
#pragma once

#include "transport/cuda_ipc/ipc_view.h"

namespace gdr::paths::ipc {

__device__ __forceinline__ unsigned long long globalTimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// At the end of a kernel the status board counts: the last block to
// finish adds one to the board's completions (when the view asks for it).
__device__ __forceinline__ void countDone(const transport::cuda_ipc::IpcView& v) {
  if (!v.countDone || !v.board) return;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(v.blocksDone, 1u) == gridDim.x - 1) {
      *v.blocksDone = 0;  // the next counted kernel follows in stream order
      __threadfence_system();
      atomicAdd_system(&v.board->done, 1u);
    }
  }
}

}  // namespace gdr::paths::ipc

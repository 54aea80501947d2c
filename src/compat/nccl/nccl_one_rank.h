// One rank, out of place: a collective is one copy on the caller's stream.
// The NCCL face issues it directly instead of going through the gdr* call
// (argument checks twice, pointer queries, device guards), because with one
// rank the host time per call is the whole cost: cudaMemcpyAsync alone takes
// 4-5 us of host time on the H200 machine, and NCCL adds 0.2-0.9 us to it
// (bench/results/compat.md). The copy is device/device_copy's: a kernel
// where both buffers are the communicator's device memory (cheaper to issue
// than the copy engine, and what NCCL does for its own one-rank all-to-all),
// else cudaMemcpyAsync.
#pragma once

#include <cstddef>

#include "compat/nccl/nccl_compat.h"

namespace gdr::nccl {

// Issues dst[0, count elements) = src[...] on `stream` when `comm` is a
// ready, healthy one-rank communicator outside a group and the arguments are
// plainly valid (a nonzero size with a NULL buffer, an unknown type, an
// overflowing size, a failed communicator: false, and the full path reports
// it). Returns false when the call must take the full path; else the result
// (ncclSuccess, or the copy's CUDA error) is in *result.
bool oneRankCopy(const char* fn, ncclComm_t comm, const void* src, void* dst, size_t count,
                 ncclDataType_t type, cudaStream_t stream, ncclResult_t* result);

}  // namespace gdr::nccl

// Element-wise reductions on device memory, for every type and op, enqueued
// on a stream: dst[i] = op(srcs[0][i], ..., srcs[n-1][i]). fp16/bf16 combine
// in fp32 and round once; avg sums and divides by `avgDivisor` once (pass the
// number of ranks; 0 leaves the sum). dst may alias a source.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "gdrcoll.h"

namespace gdr::dev {

constexpr int kMaxReduceSources = 8;

// Loads every reduction kernel now (cudaFuncGetAttributes), so none is
// loaded at its first launch: under lazy module loading (CUDA's default) a
// kernel's first launch can wait for the context to synchronize, which
// never comes while a stream of the context waits for a word that the
// host writes only after more CUDA work (the GPUDirect path's flags order).
cudaError_t preloadReduceKernels();

cudaError_t launchReduce(void* dst, const void* const* srcs, int nsrc, size_t count, gdrDataType_t type,
                         gdrRedOp_t op, int avgDivisor, cudaStream_t stream);

}  // namespace gdr::dev

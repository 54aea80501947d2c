// A one-rank collective's copy on the caller's stream, done by the SMs when
// both buffers are 16-byte aligned device memory of `device` and at most
// 4 MiB: on the H200 machine a copy kernel costs 0.3-0.9 us less host time
// per call than cudaMemcpyAsync there (bench/results/compat.md,
// scripts/gpu/copy-cost.sh), and with one rank the host time is the whole
// cost of the call. Anything else (larger, unaligned, host, pinned or
// another device's memory, `device` not current) is one cudaMemcpyAsync,
// which reads any memory the driver knows and is the faster copy once the
// GPU time dominates.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace gdr::dev {

cudaError_t copyOnStream(void* dst, const void* src, size_t bytes, int device, cudaStream_t stream);

}  // namespace gdr::dev

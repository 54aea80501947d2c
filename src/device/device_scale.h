// dst[i] = src[i] * scalar on device memory, enqueued on a stream: the
// pre-multiply of NCCL's PreMulSum ops. The scalar is read by the kernel from
// `scalarDev` when it is non-null (stream-ordered, like ncclScalarDevice),
// else taken from `scalarHost` (the bytes of one element of `type`). Narrow
// floats multiply in fp32 and round once (fp8 saturating); integers wrap.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "gdrcoll.h"

namespace gdr::dev {

cudaError_t launchScale(void* dst, const void* src, size_t count, gdrDataType_t type, const void* scalarDev,
                        const void* scalarHost, cudaStream_t stream);

}  // namespace gdr::dev

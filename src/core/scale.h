// dst[i] = src[i] * scalar on host memory: the pre-multiply of a PreMulSum
// (core/call.h). `scalar` holds one element of `type`. Narrow floats
// (fp16/bf16/fp8) multiply in fp32 and round once, as the device kernel
// (device/device_scale.h) does; integers wrap.
#pragma once

#include <cstddef>

#include "gdrcoll.h"

namespace gdr {

void scaleHost(void* dst, const void* src, size_t count, gdrDataType_t type, const void* scalar);

}  // namespace gdr

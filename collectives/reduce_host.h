// Element-wise reductions on host memory, for every type and op. fp16, bf16
// and fp8 are combined in fp32 and rounded back (round to nearest even; fp8
// saturates to its largest finite value, like CUDA's __NV_SATFINITE).
#pragma once

#include <cstddef>
#include <cstdint>

#include "gdrcoll.h"
#include "transport/transport.h"

namespace gdr::coll {

size_t typeSize(gdrDataType_t t);
const char* typeName(gdrDataType_t t);
const char* opName(gdrRedOp_t op);

// dst[i] = op(a[i], b[i]); dst may alias a or b. Avg reduces as sum.
transport::ReduceFn hostReduceFn(gdrDataType_t t, gdrRedOp_t op);
// Divides each element by n (the final step of avg; integers truncate).
void hostDivide(void* buf, size_t count, gdrDataType_t t, int n);

// Conversions used by the reductions and by tests.
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bf16ToFloat(uint16_t b);
uint16_t floatToBf16(float f);
// OCP fp8: E4M3 (bias 7, no infinities, 0x7f is NaN) and E5M2 (bias 15).
// Out-of-range values and infinities become the largest finite value.
float fp8e4m3ToFloat(uint8_t b);
uint8_t floatToFp8e4m3(float f);
float fp8e5m2ToFloat(uint8_t b);
uint8_t floatToFp8e5m2(float f);

}  // namespace gdr::coll

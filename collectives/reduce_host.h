// Element-wise reductions on host memory, for every type and op. fp16 and
// bf16 are combined in fp32 and rounded back (round to nearest even).
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

}  // namespace gdr::coll

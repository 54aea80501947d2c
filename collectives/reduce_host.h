// Element-wise reductions on host memory, for every type and op. fp16, bf16
// and fp8 are combined in fp32 and rounded back (core/datatype.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/datatype.h"
#include "gdrcoll.h"
#include "transport/transport.h"

namespace gdr::coll {

// dst[i] = op(a[i], b[i]); dst may alias a or b. Avg reduces as sum.
transport::ReduceFn hostReduceFn(gdrDataType_t t, gdrRedOp_t op);
// Divides each element by n (the final step of avg; integers truncate).
void hostDivide(void* buf, size_t count, gdrDataType_t t, int n);

}  // namespace gdr::coll

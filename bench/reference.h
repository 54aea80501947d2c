// Reference inputs and expected results for checking collectives (see
// reference.cc for why the values are small integers).
#pragma once

#include <cstddef>
#include <cstdint>

#include "gdrcoll.h"

namespace gdrref {

// Input element i of `rank` for an operation with this type and op.
int64_t inputValue(gdrDataType_t t, gdrRedOp_t op, int rank, size_t i, unsigned seed);
void store(gdrDataType_t t, void* buf, size_t i, double v);
double load(gdrDataType_t t, const void* buf, size_t i);
bool isInteger(gdrDataType_t t);
// op over all ranks' inputValue(.., i, ..), in the type's arithmetic.
double expectedReduce(gdrDataType_t t, gdrRedOp_t op, size_t i, int nranks, unsigned seed);
// Exact for integers and fp8 (expectedReduce rounds to fp8 as the library
// does); a per-type relative tolerance for the other floats
// (fp16 1e-3, bf16 1e-2, fp32 1e-6, fp64 1e-12).
bool matches(gdrDataType_t t, double got, double want);

}  // namespace gdrref

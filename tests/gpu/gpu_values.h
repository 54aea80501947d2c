// Host side of the GPU tests' checks: random inputs that every type can sum
// and multiply over a few ranks without overflow, the host reference of a
// reduction (in rank order), and the element-by-element comparison, with a
// tolerance for the types the device rounds differently from the host.
#pragma once

#include <cstddef>
#include <random>
#include <vector>

#include "gdrcoll.h"

namespace gdrtest {

size_t typeBytes(gdrDataType_t t);
bool isFloat(gdrDataType_t t);
double asDouble(gdrDataType_t t, const char* p);
std::vector<char> randomValues(gdrDataType_t t, size_t count, std::mt19937_64& rng);
// op over src[0], src[1], ... (in that order) of `count` elements each.
std::vector<char> reduceRef(const std::vector<const char*>& src, size_t count, gdrDataType_t t, gdrRedOp_t op);
// The same with floats combined in double and rounded once to the type, as
// the device kernels do (in fp32): with many ranks the step-by-step host
// rounding of fp8 (2-3 mantissa bits) drifts past any fair tolerance.
std::vector<char> reduceRefRoundedOnce(const std::vector<const char*>& src, size_t count,
                                       gdrDataType_t t, gdrRedOp_t op);
// Elements of `got` that differ from `want` (n of them; floats within the
// tolerance of a reduction over `nranks`); the first few are printed with
// `what`, `rank` and the call's parameters.
long mismatches(const char* what, int rank, int nranks, gdrDataType_t t, gdrRedOp_t op, size_t count, bool inPlace,
                const char* got, const char* want, size_t n);

}  // namespace gdrtest

// Datatypes: sizes, names, and the fp16/bf16/fp8 conversions every layer
// that touches element bits uses (host reductions, tests, the NCCL face).
// fp16 and bf16 convert inline: the host reduction loops call them per
// element. Rounding is to nearest even; fp8 saturates to its largest finite
// value, like CUDA's __NV_SATFINITE.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "gdrcoll.h"

namespace gdr {

[[noreturn]] void throwUnknownType(gdrDataType_t t) __attribute__((cold, noinline));

// Throws InvalidArgument for a value outside gdrDataType_t.
inline size_t typeSize(gdrDataType_t t) {
  constexpr unsigned char kSizes[] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8, 1, 1};
  static_assert(sizeof(kSizes) == gdrNumTypes, "a size per gdrDataType_t");
  if (__builtin_expect(static_cast<unsigned>(t) >= gdrNumTypes, 0)) throwUnknownType(t);
  return kSizes[t];
}
const char* typeName(gdrDataType_t t);
const char* opName(gdrRedOp_t op);

// OCP fp8: E4M3 (bias 7, no infinities, 0x7f is NaN) and E5M2 (bias 15).
// Out-of-range values and infinities become the largest finite value.
float fp8e4m3ToFloat(uint8_t b);
uint8_t floatToFp8e4m3(float f);
float fp8e5m2ToFloat(uint8_t b);
uint8_t floatToFp8e5m2(float f);

inline float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        man <<= 1;
      } while (!(man & 0x400u));
      bits = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u)  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0));
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow to inf
  if (absx < 0x38800000u) {  // subnormal or zero in half
    if (absx < 0x33000000u) return static_cast<uint16_t>(sign);
    uint32_t man = (absx & 0x7fffffu) | 0x800000u;
    int shift = 126 - static_cast<int>(absx >> 23);  // 14..24
    uint32_t r = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  uint32_t r = absx - 0x38000000u;  // rebias exponent
  uint32_t out = r >> 13;
  uint32_t rem = r & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (out & 1))) ++out;
  return static_cast<uint16_t>(sign | out);
}

inline float bf16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t floatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet nan
  x += 0x7fffu + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

}  // namespace gdr

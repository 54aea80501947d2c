// OCP fp8 conversions on the host (E4M3 and E5M2), bit for bit what CUDA's
// __nv_cvt_float_to_fp8(x, __NV_SATFINITE, ...) and __nv_cvt_fp8_to_halfraw
// give on the device: round to nearest even, saturate to the largest finite
// value (infinities too), NaN stays NaN. Decoding goes through a table.
#include <array>
#include <cmath>
#include <cstring>

#include "core/datatype.h"

namespace gdr {

namespace {

// One fp8 format: exponent bias, mantissa bits, the code of the largest
// finite value, and whether the top exponent holds infinities/NaNs (E5M2) or
// ordinary values with only S.1111.111 a NaN (E4M3).
// maxValue, minNormal and subnormalScale (2^(bias-1+manBits)) follow from
// the rest and are spelled out so encoding stays branch-light.
struct Fp8Format {
  int bias;
  int manBits;
  uint8_t maxCode;
  bool ieeeSpecials;
  float maxValue;
  float minNormal;
  float subnormalScale;
};
constexpr Fp8Format kE4M3{7, 3, 0x7e, false, 448.0f, 0x1p-6f, 0x1p9f};
constexpr Fp8Format kE5M2{15, 2, 0x7b, true, 57344.0f, 0x1p-14f, 0x1p16f};

float decode(const Fp8Format& f, uint8_t b) {
  const int expField = (b & 0x7f) >> f.manBits;
  const int man = b & ((1 << f.manBits) - 1);
  const int expMax = (1 << (7 - f.manBits)) - 1;
  float v;
  if (f.ieeeSpecials && expField == expMax)
    v = man ? NAN : INFINITY;
  else if (!f.ieeeSpecials && (b & 0x7f) == 0x7f)
    v = NAN;
  else if (expField == 0)
    v = std::ldexp(static_cast<float>(man), 1 - f.bias - f.manBits);
  else
    v = std::ldexp(static_cast<float>(man + (1 << f.manBits)), expField - f.bias - f.manBits);
  return (b & 0x80) ? -v : v;
}

uint8_t encode(const Fp8Format& f, float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  const uint8_t sign = static_cast<uint8_t>((bits >> 24) & 0x80);
  const uint32_t absBits = bits & 0x7fffffffu;
  if (absBits > 0x7f800000u) return sign | 0x7f;  // NaN
  const float a = std::fabs(x);
  if (a >= f.maxValue) return sign | f.maxCode;  // saturate (infinity too)
  if (a < f.minNormal) {
    // Subnormal: a multiple of 2^(1-bias-manBits); scaling by a power of two
    // is exact, nearbyint rounds ties to even. 2^manBits is the smallest
    // normal's code, so the carry needs no special case.
    const float q = std::nearbyint(a * f.subnormalScale);
    return sign | static_cast<uint8_t>(q);
  }
  const int shift = 23 - f.manBits;
  const uint32_t man = absBits & 0x7fffffu;
  const int exp = static_cast<int>(absBits >> 23) - 127;
  uint32_t code = (static_cast<uint32_t>(exp + f.bias) << f.manBits) | (man >> shift);
  const uint32_t rem = man & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (code & 1))) ++code;  // a carry moves into the exponent
  if (code > f.maxCode) code = f.maxCode;
  return sign | static_cast<uint8_t>(code);
}

using Table = std::array<float, 256>;
Table makeTable(const Fp8Format& f) {
  Table t{};
  for (int b = 0; b < 256; ++b) t[b] = decode(f, static_cast<uint8_t>(b));
  return t;
}

}  // namespace

float fp8e4m3ToFloat(uint8_t b) {
  static const Table t = makeTable(kE4M3);
  return t[b];
}
uint8_t floatToFp8e4m3(float f) { return encode(kE4M3, f); }

float fp8e5m2ToFloat(uint8_t b) {
  static const Table t = makeTable(kE5M2);
  return t[b];
}
uint8_t floatToFp8e5m2(float f) { return encode(kE5M2, f); }

}  // namespace gdr

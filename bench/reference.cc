// Reference values shared by gdr-bench --check, the unit tests and the MPI
// tests: inputs are small integers (ones and twos for prod) so every
// reduction is exact in every type and checks can demand equality; avg is
// compared with a per-type tolerance. fp8 inputs are smaller still (|x| <= 2
// for E4M3, <= 1 for E5M2, so every partial sum of up to 8 ranks is exact in
// any order) and the expected avg is rounded to fp8 here, with an encoder of
// its own (from double, not the library's), so fp8 checks demand equality too.
#include "reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace gdrref {

int64_t inputValue(gdrDataType_t t, gdrRedOp_t op, int rank, size_t i, unsigned seed) {
  uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull ^ (static_cast<uint64_t>(rank) + 1) * 0xC2B2AE3D27D4EB4Full ^ seed;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 31;
  if (op == gdrProd) return 1 + static_cast<int64_t>(h % 2);
  if (t == gdrFloat8e4m3) return static_cast<int64_t>(h % 5) - 2;
  if (t == gdrFloat8e5m2) return static_cast<int64_t>(h % 3) - 1;
  bool isUnsigned = t == gdrUint8 || t == gdrUint32 || t == gdrUint64;
  return isUnsigned ? static_cast<int64_t>(h % 9) : static_cast<int64_t>(h % 9) - 4;
}

namespace {
uint16_t toHalf(double v) {  // round to nearest (ties away; the reference needs no more)
  uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  double a = std::fabs(v);
  if (std::isnan(v)) return 0x7e00;
  if (a >= 65520.0) return sign | 0x7c00;          // rounds to infinity
  if (a < std::ldexp(1.0, -14))                    // subnormal: multiples of 2^-24
    return sign | static_cast<uint16_t>(std::lround(std::ldexp(a, 24)));
  int e;
  double m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  long man = std::lround((m * 2 - 1) * 1024);
  int exp = e - 1 + 15;
  if (man == 1024) man = 0, ++exp;
  if (exp >= 31) return sign | 0x7c00;
  return sign | static_cast<uint16_t>(exp << 10) | static_cast<uint16_t>(man);
}

double fromHalf(uint16_t h) {
  int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  double v = exp == 0 ? std::ldexp(man, -24) : exp == 31 ? INFINITY : std::ldexp(1024 + man, exp - 25);
  return (h & 0x8000) ? -v : v;
}

uint16_t toBf16(double v) {
  float f = static_cast<float>(v);
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return static_cast<uint16_t>(x >> 16);
}

double fromBf16(uint16_t b) {
  uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// OCP fp8 with `manBits` mantissa bits and exponent bias `bias`: round to
// nearest even at the format's spacing, saturate to `maxValue` (CUDA's
// __NV_SATFINITE). E4M3: bias 7, max 448, NaN 0x7f; E5M2: bias 15, max 57344.
struct Fp8 {
  int manBits, bias;
  double maxValue;
  bool hasInfinity;  // E5M2: IEEE-style top exponent; E4M3: only S.1111.111 is NaN
};
constexpr Fp8 kE4M3{3, 7, 448.0, false};
constexpr Fp8 kE5M2{2, 15, 57344.0, true};

uint8_t toFp8(const Fp8& f, double v) {
  if (std::isnan(v)) return 0x7f;
  const uint8_t sign = std::signbit(v) ? 0x80 : 0;
  double a = std::min(std::fabs(v), f.maxValue);
  int e;
  std::frexp(a, &e);  // a in [2^(e-1), 2^e)
  const int minExp = 1 - f.bias;  // exponent of the smallest normal
  const int exp = a == 0 ? minExp : std::max(e - 1, minExp);
  const double spacing = std::ldexp(1.0, exp - f.manBits);
  a = std::nearbyint(a / spacing) * spacing;  // ties to even (default rounding mode)
  a = std::min(a, f.maxValue);
  // Encode: subnormals (and zero) are multiples of the smallest spacing.
  const double tiny = std::ldexp(1.0, minExp - f.manBits);
  if (a < std::ldexp(1.0, minExp)) return sign | static_cast<uint8_t>(a / tiny);
  std::frexp(a, &e);
  const int man = static_cast<int>(std::ldexp(a, f.manBits - (e - 1))) - (1 << f.manBits);
  return sign | static_cast<uint8_t>(((e - 1 + f.bias) << f.manBits) | man);
}

double fromFp8(const Fp8& f, uint8_t b) {
  const int expField = (b & 0x7f) >> f.manBits, man = b & ((1 << f.manBits) - 1);
  double v = expField == 0 ? std::ldexp(man, 1 - f.bias - f.manBits)
                           : std::ldexp((1 << f.manBits) + man, expField - f.bias - f.manBits);
  if (!f.hasInfinity && (b & 0x7f) == 0x7f) v = NAN;
  if (f.hasInfinity && expField == 31) v = man ? NAN : INFINITY;
  return (b & 0x80) ? -v : v;
}

bool isFp8(gdrDataType_t t) { return t == gdrFloat8e4m3 || t == gdrFloat8e5m2; }

}  // namespace

void store(gdrDataType_t t, void* buf, size_t i, double v) {
  switch (t) {
    case gdrInt8: static_cast<int8_t*>(buf)[i] = static_cast<int8_t>(v); break;
    case gdrUint8: static_cast<uint8_t*>(buf)[i] = static_cast<uint8_t>(v); break;
    case gdrInt32: static_cast<int32_t*>(buf)[i] = static_cast<int32_t>(v); break;
    case gdrUint32: static_cast<uint32_t*>(buf)[i] = static_cast<uint32_t>(v); break;
    case gdrInt64: static_cast<int64_t*>(buf)[i] = static_cast<int64_t>(v); break;
    case gdrUint64: static_cast<uint64_t*>(buf)[i] = static_cast<uint64_t>(v); break;
    case gdrFloat16: static_cast<uint16_t*>(buf)[i] = toHalf(v); break;
    case gdrBfloat16: static_cast<uint16_t*>(buf)[i] = toBf16(v); break;
    case gdrFloat32: static_cast<float*>(buf)[i] = static_cast<float>(v); break;
    case gdrFloat64: static_cast<double*>(buf)[i] = v; break;
    case gdrFloat8e4m3: static_cast<uint8_t*>(buf)[i] = toFp8(kE4M3, v); break;
    case gdrFloat8e5m2: static_cast<uint8_t*>(buf)[i] = toFp8(kE5M2, v); break;
    default: break;
  }
}

double load(gdrDataType_t t, const void* buf, size_t i) {
  switch (t) {
    case gdrInt8: return static_cast<const int8_t*>(buf)[i];
    case gdrUint8: return static_cast<const uint8_t*>(buf)[i];
    case gdrInt32: return static_cast<const int32_t*>(buf)[i];
    case gdrUint32: return static_cast<const uint32_t*>(buf)[i];
    case gdrInt64: return static_cast<double>(static_cast<const int64_t*>(buf)[i]);
    case gdrUint64: return static_cast<double>(static_cast<const uint64_t*>(buf)[i]);
    case gdrFloat16: return fromHalf(static_cast<const uint16_t*>(buf)[i]);
    case gdrBfloat16: return fromBf16(static_cast<const uint16_t*>(buf)[i]);
    case gdrFloat32: return static_cast<const float*>(buf)[i];
    case gdrFloat64: return static_cast<const double*>(buf)[i];
    case gdrFloat8e4m3: return fromFp8(kE4M3, static_cast<const uint8_t*>(buf)[i]);
    case gdrFloat8e5m2: return fromFp8(kE5M2, static_cast<const uint8_t*>(buf)[i]);
    default: return 0;
  }
}

bool isInteger(gdrDataType_t t) { return t <= gdrUint64; }

double expectedReduce(gdrDataType_t t, gdrRedOp_t op, size_t i, int nranks, unsigned seed) {
  double acc = static_cast<double>(inputValue(t, op, 0, i, seed));
  for (int r = 1; r < nranks; ++r) {
    double v = static_cast<double>(inputValue(t, op, r, i, seed));
    switch (op) {
      case gdrSum: case gdrAvg: acc += v; break;
      case gdrProd: acc *= v; break;
      case gdrMax: acc = std::max(acc, v); break;
      case gdrMin: acc = std::min(acc, v); break;
      default: break;
    }
  }
  if (isInteger(t)) {  // wrap to the type's width, as the library's integer ops do
    char one[8];
    store(t, one, 0, acc);
    acc = load(t, one, 0);
  }
  if (op == gdrAvg) acc = isInteger(t) ? std::trunc(acc / nranks) : acc / nranks;
  if (isFp8(t)) {  // the library rounds the (exact) result once, to fp8
    uint8_t one;
    store(t, &one, 0, acc);
    acc = load(t, &one, 0);
  }
  return acc;
}

bool matches(gdrDataType_t t, double got, double want) {
  if (isInteger(t) || isFp8(t)) return got == want;
  double tol = t == gdrFloat16 ? 1e-3 : t == gdrBfloat16 ? 1e-2 : t == gdrFloat32 ? 1e-6 : 1e-12;
  return std::fabs(got - want) <= tol * std::max(1.0, std::fabs(want));
}

}  // namespace gdrref

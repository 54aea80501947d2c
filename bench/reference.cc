// Reference values shared by gdr-bench --check, the unit tests and the MPI
// tests: inputs are small integers (ones and twos for prod) so every
// reduction is exact in every type and checks can demand equality; avg is
// compared with a per-type tolerance.
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
  return acc;
}

bool matches(gdrDataType_t t, double got, double want) {
  if (isInteger(t)) return got == want;
  double tol = t == gdrFloat16 ? 1e-3 : t == gdrBfloat16 ? 1e-2 : t == gdrFloat32 ? 1e-6 : 1e-12;
  return std::fabs(got - want) <= tol * std::max(1.0, std::fabs(want));
}

}  // namespace gdrref

// Element values for the NCCL-API test programs: every NCCL type through
// double, with an encoder of its own for the narrow floats (round to nearest
// even; fp8 saturating like CUDA's __NV_SATFINITE, fp16/bf16 to infinity).
#pragma once

#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace ncclval {

inline bool isFp8(ncclDataType_t t) { return t == ncclFloat8e4m3 || t == ncclFloat8e5m2; }
inline bool isInteger(ncclDataType_t t) { return t <= ncclUint64; }

inline std::vector<ncclDataType_t> allTypes() {
  return {ncclInt8,    ncclUint8,   ncclInt32,    ncclUint32, ncclInt64,      ncclUint64,
          ncclFloat16, ncclFloat32, ncclFloat64, ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2};
}

inline const char* typeName(ncclDataType_t t) {
  static const char* n[] = {"int8", "uint8", "int32", "uint32", "int64",   "uint64",
                            "fp16", "fp32",  "fp64",  "bf16",   "fp8e4m3", "fp8e5m2"};
  return n[t];
}

inline size_t sizeOf(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    default: return 8;
  }
}

// A narrow binary float: mantissa bits, bias, the largest finite value, and
// whether it has infinities (else S.1111.111 is its only NaN, as in E4M3).
struct Narrow {
  int bits, manBits, bias;
  double maxValue;
  bool hasInf, saturate;
};
inline Narrow narrowOf(ncclDataType_t t) {
  switch (t) {
    case ncclFloat16: return {16, 10, 15, 65504.0, true, false};
    case ncclBfloat16: return {16, 7, 127, 3.3895313892515355e38, true, false};
    case ncclFloat8e4m3: return {8, 3, 7, 448.0, false, true};
    default: return {8, 2, 15, 57344.0, true, true};  // E5M2
  }
}

inline uint32_t encode(const Narrow& f, double v) {
  const int expBits = f.bits - 1 - f.manBits;
  const uint32_t sign = std::signbit(v) ? 1u << (expBits + f.manBits) : 0;
  const uint32_t infCode = ((1u << expBits) - 1) << f.manBits;
  if (std::isnan(v)) return sign | ((1u << (expBits + f.manBits)) - 1);
  double a = std::fabs(v);
  const int minExp = 1 - f.bias;
  int e;
  std::frexp(a, &e);
  const int exp = a == 0 ? minExp : std::max(e - 1, minExp);
  const double spacing = std::ldexp(1.0, exp - f.manBits);
  a = std::nearbyint(a / spacing) * spacing;
  if (a > f.maxValue) {
    if (!f.saturate && f.hasInf) return sign | infCode;
    a = f.maxValue;
  }
  if (a < std::ldexp(1.0, minExp)) return sign | static_cast<uint32_t>(a / std::ldexp(1.0, minExp - f.manBits));
  std::frexp(a, &e);
  const uint32_t man = static_cast<uint32_t>(std::ldexp(a, f.manBits - (e - 1))) - (1u << f.manBits);
  return sign | (static_cast<uint32_t>(e - 1 + f.bias) << f.manBits) | man;
}

inline double decode(const Narrow& f, uint32_t b) {
  const int totalBits = f.bits;
  const int expBits = totalBits - 1 - f.manBits;
  const uint32_t body = b & ((1u << (totalBits - 1)) - 1);
  const int expField = static_cast<int>(body >> f.manBits);
  const uint32_t man = body & ((1u << f.manBits) - 1);
  double v;
  if (f.hasInf && expField == (1 << expBits) - 1) v = man ? NAN : INFINITY;
  else if (!f.hasInf && body == (1u << (totalBits - 1)) - 1) v = NAN;
  else if (expField == 0) v = std::ldexp(man, 1 - f.bias - f.manBits);
  else v = std::ldexp((1u << f.manBits) + man, expField - f.bias - f.manBits);
  return (b >> (totalBits - 1)) ? -v : v;
}

inline void put(void* b, size_t i, ncclDataType_t t, double v) {
  switch (t) {
    case ncclInt8: static_cast<int8_t*>(b)[i] = static_cast<int8_t>(v); break;
    case ncclUint8: static_cast<uint8_t*>(b)[i] = static_cast<uint8_t>(v); break;
    case ncclInt32: static_cast<int32_t*>(b)[i] = static_cast<int32_t>(v); break;
    case ncclUint32: static_cast<uint32_t*>(b)[i] = static_cast<uint32_t>(v); break;
    case ncclInt64: static_cast<int64_t*>(b)[i] = static_cast<int64_t>(v); break;
    case ncclUint64: static_cast<uint64_t*>(b)[i] = static_cast<uint64_t>(v); break;
    case ncclFloat32: static_cast<float*>(b)[i] = static_cast<float>(v); break;
    case ncclFloat64: static_cast<double*>(b)[i] = v; break;
    case ncclFloat16: case ncclBfloat16: static_cast<uint16_t*>(b)[i] = static_cast<uint16_t>(encode(narrowOf(t), v)); break;
    default: static_cast<uint8_t*>(b)[i] = static_cast<uint8_t>(encode(narrowOf(t), v)); break;
  }
}

inline double get(const void* b, size_t i, ncclDataType_t t) {
  switch (t) {
    case ncclInt8: return static_cast<const int8_t*>(b)[i];
    case ncclUint8: return static_cast<const uint8_t*>(b)[i];
    case ncclInt32: return static_cast<const int32_t*>(b)[i];
    case ncclUint32: return static_cast<const uint32_t*>(b)[i];
    case ncclInt64: return static_cast<double>(static_cast<const int64_t*>(b)[i]);
    case ncclUint64: return static_cast<double>(static_cast<const uint64_t*>(b)[i]);
    case ncclFloat32: return static_cast<const float*>(b)[i];
    case ncclFloat64: return static_cast<const double*>(b)[i];
    case ncclFloat16: case ncclBfloat16: return decode(narrowOf(t), static_cast<const uint16_t*>(b)[i]);
    default: return decode(narrowOf(t), static_cast<const uint8_t*>(b)[i]);
  }
}

// v stored in and read back from the type (integers wrap, floats round).
inline double round(ncclDataType_t t, double v) {
  unsigned char one[8];
  put(one, 0, t, v);
  return get(one, 0, t);
}
inline double wrap(ncclDataType_t t, double v) {
  if (!isInteger(t)) return v;
  const int64_t w = static_cast<int64_t>(v);
  return round(t, static_cast<double>(w));
}

inline double combine(double a, double b, ncclRedOp_t op) {
  switch (op) {
    case ncclProd: return a * b;
    case ncclMax: return a > b ? a : b;
    case ncclMin: return a < b ? a : b;
    default: return a + b;
  }
}

// Rank r's element i. Exact inputs are small integers (fp8: |x| <= 2 E4M3,
// <= 1 E5M2; prod: 1 or 2), so results of 2 ranks are exact in every type.
// Real inputs are random in [-2, 2], rounded to the type.
inline double input(uint64_t seed, int r, size_t i, ncclDataType_t t, ncclRedOp_t op, bool exact, int /*nranks*/) {
  uint64_t h = (seed ^ (static_cast<uint64_t>(r + 1) * 0x9e3779b97f4a7c15ull)) + (i + 1) * 0xbf58476d1ce4e5b9ull;
  h ^= h >> 31;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 29;
  if (!exact) return round(t, (static_cast<double>(h % 1000001) / 250000.0) - 2.0);
  if (op == ncclProd) return static_cast<double>(1 + h % 2);
  if (t == ncclFloat8e4m3) return static_cast<double>(h % 5) - 2;
  if (t == ncclFloat8e5m2) return static_cast<double>(h % 3) - 1;
  const bool isUnsigned = t == ncclUint8 || t == ncclUint32 || t == ncclUint64;
  return isUnsigned ? static_cast<double>(h % 9) : static_cast<double>(h % 9) - 4;
}

}  // namespace ncclval

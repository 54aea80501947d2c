#include "collectives/reduce_host.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/error.h"

namespace gdr::coll {

float halfToFloat(uint16_t h) {
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

uint16_t floatToHalf(float f) {
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

float bf16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet nan
  x += 0x7fffu + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

namespace {

struct Sum {
  template <typename T> static T apply(T a, T b) { return a + b; }
};
struct Prod {
  template <typename T> static T apply(T a, T b) { return a * b; }
};
struct Max {
  template <typename T> static T apply(T a, T b) { return a < b ? b : a; }
};
struct Min {
  template <typename T> static T apply(T a, T b) { return b < a ? b : a; }
};

// Integer sums and products wrap (as in MPI implementations): compute them
// unsigned so overflow is defined.
template <typename T, typename Op> struct Wrapping {
  static T apply(T a, T b) {
    using U = std::make_unsigned_t<T>;
    if constexpr (std::is_same_v<Op, Sum>) return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    else if constexpr (std::is_same_v<Op, Prod>) return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    else return Op::apply(a, b);
  }
};

template <typename T, typename Op>
void reduceNative(void* dst, const void* a, const void* b, size_t n) {
  T* d = static_cast<T*>(dst);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) {
    if constexpr (std::is_integral_v<T>) d[i] = Wrapping<T, Op>::apply(x[i], y[i]);
    else d[i] = Op::apply(x[i], y[i]);
  }
}

// Narrow floats (fp16, bf16, fp8) combine in fp32 and round once per step.
template <typename Bits, float (*ToF)(Bits), Bits (*FromF)(float), typename Op>
void reduceNarrow(void* dst, const void* a, const void* b, size_t n) {
  Bits* d = static_cast<Bits*>(dst);
  const Bits* x = static_cast<const Bits*>(a);
  const Bits* y = static_cast<const Bits*>(b);
  for (size_t i = 0; i < n; ++i) d[i] = FromF(Op::apply(ToF(x[i]), ToF(y[i])));
}

template <typename Op> transport::ReduceFn pick(gdrDataType_t t) {
  switch (t) {
    case gdrInt8: return reduceNative<int8_t, Op>;
    case gdrUint8: return reduceNative<uint8_t, Op>;
    case gdrInt32: return reduceNative<int32_t, Op>;
    case gdrUint32: return reduceNative<uint32_t, Op>;
    case gdrInt64: return reduceNative<int64_t, Op>;
    case gdrUint64: return reduceNative<uint64_t, Op>;
    case gdrFloat16: return reduceNarrow<uint16_t, halfToFloat, floatToHalf, Op>;
    case gdrBfloat16: return reduceNarrow<uint16_t, bf16ToFloat, floatToBf16, Op>;
    case gdrFloat32: return reduceNative<float, Op>;
    case gdrFloat64: return reduceNative<double, Op>;
    case gdrFloat8e4m3: return reduceNarrow<uint8_t, fp8e4m3ToFloat, floatToFp8e4m3, Op>;
    case gdrFloat8e5m2: return reduceNarrow<uint8_t, fp8e5m2ToFloat, floatToFp8e5m2, Op>;
    default: break;
  }
  throw InvalidArgument(strprintf("unknown datatype %d", static_cast<int>(t)));
}

template <typename T> void divideNative(void* buf, size_t n, int by) {
  T* p = static_cast<T*>(buf);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<T>(p[i] / static_cast<T>(by));
}

// Narrow floats divide in fp32 and round once.
template <typename Bits, float (*ToF)(Bits), Bits (*FromF)(float)> void divideNarrow(void* buf, size_t n, int by) {
  Bits* p = static_cast<Bits*>(buf);
  for (size_t i = 0; i < n; ++i) p[i] = FromF(ToF(p[i]) / static_cast<float>(by));
}

}  // namespace

size_t typeSize(gdrDataType_t t) {
  static const size_t kSizes[] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8, 1, 1};
  static_assert(sizeof(kSizes) / sizeof(kSizes[0]) == gdrNumTypes, "a size per gdrDataType_t");
  if (static_cast<unsigned>(t) >= gdrNumTypes) throw InvalidArgument(strprintf("unknown datatype %d", (int)t));
  return kSizes[t];
}

const char* typeName(gdrDataType_t t) {
  static const char* kNames[] = {"int8", "uint8", "int32", "uint32", "int64",
                                 "uint64", "float16", "bfloat16", "float32", "float64",
                                 "float8e4m3", "float8e5m2"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == gdrNumTypes, "a name per gdrDataType_t");
  return static_cast<unsigned>(t) < gdrNumTypes ? kNames[t] : "unknown";
}

const char* opName(gdrRedOp_t op) {
  static const char* kNames[] = {"sum", "prod", "max", "min", "avg"};
  return static_cast<unsigned>(op) < gdrNumOps ? kNames[op] : "unknown";
}

transport::ReduceFn hostReduceFn(gdrDataType_t t, gdrRedOp_t op) {
  switch (op) {
    case gdrSum:
    case gdrAvg: return pick<Sum>(t);
    case gdrProd: return pick<Prod>(t);
    case gdrMax: return pick<Max>(t);
    case gdrMin: return pick<Min>(t);
    default: break;
  }
  throw InvalidArgument(strprintf("unknown reduction op %d", static_cast<int>(op)));
}

void hostDivide(void* buf, size_t n, gdrDataType_t t, int by) {
  switch (t) {
    case gdrInt8: return divideNative<int8_t>(buf, n, by);
    case gdrUint8: return divideNative<uint8_t>(buf, n, by);
    case gdrInt32: return divideNative<int32_t>(buf, n, by);
    case gdrUint32: return divideNative<uint32_t>(buf, n, by);
    case gdrInt64: return divideNative<int64_t>(buf, n, by);
    case gdrUint64: return divideNative<uint64_t>(buf, n, by);
    case gdrFloat32: return divideNative<float>(buf, n, by);
    case gdrFloat64: return divideNative<double>(buf, n, by);
    case gdrFloat16: return divideNarrow<uint16_t, halfToFloat, floatToHalf>(buf, n, by);
    case gdrBfloat16: return divideNarrow<uint16_t, bf16ToFloat, floatToBf16>(buf, n, by);
    case gdrFloat8e4m3: return divideNarrow<uint8_t, fp8e4m3ToFloat, floatToFp8e4m3>(buf, n, by);
    case gdrFloat8e5m2: return divideNarrow<uint8_t, fp8e5m2ToFloat, floatToFp8e5m2>(buf, n, by);
    default: break;
  }
  throw InvalidArgument(strprintf("unknown datatype %d", static_cast<int>(t)));
}

}  // namespace gdr::coll

#include "collectives/reduce_host.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/error.h"

namespace gdr::coll {

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

template <typename Op> constexpr transport::ReduceFn pick(gdrDataType_t t) {
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

namespace {

// Every (op, type) pair's function, looked up by index: one load on the
// small-message path instead of two switches.
struct FnTable {
  transport::ReduceFn fn[gdrNumOps][gdrNumTypes] = {};
  constexpr FnTable() {
    for (int t = 0; t < gdrNumTypes; ++t) {
      const auto type = static_cast<gdrDataType_t>(t);
      fn[gdrSum][t] = fn[gdrAvg][t] = pick<Sum>(type);
      fn[gdrProd][t] = pick<Prod>(type);
      fn[gdrMax][t] = pick<Max>(type);
      fn[gdrMin][t] = pick<Min>(type);
    }
  }
};
constexpr FnTable kFns;  // constant-initialized: usable during any static init

}  // namespace

transport::ReduceFn hostReduceFn(gdrDataType_t t, gdrRedOp_t op) {
  const unsigned o = static_cast<unsigned>(op), ty = static_cast<unsigned>(t);
  if (__builtin_expect(o < gdrNumOps && ty < gdrNumTypes, 1)) return kFns.fn[o][ty];
  if (o >= gdrNumOps) throw InvalidArgument(strprintf("unknown reduction op %d", static_cast<int>(op)));
  throw InvalidArgument(strprintf("unknown datatype %d", static_cast<int>(t)));
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

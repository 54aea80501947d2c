#include "gpu_values.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "collectives/reduce_host.h"

namespace gdrtest {

using namespace gdr;
using namespace gdr::coll;

size_t typeBytes(gdrDataType_t t) { return typeSize(t); }
bool isFloat(gdrDataType_t t) { return t >= gdrFloat16; }

double asDouble(gdrDataType_t t, const char* p) {
  switch (t) {
    case gdrInt8: return *reinterpret_cast<const int8_t*>(p);
    case gdrUint8: return *reinterpret_cast<const uint8_t*>(p);
    case gdrInt32: return *reinterpret_cast<const int32_t*>(p);
    case gdrUint32: return *reinterpret_cast<const uint32_t*>(p);
    case gdrInt64: return static_cast<double>(*reinterpret_cast<const int64_t*>(p));
    case gdrUint64: return static_cast<double>(*reinterpret_cast<const uint64_t*>(p));
    case gdrFloat16: return halfToFloat(*reinterpret_cast<const uint16_t*>(p));
    case gdrBfloat16: return bf16ToFloat(*reinterpret_cast<const uint16_t*>(p));
    case gdrFloat32: return *reinterpret_cast<const float*>(p);
    case gdrFloat64: return *reinterpret_cast<const double*>(p);
    case gdrFloat8e4m3: return fp8e4m3ToFloat(*reinterpret_cast<const uint8_t*>(p));
    case gdrFloat8e5m2: return fp8e5m2ToFloat(*reinterpret_cast<const uint8_t*>(p));
    default: return 0;
  }
}

std::vector<char> randomValues(gdrDataType_t t, size_t count, std::mt19937_64& rng) {
  std::vector<char> buf(count * typeBytes(t));
  std::uniform_int_distribution<int> small(-20, 20);
  std::uniform_real_distribution<float> real(0.5f, 2.0f);
  for (size_t i = 0; i < count; ++i) {
    char* p = buf.data() + i * typeBytes(t);
    const int v = small(rng);
    const float f = real(rng) * (small(rng) < 0 ? -1.f : 1.f);
    switch (t) {
      case gdrInt8: *reinterpret_cast<int8_t*>(p) = static_cast<int8_t>(v); break;
      case gdrUint8: *reinterpret_cast<uint8_t*>(p) = static_cast<uint8_t>(v + 20); break;
      case gdrInt32: *reinterpret_cast<int32_t*>(p) = v * 1000; break;
      case gdrUint32: *reinterpret_cast<uint32_t*>(p) = static_cast<uint32_t>(v + 20) * 1000; break;
      case gdrInt64: *reinterpret_cast<int64_t*>(p) = int64_t{v} << 33; break;
      case gdrUint64: *reinterpret_cast<uint64_t*>(p) = static_cast<uint64_t>(v + 20) << 33; break;
      case gdrFloat16: *reinterpret_cast<uint16_t*>(p) = floatToHalf(f); break;
      case gdrBfloat16: *reinterpret_cast<uint16_t*>(p) = floatToBf16(f); break;
      case gdrFloat32: *reinterpret_cast<float*>(p) = f; break;
      case gdrFloat64: *reinterpret_cast<double*>(p) = f * 1.000000001; break;
      case gdrFloat8e4m3: *reinterpret_cast<uint8_t*>(p) = floatToFp8e4m3(f); break;
      case gdrFloat8e5m2: *reinterpret_cast<uint8_t*>(p) = floatToFp8e5m2(f); break;
      default: break;
    }
  }
  return buf;
}

std::vector<char> reduceRef(const std::vector<const char*>& src, size_t count, gdrDataType_t t, gdrRedOp_t op) {
  std::vector<char> ref(src[0], src[0] + count * typeBytes(t));
  auto fn = hostReduceFn(t, op);
  for (size_t r = 1; r < src.size(); ++r) fn(ref.data(), ref.data(), src[r], count);
  if (op == gdrAvg) hostDivide(ref.data(), count, t, static_cast<int>(src.size()));
  return ref;
}

std::vector<char> reduceRefRoundedOnce(const std::vector<const char*>& src, size_t count,
                                       gdrDataType_t t, gdrRedOp_t op) {
  if (!isFloat(t)) return reduceRef(src, count, t, op);
  const size_t eb = typeBytes(t);
  std::vector<char> ref(count * eb);
  for (size_t i = 0; i < count; ++i) {
    double a = asDouble(t, src[0] + i * eb);
    for (size_t r = 1; r < src.size(); ++r) {
      const double x = asDouble(t, src[r] + i * eb);
      a = op == gdrProd  ? a * x
          : op == gdrMax ? std::max(a, x)
          : op == gdrMin ? std::min(a, x)
                         : a + x;
    }
    if (op == gdrAvg) a /= static_cast<double>(src.size());
    char* p = ref.data() + i * eb;
    const float f = static_cast<float>(a);
    switch (t) {
      case gdrFloat16:
        *reinterpret_cast<uint16_t*>(p) = floatToHalf(f);
        break;
      case gdrBfloat16:
        *reinterpret_cast<uint16_t*>(p) = floatToBf16(f);
        break;
      case gdrFloat32:
        *reinterpret_cast<float*>(p) = f;
        break;
      case gdrFloat64:
        *reinterpret_cast<double*>(p) = a;
        break;
      case gdrFloat8e4m3:
        *reinterpret_cast<uint8_t*>(p) = floatToFp8e4m3(f);
        break;
      case gdrFloat8e5m2:
        *reinterpret_cast<uint8_t*>(p) = floatToFp8e5m2(f);
        break;
      default:
        break;
    }
  }
  return ref;
}

long mismatches(const char* what, int rank, int nranks, gdrDataType_t t, gdrRedOp_t op, size_t count, bool inPlace,
                const char* got, const char* want, size_t n) {
  const size_t eb = typeBytes(t);
  // fp16/bf16/fp8: the device rounds once, the host reference after each
  // step (fp8: one unit in the last place, relative).
  const double tol = t == gdrFloat16 ? 4e-3 : t == gdrBfloat16 ? 2e-2 : t == gdrFloat32 ? 1e-6
                     : t == gdrFloat8e4m3 ? 0.0625 : t == gdrFloat8e5m2 ? 0.125 : 1e-12;
  long bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const char* g = got + i * eb;
    const char* w = want + i * eb;
    const bool ok = isFloat(t) ? std::fabs(asDouble(t, g) - asDouble(t, w)) <=
                                     tol * std::max(1.0, std::fabs(asDouble(t, w))) * (nranks + 1)
                               : std::memcmp(g, w, eb) == 0;
    if (!ok && bad++ < 3)
      std::fprintf(stderr, "rank %d: %s %s %s count %zu%s: element %zu is %g, expected %g\n", rank, what, typeName(t),
                   opName(op), count, inPlace ? " in-place" : "", i, asDouble(t, g), asDouble(t, w));
  }
  return bad;
}

}  // namespace gdrtest

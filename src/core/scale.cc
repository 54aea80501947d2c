#include "core/scale.h"

#include <cstdint>
#include <cstring>

#include "core/datatype.h"
#include "core/error.h"

namespace gdr {

namespace {

template <typename T>
void scaleTyped(void* dst, const void* src, size_t n, const void* scalar) {
  T s;
  std::memcpy(&s, scalar, sizeof(T));
  const T* in = static_cast<const T*>(src);
  T* out = static_cast<T*>(dst);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<T>(in[i] * s);
}

template <typename Bits, float (*ToF)(Bits), Bits (*FromF)(float)>
void scaleNarrow(void* dst, const void* src, size_t n, const void* scalar) {
  Bits s;
  std::memcpy(&s, scalar, sizeof(s));
  const float fs = ToF(s);
  const Bits* in = static_cast<const Bits*>(src);
  Bits* out = static_cast<Bits*>(dst);
  for (size_t i = 0; i < n; ++i) out[i] = FromF(ToF(in[i]) * fs);
}

}  // namespace

void scaleHost(void* dst, const void* src, size_t n, gdrDataType_t t, const void* scalar) {
  switch (t) {
    case gdrInt8:
      return scaleTyped<int8_t>(dst, src, n, scalar);
    case gdrUint8:
      return scaleTyped<uint8_t>(dst, src, n, scalar);
    case gdrInt32:
      return scaleTyped<int32_t>(dst, src, n, scalar);
    case gdrUint32:
      return scaleTyped<uint32_t>(dst, src, n, scalar);
    case gdrInt64:
      return scaleTyped<int64_t>(dst, src, n, scalar);
    case gdrUint64:
      return scaleTyped<uint64_t>(dst, src, n, scalar);
    case gdrFloat32:
      return scaleTyped<float>(dst, src, n, scalar);
    case gdrFloat64:
      return scaleTyped<double>(dst, src, n, scalar);
    case gdrFloat16:
      return scaleNarrow<uint16_t, halfToFloat, floatToHalf>(dst, src, n, scalar);
    case gdrBfloat16:
      return scaleNarrow<uint16_t, bf16ToFloat, floatToBf16>(dst, src, n, scalar);
    case gdrFloat8e4m3:
      return scaleNarrow<uint8_t, fp8e4m3ToFloat, floatToFp8e4m3>(dst, src, n, scalar);
    case gdrFloat8e5m2:
      return scaleNarrow<uint8_t, fp8e5m2ToFloat, floatToFp8e5m2>(dst, src, n, scalar);
    default:
      throw InternalError("scaleHost: bad type");
  }
}

}  // namespace gdr

// fp8 (OCP E4M3 and E5M2) on the host: the library's conversions against the
// reference's independent encoder (bench/reference.cc, from double), known
// codes (saturation, ties to even, subnormals), and the host reductions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

#include "bench/reference.h"
#include "collectives/reduce_host.h"

namespace {

using gdr::floatToFp8e4m3;
using gdr::floatToFp8e5m2;
using gdr::fp8e4m3ToFloat;
using gdr::fp8e5m2ToFloat;

uint8_t libEncode(gdrDataType_t t, float v) { return t == gdrFloat8e4m3 ? floatToFp8e4m3(v) : floatToFp8e5m2(v); }
float libDecode(gdrDataType_t t, uint8_t b) { return t == gdrFloat8e4m3 ? fp8e4m3ToFloat(b) : fp8e5m2ToFloat(b); }
uint8_t refEncode(gdrDataType_t t, double v) {
  uint8_t b = 0;
  gdrref::store(t, &b, 0, v);
  return b;
}

bool isNan(gdrDataType_t t, uint8_t b) { return std::isnan(libDecode(t, b)); }

class Float8 : public ::testing::TestWithParam<gdrDataType_t> {};

TEST_P(Float8, EveryCodeRoundTripsAndDecodesLikeTheReference) {
  const gdrDataType_t t = GetParam();
  for (int b = 0; b < 256; ++b) {
    const uint8_t code = static_cast<uint8_t>(b);
    const float f = libDecode(t, code);
    const double r = gdrref::load(t, &code, 0);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(r)) << "code " << b;
      continue;
    }
    EXPECT_EQ(static_cast<double>(f), r) << "code " << b;
    if (std::isinf(f)) continue;  // E5M2 infinities saturate on the way back
    EXPECT_EQ(libEncode(t, f), code) << "code " << b << " value " << f;
  }
}

// Midpoints between neighbours (ties), points just beside them, values past
// the largest finite one and random floats over the whole range: the library
// rounds exactly like the reference.
TEST_P(Float8, EncodingMatchesTheReferenceEverywhere) {
  const gdrDataType_t t = GetParam();
  for (int b = 0; b < 0x7f; ++b) {
    const uint8_t lo = static_cast<uint8_t>(b), hi = static_cast<uint8_t>(b + 1);
    if (isNan(t, lo) || isNan(t, hi) || std::isinf(libDecode(t, hi))) continue;
    const float mid = (libDecode(t, lo) + libDecode(t, hi)) / 2;  // exact in fp32
    for (float v : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
      EXPECT_EQ(libEncode(t, v), refEncode(t, v)) << "value " << v;
      EXPECT_EQ(libEncode(t, -v), refEncode(t, -v)) << "value " << -v;
    }
  }
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> expo(-20.0f, 18.0f);
  for (int i = 0; i < 100000; ++i) {
    const float v = std::exp2(expo(rng)) * ((rng() & 1) ? -1.0f : 1.0f);
    ASSERT_EQ(libEncode(t, v), refEncode(t, v)) << "value " << v;
  }
}

TEST(Float8Codes, SaturateTieToEvenAndSubnormals) {
  EXPECT_EQ(floatToFp8e4m3(1.0f), 0x38);
  EXPECT_EQ(floatToFp8e4m3(448.0f), 0x7e);
  EXPECT_EQ(floatToFp8e4m3(470.0f), 0x7e);       // would round up to 480: saturates
  EXPECT_EQ(floatToFp8e4m3(INFINITY), 0x7e);     // satfinite: infinities too
  EXPECT_EQ(floatToFp8e4m3(-1e9f), 0xfe);
  EXPECT_EQ(floatToFp8e4m3(1.0625f), 0x38);      // tie between 1 and 1.125: even
  EXPECT_EQ(floatToFp8e4m3(1.1875f), 0x3a);      // tie between 1.125 and 1.25: even
  EXPECT_EQ(floatToFp8e4m3(0x1p-10f), 0x00);     // half the smallest subnormal: to zero (even)
  EXPECT_EQ(floatToFp8e4m3(0x1.8p-9f), 0x02);    // 1.5 smallest subnormals: to 2
  EXPECT_EQ(floatToFp8e4m3(0x1.ep-7f), 0x08);    // largest subnormal rounds up to the smallest normal
  EXPECT_EQ(fp8e4m3ToFloat(0x01), 0x1p-9f);
  EXPECT_TRUE(std::isnan(fp8e4m3ToFloat(0x7f)));
  EXPECT_EQ(floatToFp8e4m3(NAN) & 0x7f, 0x7f);
  EXPECT_EQ(floatToFp8e5m2(1.0f), 0x3c);
  EXPECT_EQ(floatToFp8e5m2(57344.0f), 0x7b);
  EXPECT_EQ(floatToFp8e5m2(1e6f), 0x7b);
  EXPECT_EQ(floatToFp8e5m2(-INFINITY), 0xfb);
  EXPECT_EQ(fp8e5m2ToFloat(0x7c), INFINITY);
  EXPECT_EQ(fp8e5m2ToFloat(0x01), 0x1p-16f);
}

// The host reduction rounds each combination once, in fp32, saturating.
TEST(Float8Codes, HostReductionsRoundOnceAndSaturate) {
  auto one = [](gdrDataType_t t, gdrRedOp_t op, float a, float b) {
    uint8_t x = libEncode(t, a), y = libEncode(t, b), d = 0;
    gdr::coll::hostReduceFn(t, op)(&d, &x, &y, 1);
    return libDecode(t, d);
  };
  EXPECT_EQ(one(gdrFloat8e4m3, gdrSum, 1.0f, 0.0625f), 1.0f);  // 1.0625: tie to even
  EXPECT_EQ(one(gdrFloat8e4m3, gdrSum, 1.125f, 0.0625f), 1.25f);
  EXPECT_EQ(one(gdrFloat8e4m3, gdrSum, 448.0f, 448.0f), 448.0f);
  EXPECT_EQ(one(gdrFloat8e4m3, gdrProd, -3.0f, 7.0f), -20.0f);  // -21: a tie between -20 and -22, to even
  EXPECT_EQ(one(gdrFloat8e4m3, gdrMax, -3.0f, 5.0f), 5.0f);
  EXPECT_EQ(one(gdrFloat8e5m2, gdrSum, 1.0f, 0.125f), 1.0f);
  EXPECT_EQ(one(gdrFloat8e5m2, gdrMin, -3.0f, 5.0f), -3.0f);
  EXPECT_EQ(one(gdrFloat8e5m2, gdrProd, 40000.0f, 2.0f), 57344.0f);
  uint8_t avg[2] = {floatToFp8e4m3(5.0f), floatToFp8e4m3(-7.0f)};
  gdr::coll::hostDivide(avg, 2, gdrFloat8e4m3, 3);  // 1.666.. -> 1.625; -2.333.. -> -2.25
  EXPECT_EQ(fp8e4m3ToFloat(avg[0]), 1.625f);
  EXPECT_EQ(fp8e4m3ToFloat(avg[1]), -2.25f);
  EXPECT_EQ(gdr::typeSize(gdrFloat8e4m3), 1u);
  EXPECT_STREQ(gdr::typeName(gdrFloat8e5m2), "float8e5m2");
}

INSTANTIATE_TEST_SUITE_P(Types, Float8, ::testing::Values(gdrFloat8e4m3, gdrFloat8e5m2),
                         [](const auto& info) { return std::string(gdr::typeName(info.param)); });

}  // namespace

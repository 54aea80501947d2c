// The GPU AES-256-GCM's arithmetic and its split of the work, run on the host:
// the kernels' own per-thread routine (gcm::threadPart) is called for every
// thread of an emulated grid and the partial hashes put together as the
// kernels do, then compared with OpenSSL and the GCM spec's test cases. A GPU
// run then only has to show that the kernels call this code the same way.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/error.h"
#include "crypto_gpu/gcm_reference.h"
#include "security/aead.h"
#include "security/gpu_aes_gcm_host.h"

namespace {

using namespace gdr::security;
using namespace gdr::security::gcm;
using gcmref::Bytes;

struct HostTe {
  uint32_t t[256];
  HostTe() {
    for (uint32_t x = 0; x < 256; ++x) t[x] = aesTe0(x);
  }
  uint32_t operator()(uint32_t x) const { return t[x]; }
};

struct HostTab {
  U128 t[256];
  explicit HostTab(U128 v) {
    for (uint32_t b = 0; b < 256; ++b) t[b] = gfTable8Entry(v, b);
  }
  U128 operator()(uint32_t b) const { return t[b]; }
};

struct HostIo {
  const uint8_t* in;
  uint8_t* out;
  U128 load(uint64_t i, unsigned n) const {
    uint8_t b[16] = {};
    std::memcpy(b, in + 16 * i, n);
    return loadBlock(b);
  }
  void store(uint64_t i, U128 x, unsigned n) const {
    uint8_t b[16];
    storeBlock(b, x);
    std::memcpy(out + 16 * i, b, n);
  }
};

bool equal(U128 a, U128 b) { return std::memcmp(&a, &b, sizeof(a)) == 0; }

U128 random128(std::mt19937_64& rng) {
  return U128{{uint32_t(rng()), uint32_t(rng()), uint32_t(rng()), uint32_t(rng())}};
}

Bytes randomBytes(std::mt19937_64& rng, size_t n) {
  Bytes b(n);
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  return b;
}

// One key, as the GPU side holds it.
struct Key {
  HostKey host;
  std::unique_ptr<Tables> tables = std::make_unique<Tables>();
  explicit Key(const uint8_t* k) {
    expandKey(k, host);
    buildTables(host.h, *tables);
  }
};

// A launch of `grid` blocks of kThreads threads, emulated thread by thread;
// returns the tag the last block would write (or compare, for Hash).
template <Mode kMode>
Bytes emulate(const Key& key, const LaunchParams& p, int grid, const uint8_t* in, uint8_t* out,
              bool authentic = true) {
  static const HostTe te;
  const HostTab step(key.tables->hGrid[grid]);
  const uint64_t P = uint64_t(grid) * kThreads;
  U128 sum = zero128();
  for (int g = 0; g < grid; ++g) {
    U128 acc = zero128();
    for (int t = 0; t < kThreads; ++t) {
      uint64_t u = uint64_t(g) * kThreads + t;
      U128 y = threadPart<kMode>(p, u, P, HostIo{in, out}, te, step, authentic);
      if (u < p.positions) y = gfMul(y, key.tables->hThread[t]);
      acc = xor128(acc, y);
    }
    sum = xor128(sum, gfMulTable8(acc, HostTab(key.tables->hGrid[g])));
  }
  Bytes tag(16);
  storeBlock(tag.data(), xor128(sum, p.ej0));
  return tag;
}

TEST(GpuAesGcmCore, SboxAndFips197Aes256) {
  EXPECT_EQ(aesSbox(0x00), 0x63u);
  EXPECT_EQ(aesSbox(0x01), 0x7cu);
  EXPECT_EQ(aesSbox(0x53), 0xedu);
  EXPECT_EQ(aesSbox(0xff), 0x16u);
  // FIPS-197 appendix C.3.
  Bytes key = gcmref::hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
  HostKey k;
  expandKey(key.data(), k);
  Bytes pt = gcmref::hex("00112233445566778899aabbccddeeff"), ct(16);
  storeBlock(ct.data(), encryptBlock(k.rk, loadBlock(pt.data())));
  EXPECT_EQ(ct, gcmref::hex("8ea2b7ca516745bfeafc49904b496089"));
}

TEST(GpuAesGcmCore, AesBlocksMatchOpenSsl) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 50; ++trial) {
    Bytes key = randomBytes(rng, 32), pt = randomBytes(rng, 16), ours(16), theirs(32);
    HostKey k;
    expandKey(key.data(), k);
    storeBlock(ours.data(), encryptBlock(k.rk, loadBlock(pt.data())));
    EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
    int n = 0;
    ASSERT_EQ(EVP_EncryptInit_ex(ctx, EVP_aes_256_ecb(), nullptr, key.data(), nullptr), 1);
    EVP_CIPHER_CTX_set_padding(ctx, 0);
    ASSERT_EQ(EVP_EncryptUpdate(ctx, theirs.data(), &n, pt.data(), 16), 1);
    EVP_CIPHER_CTX_free(ctx);
    theirs.resize(16);
    EXPECT_EQ(ours, theirs) << "trial " << trial;
  }
}

TEST(GpuAesGcmCore, ByteTableMultiplyEqualsBitwise) {
  std::mt19937_64 rng(12);
  for (int trial = 0; trial < 200; ++trial) {
    U128 x = random128(rng), v = random128(rng);
    EXPECT_TRUE(equal(gfMulTable8(x, HostTab(v)), gfMul(x, v))) << trial;
    EXPECT_TRUE(equal(gfMul(x, v), gfMul(v, x))) << trial;
    EXPECT_TRUE(equal(gfMul(x, gfOne()), x)) << trial;
  }
}

TEST(GpuAesGcmCore, TablesHoldThePowersOfH) {
  Bytes key = gcmref::hex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308");
  Key k(key.data());
  // TC15's H (the spec lists it).
  Bytes h(16);
  storeBlock(h.data(), k.host.h);
  EXPECT_EQ(h, gcmref::hex("acbef20579b4b8ebce889bac8732dad7"));
  U128 p = gfOne();
  for (int t = 0; t < kThreads; ++t) {
    p = gfMul(p, k.host.h);
    ASSERT_TRUE(equal(k.tables->hThread[t], p)) << t;
  }
  EXPECT_TRUE(equal(k.tables->hGrid[0], gfOne()));
  for (uint32_t x = 0; x < 256; ++x) ASSERT_EQ(k.tables->te0[x], aesTe0(x)) << x;
  EXPECT_TRUE(equal(k.tables->hGrid[1], p));
  EXPECT_TRUE(equal(k.tables->hGrid[kMaxGrid], gfMul(k.tables->hGrid[kMaxGrid - 1], p)));
}

TEST(GpuAesGcmCore, SpecTestCasesOnEmulatedGrids) {
  for (const auto& v : gcmref::specVectors()) {
    Bytes key = gcmref::hex(v.key), iv = gcmref::hex(v.iv), pt = gcmref::hex(v.pt), aad = gcmref::hex(v.aad);
    Key k(key.data());
    LaunchParams p;
    makeLaunchParams(k.host, iv.data(), aad.data(), aad.size(), pt.size(), p);
    for (int grid : {1, 2, 5}) {
      Bytes ct(pt.size());
      Bytes tag = emulate<Mode::Seal>(k, p, grid, pt.data(), ct.data());
      EXPECT_EQ(ct, gcmref::hex(v.ct)) << v.name << " grid " << grid;
      EXPECT_EQ(tag, gcmref::hex(v.tag)) << v.name << " grid " << grid;
    }
    Bytes ct(pt.size()), tag(16);  // and the reference agrees with the spec
    gcmref::opensslSeal(key.data(), iv.data(), aad.data(), aad.size(), pt.data(), pt.size(), ct.data(), tag.data());
    EXPECT_EQ(tag, gcmref::hex(v.tag)) << v.name << " (OpenSSL)";
  }
}

TEST(GpuAesGcmCore, SealMatchesOpenSslForEveryShapeOfInput) {
  std::mt19937_64 rng(13);
  for (size_t len : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{4095}, size_t{65536 + 3}}) {
    for (size_t aadLen : {size_t{0}, size_t{4}, size_t{20}, kMaxAadBytes}) {
      Bytes key = randomBytes(rng, 32), iv = randomBytes(rng, 12), aad = randomBytes(rng, aadLen),
            pt = randomBytes(rng, len);
      Key k(key.data());
      LaunchParams p;
      makeLaunchParams(k.host, iv.data(), aad.data(), aadLen, len, p);
      Bytes want(len), wantTag(16);
      gcmref::opensslSeal(key.data(), iv.data(), aad.data(), aadLen, pt.data(), len, want.data(), wantTag.data());
      for (int grid : {1, 3, 7}) {
        Bytes ct(len);
        Bytes tag = emulate<Mode::Seal>(k, p, grid, pt.data(), ct.data());
        ASSERT_EQ(ct, want) << "len " << len << " aad " << aadLen << " grid " << grid;
        ASSERT_EQ(tag, wantTag) << "len " << len << " aad " << aadLen << " grid " << grid;
      }
    }
  }
}

TEST(GpuAesGcmCore, OpenChecksTheTagThenDecryptsOrWritesZeros) {
  std::mt19937_64 rng(14);
  const size_t len = 5000;
  Bytes key = randomBytes(rng, 32), iv = randomBytes(rng, 12), pt = randomBytes(rng, len), ct(len), tag(16);
  gcmref::opensslSeal(key.data(), iv.data(), nullptr, 0, pt.data(), len, ct.data(), tag.data());
  Key k(key.data());
  LaunchParams p;
  makeLaunchParams(k.host, iv.data(), nullptr, 0, len, p);
  EXPECT_EQ(emulate<Mode::Hash>(k, p, 2, ct.data(), nullptr), tag);
  Bytes back(len);
  emulate<Mode::Decrypt>(k, p, 2, ct.data(), back.data());
  EXPECT_EQ(back, pt);
  ct[len / 2] ^= 0x10;
  EXPECT_NE(emulate<Mode::Hash>(k, p, 2, ct.data(), nullptr), tag);
  emulate<Mode::Decrypt>(k, p, 2, ct.data(), back.data(), /*authentic=*/false);
  EXPECT_EQ(back, Bytes(len, 0));
}

// The GPU test's round trip (OpenRoundTripsAndRefusesEveryFlippedBit) with
// the grids gpu_aes_gcm.cu launches for its lengths (gcm::launchGrid; the
// caps are far above these grids): seal, then open out of place and in place,
// each against OpenSSL.
TEST(GpuAesGcmCore, OpenOnTheGridsTheKernelsUse) {
  std::mt19937_64 rng(16);
  for (size_t len : {size_t{1}, size_t{15}, size_t{17}, size_t{4095}, size_t{4096}, (size_t{1} << 20) + 3}) {
    Bytes key = randomBytes(rng, 32), iv = randomBytes(rng, 12), aad = randomBytes(rng, 4), pt = randomBytes(rng, len);
    Key k(key.data());
    LaunchParams p;
    makeLaunchParams(k.host, iv.data(), aad.data(), aad.size(), len, p);
    const int grid = launchGrid(p.positions, kMaxGrid);
    ASSERT_GE(grid, 1);
    ASSERT_LE(uint64_t(grid - 1) * kThreads, p.positions) << "a grid with an idle block, len " << len;
    Bytes ct(len), tag = emulate<Mode::Seal>(k, p, grid, pt.data(), ct.data()), want(len), wantTag(16);
    gcmref::opensslSeal(key.data(), iv.data(), aad.data(), aad.size(), pt.data(), len, want.data(), wantTag.data());
    ASSERT_EQ(ct, want) << "len " << len << " grid " << grid;
    ASSERT_EQ(tag, wantTag) << "len " << len << " grid " << grid;
    Bytes cpuBack(len);
    ASSERT_TRUE(gcmref::opensslOpen(key.data(), iv.data(), aad.data(), aad.size(), ct.data(), len, tag.data(),
                                    cpuBack.data()));
    ASSERT_EQ(cpuBack, pt);

    EXPECT_EQ(emulate<Mode::Hash>(k, p, grid, ct.data(), nullptr), tag) << "len " << len;
    Bytes back(len, 0xa5);
    emulate<Mode::Decrypt>(k, p, grid, ct.data(), back.data());
    EXPECT_EQ(back, pt) << "len " << len << " out of place";
    Bytes inPlace = ct;
    emulate<Mode::Decrypt>(k, p, grid, inPlace.data(), inPlace.data());
    EXPECT_EQ(inPlace, pt) << "len " << len << " in place";
  }
  EXPECT_EQ(launchGrid(0, 8), 1);
  EXPECT_EQ(launchGrid(uint64_t{1} << 40, 8), 8);
}

// A chunk sealed by the GPU code opens with the CPU AEAD (aead.h: nonce from
// a counter, any AAD; here the record header), and the other way round.
TEST(GpuAesGcmCore, ChunksInteroperateWithTheCpuAead) {
  std::mt19937_64 rng(15);
  Bytes key = randomBytes(rng, 32);
  Key k(key.data());
  for (uint64_t counter : {uint64_t{0}, uint64_t{1}, uint64_t{0x0123456789abcdef}}) {
    const uint32_t len = 1000 + 7 * static_cast<uint32_t>(counter & 0xff);
    Bytes pt = randomBytes(rng, len), ct(len);
    uint8_t iv[kIvBytes], hdr[4];
    recordNonce(counter, iv);
    recordHeader(len, hdr);
    LaunchParams p;
    makeLaunchParams(k.host, iv, hdr, 4, len, p);
    Bytes tag = emulate<Mode::Seal>(k, p, 2, pt.data(), ct.data());
    ASSERT_TRUE(gcmOpen(key.data(), counter, hdr, 4, ct.data(), len, tag.data())) << counter;
    EXPECT_EQ(ct, pt);

    Bytes cpuCt(len), cpuTag(kTagBytes);
    Piece piece{pt.data(), len};
    gcmSeal(key.data(), counter, hdr, 4, &piece, 1, cpuCt.data(), cpuTag.data());
    EXPECT_EQ(emulate<Mode::Hash>(k, p, 3, cpuCt.data(), nullptr), cpuTag) << counter;
    Bytes back(len);
    emulate<Mode::Decrypt>(k, p, 3, cpuCt.data(), back.data());
    EXPECT_EQ(back, pt);
  }
}

TEST(GpuAesGcmCore, LaunchParamsRefuseWhatGcmCannotCarry) {
  Bytes key(32, 1), iv(12, 2), aad(kMaxAadBytes + 1, 3);
  HostKey k;
  expandKey(key.data(), k);
  LaunchParams p;
  EXPECT_THROW(makeLaunchParams(k, iv.data(), aad.data(), aad.size(), 16, p), gdr::InvalidArgument);
  EXPECT_THROW(makeLaunchParams(k, iv.data(), nullptr, 4, 16, p), gdr::InvalidArgument);
  EXPECT_THROW(makeLaunchParams(k, iv.data(), nullptr, 0, kMaxLen + 1, p), gdr::InvalidArgument);
  EXPECT_NO_THROW(makeLaunchParams(k, iv.data(), nullptr, 0, kMaxLen, p));
  EXPECT_EQ(p.blocks, (kMaxLen + 15) / 16);
}

}  // namespace

// GPU AES-256-GCM against OpenSSL on the same keys, nonces and data: the
// ciphertext and the tag must be identical, byte for byte, for every length
// (empty, partial blocks, 1 MiB + 3, 64 MiB), alignment and AAD; the spec's
// test cases; open round-trips, and a flipped bit in the ciphertext, the tag
// or the AAD makes open report a forgery and deliver zeros, never plaintext;
// chunks interoperate with the CPU AEAD (aead.h) both ways. Without a GPU it
// prints "skipped: no CUDA device" and exits 77 (a CTest skip).
//
// Every copy and memset of a test goes on the test's stream: that stream is
// cudaStreamNonBlocking, so work on the default stream (cudaMemcpy,
// cudaMemset) would not be ordered before the kernels; a cudaMemcpy from
// pageable memory may even return before its data lands.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "crypto_gpu/gcm_reference.h"
#include "security/aead.h"
#include "security/gpu_aes_gcm.h"

namespace {

using namespace gdr::security;
using gcmref::Bytes;

#define CUDA_OK(x) ASSERT_EQ((x), cudaSuccess) << #x

std::mt19937_64 gRng(20240611);

Bytes randomBytes(size_t n) {
  Bytes b(n);
  for (size_t i = 0; i < n; i += 8) {
    uint64_t r = gRng();
    std::memcpy(b.data() + i, &r, std::min<size_t>(8, n - i));
  }
  return b;
}

// Device memory with `offset` bytes before the data, to try misaligned
// buffers. put/fill are ordered on `s`; get waits for `s`, then copies.
struct DevBuf {
  uint8_t* base = nullptr;
  uint8_t* p = nullptr;
  size_t n = 0;
  cudaStream_t s;
  DevBuf(size_t bytes, cudaStream_t stream, size_t offset = 0) : n(bytes), s(stream) {
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&base), bytes + offset + 16), cudaSuccess);
    p = base + offset;
  }
  ~DevBuf() { cudaFree(base); }
  void put(const Bytes& b) {
    EXPECT_EQ(cudaMemcpyAsync(p, b.data(), b.size(), cudaMemcpyHostToDevice, s), cudaSuccess);
  }
  void fill(int byte, size_t bytes) { EXPECT_EQ(cudaMemsetAsync(p, byte, bytes, s), cudaSuccess); }
  Bytes get(size_t bytes) const {
    Bytes b(bytes);
    EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(b.data(), p, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    return b;
  }
};

// Equal, or where and how not: the first differing byte, how many differ,
// and whether `got` looks like a known wrong answer.
::testing::AssertionResult same(const Bytes& got, const Bytes& want, const Bytes* ct = nullptr) {
  if (got == want) return ::testing::AssertionSuccess();
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "size " << got.size() << ", want " << want.size();
  size_t first = got.size(), count = 0;
  bool zeros = true, untouched = true;
  for (size_t i = 0; i < got.size(); ++i) {
    zeros = zeros && got[i] == 0;
    untouched = untouched && got[i] == 0xa5;
    if (got[i] == want[i]) continue;
    if (first == got.size()) first = i;
    ++count;
  }
  auto r = ::testing::AssertionFailure();
  r << count << " of " << got.size() << " bytes differ, the first at " << first << " (got "
    << int(got[first]) << ", want " << int(want[first]) << ")";
  if (zeros) r << "; got all zeros";
  if (untouched) r << "; got the 0xa5 fill (never written)";
  if (ct && got == *ct) r << "; got the ciphertext";
  return r;
}

class GpuAesGcm : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess); }
  void TearDown() override { cudaStreamDestroy(stream); }

  // Seals on the GPU; returns ciphertext || tag.
  Bytes seal(const GpuGcmKey& key, const Bytes& iv, const Bytes& aad, const Bytes& pt, size_t offset = 0,
             bool inPlace = false) {
    DevBuf in(pt.size(), stream, offset), out(pt.size(), stream, offset ? offset + 3 : 0), tag(16, stream);
    in.put(pt);
    uint8_t* dst = inPlace ? in.p : out.p;
    EXPECT_EQ(gpuAesGcmSeal(key, iv.data(), aad.data(), aad.size(), in.p, dst, pt.size(), tag.p, scratch, stream),
              cudaSuccess);
    Bytes r = (inPlace ? in : out).get(pt.size()), t = tag.get(16);
    r.insert(r.end(), t.begin(), t.end());
    return r;
  }

  // Opens on the GPU; returns the status and fills `pt`.
  uint32_t open(const GpuGcmKey& key, const Bytes& iv, const Bytes& aad, const Bytes& ct, const Bytes& tag,
                Bytes& pt, bool inPlace = false) {
    DevBuf in(ct.size(), stream), out(ct.size(), stream), t(16, stream), status(4, stream);
    in.put(ct);
    t.put(tag);
    out.fill(0xa5, ct.size());  // so "zeros" is a real write
    status.fill(0, 4);
    uint8_t* dst = inPlace ? in.p : out.p;
    EXPECT_EQ(gpuAesGcmOpen(key, iv.data(), aad.data(), aad.size(), in.p, dst, ct.size(), t.p, scratch,
                            reinterpret_cast<uint32_t*>(status.p), stream),
              cudaSuccess);
    pt = (inPlace ? in : out).get(ct.size());
    uint32_t st = 0, internal = 0;
    EXPECT_EQ(cudaMemcpy(&st, status.p, 4, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(&internal, scratch.status(), 4, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(st, internal);
    return st;
  }

  cudaStream_t stream = nullptr;
  GpuGcmScratch scratch;
};

Bytes reference(const Bytes& key, const Bytes& iv, const Bytes& aad, const Bytes& pt) {
  Bytes r(pt.size() + 16);
  gcmref::opensslSeal(key.data(), iv.data(), aad.data(), aad.size(), pt.data(), pt.size(), r.data(),
                      r.data() + pt.size());
  return r;
}

std::string where(size_t len, size_t aad, size_t offset, bool inPlace) {
  return "len " + std::to_string(len) + " aad " + std::to_string(aad) + " offset " + std::to_string(offset) +
         (inPlace ? " in place" : "");
}

TEST_F(GpuAesGcm, SealIsIdenticalToOpenSsl) {
  const size_t lens[] = {0, 1, 15, 16, 17, 4095, 65536, (1u << 20) + 3, size_t{64} << 20};
  const bool quick = std::getenv("GDR_CRYPTO_TEST_QUICK") != nullptr;  // for compute-sanitizer
  for (size_t len : lens) {
    if (quick && len > (size_t{2} << 20)) continue;
    Bytes key = randomBytes(32), iv = randomBytes(12), pt = randomBytes(len);
    GpuGcmKey k(key.data());
    for (size_t aadLen : {size_t{0}, size_t{4}, size_t{64}}) {
      Bytes aad = randomBytes(aadLen), want = reference(key, iv, aad, pt);
      EXPECT_TRUE(same(seal(k, iv, aad, pt), want)) << where(len, aadLen, 0, false);
      if (len > (size_t{16} << 20)) continue;  // the slow paths on the smaller sizes only
      EXPECT_TRUE(same(seal(k, iv, aad, pt, 1), want)) << where(len, aadLen, 1, false);
      EXPECT_TRUE(same(seal(k, iv, aad, pt, 0, true), want)) << where(len, aadLen, 0, true);
    }
  }
}

TEST_F(GpuAesGcm, SpecTestCases) {
  for (const auto& v : gcmref::specVectors()) {
    Bytes key = gcmref::hex(v.key), iv = gcmref::hex(v.iv), aad = gcmref::hex(v.aad), pt = gcmref::hex(v.pt);
    GpuGcmKey k(key.data());
    Bytes want = gcmref::hex(v.ct), tag = gcmref::hex(v.tag);
    want.insert(want.end(), tag.begin(), tag.end());
    EXPECT_TRUE(same(seal(k, iv, aad, pt), want)) << v.name;
    Bytes back;
    EXPECT_EQ(open(k, iv, aad, gcmref::hex(v.ct), tag, back), kGcmAuthentic) << v.name;
    EXPECT_TRUE(same(back, pt)) << v.name;
  }
}

TEST_F(GpuAesGcm, OpenRoundTripsAndRefusesEveryFlippedBit) {
  for (size_t len : {size_t{1}, size_t{4095}, (size_t{1} << 20) + 3}) {
    Bytes key = randomBytes(32), iv = randomBytes(12), aad = randomBytes(4), pt = randomBytes(len);
    GpuGcmKey k(key.data());
    Bytes sealed = seal(k, iv, aad, pt);
    // If the seal is wrong, an open can verify and still not give `pt` back.
    EXPECT_TRUE(same(sealed, reference(key, iv, aad, pt))) << "seal, len " << len;
    Bytes ct(sealed.begin(), sealed.begin() + len), tag(sealed.begin() + len, sealed.end()), back;
    ASSERT_EQ(open(k, iv, aad, ct, tag, back), kGcmAuthentic) << len;
    EXPECT_TRUE(same(back, pt, &ct)) << "len " << len;
    ASSERT_EQ(open(k, iv, aad, ct, tag, back, true), kGcmAuthentic) << len;
    EXPECT_TRUE(same(back, pt, &ct)) << "len " << len << " in place";

    const Bytes zeros(len, 0);
    for (size_t at : {size_t{0}, len / 2, len - 1}) {
      Bytes bad = ct;
      bad[at] ^= 0x04;
      EXPECT_EQ(open(k, iv, aad, bad, tag, back), kGcmForged) << len << " ciphertext byte " << at;
      EXPECT_TRUE(same(back, zeros)) << len << " ciphertext byte " << at;
      EXPECT_EQ(open(k, iv, aad, bad, tag, back, true), kGcmForged) << len << " in place";
      EXPECT_TRUE(same(back, zeros)) << len << " in place";
    }
    for (size_t at : {size_t{0}, size_t{15}}) {
      Bytes badTag = tag;
      badTag[at] ^= 0x80;
      EXPECT_EQ(open(k, iv, aad, ct, badTag, back), kGcmForged) << len << " tag byte " << at;
      EXPECT_TRUE(same(back, zeros)) << len << " tag byte " << at;
    }
    Bytes badAad = aad, badIv = iv;
    badAad[3] ^= 1;
    badIv[11] ^= 1;
    EXPECT_EQ(open(k, iv, badAad, ct, tag, back), kGcmForged) << len << " AAD";
    EXPECT_EQ(open(k, badIv, aad, ct, tag, back), kGcmForged) << len << " nonce";
    EXPECT_TRUE(same(back, zeros)) << len << " nonce";
    // A good chunk after refused ones opens: the scratch is left ready.
    ASSERT_EQ(open(k, iv, aad, ct, tag, back), kGcmAuthentic) << len;
    EXPECT_TRUE(same(back, pt, &ct)) << "len " << len << ", after refused ones";
  }
}

// A stream of chunks, each under its counter's nonce, through one scratch and
// one stream without synchronising between them, and checked by the CPU AEAD.
TEST_F(GpuAesGcm, ChunkStreamOpensWithTheCpuAeadAndBack) {
  const int kChunks = 12;
  const size_t kChunk = (size_t{256} << 10) + 5;
  Bytes key = randomBytes(32), pt = randomBytes(kChunk * kChunks);
  GpuGcmKey k(key.data());
  DevBuf in(pt.size(), stream), out(pt.size(), stream), tags(16 * kChunks, stream);
  in.put(pt);
  for (int c = 0; c < kChunks; ++c) {
    uint8_t iv[12], hdr[4];
    recordNonce(c, iv);
    recordHeader(static_cast<uint32_t>(kChunk), hdr);
    ASSERT_EQ(gpuAesGcmSeal(k, iv, hdr, 4, in.p + c * kChunk, out.p + c * kChunk, kChunk, tags.p + 16 * c, scratch,
                            stream),
              cudaSuccess);
  }
  Bytes ct = out.get(pt.size()), tag = tags.get(16 * kChunks);
  for (int c = 0; c < kChunks; ++c) {
    uint8_t hdr[4];
    recordHeader(static_cast<uint32_t>(kChunk), hdr);
    ASSERT_TRUE(gcmOpen(key.data(), c, hdr, 4, ct.data() + c * kChunk, kChunk, tag.data() + 16 * c)) << c;
    EXPECT_EQ(std::memcmp(ct.data() + c * kChunk, pt.data() + c * kChunk, kChunk), 0) << c;
  }
  // The CPU seals, the GPU opens.
  Bytes cpuCt(kChunk), cpuTag(16), back;
  uint8_t hdr[4];
  recordHeader(static_cast<uint32_t>(kChunk), hdr);
  Piece piece{pt.data(), kChunk};
  gcmSeal(key.data(), 7, hdr, 4, &piece, 1, cpuCt.data(), cpuTag.data());
  Bytes iv(12);
  recordNonce(7, iv.data());
  EXPECT_EQ(open(k, iv, Bytes(hdr, hdr + 4), cpuCt, cpuTag, back), kGcmAuthentic);
  EXPECT_EQ(std::memcmp(back.data(), pt.data(), kChunk), 0);
}

TEST_F(GpuAesGcm, BadArgumentsAreRefused) {
  Bytes key = randomBytes(32), iv = randomBytes(12), aad(65, 0);
  GpuGcmKey k(key.data());
  DevBuf buf(64, stream), tag(16, stream);
  EXPECT_THROW(gpuAesGcmSeal(k, iv.data(), aad.data(), aad.size(), buf.p, buf.p, 64, tag.p, scratch, stream),
               gdr::InvalidArgument);
  EXPECT_THROW(gpuAesGcmSeal(k, iv.data(), nullptr, 0, nullptr, buf.p, 64, tag.p, scratch, stream),
               gdr::InvalidArgument);
  EXPECT_THROW(gpuAesGcmOpen(k, iv.data(), nullptr, 0, buf.p, buf.p, 64, nullptr, scratch, nullptr, stream),
               gdr::InvalidArgument);
  CUDA_OK(cudaStreamSynchronize(stream));
}

}  // namespace

int main(int argc, char** argv) {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("skipped: no CUDA device\n");
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

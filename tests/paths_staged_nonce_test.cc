// Keys and nonces of rows sealed on the GPU (paths/staged/nonce.h): the
// layout both ends compute, distinct keys per origin and per job, refusal
// of ranks a nonce cannot name and of a sequence that would wrap.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>

#include "core/error.h"
#include "paths/staged/nonce.h"

namespace gdr::paths::staged {

using security::generateJobSecret;
using security::JobSecret;
using security::kKeyBytes;

namespace {

TEST(StagedNonce, LayoutIsDomainDestSequenceIndex) {
  uint8_t iv[12];
  sealNonce({kSealP2P, 0x123456, 0x01020304u, 0xA0B0C0D0u}, iv);
  const uint8_t want[12] = {2, 0x12, 0x34, 0x56, 1, 2, 3, 4, 0xA0, 0xB0, 0xC0, 0xD0};
  EXPECT_EQ(std::memcmp(iv, want, 12), 0);
  sealNonce({kSealCollective, kSealAllRanks, 0, 0}, iv);
  const uint8_t all[12] = {1, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(std::memcmp(iv, all, 12), 0);
}

TEST(StagedNonce, DistinctPlacesGetDistinctNonces) {
  std::set<std::string> seen;
  for (auto dom : {kSealCollective, kSealP2P})
    for (int dest : {kSealAllRanks, 0, 1, 7})
      for (uint32_t seq : {0u, 1u, 99u})
        for (uint32_t idx : {0u, 1u, 65536u}) {
          uint8_t iv[12];
          sealNonce({dom, dest, seq, idx}, iv);
          EXPECT_TRUE(seen.insert(std::string(reinterpret_cast<char*>(iv), 12)).second);
        }
}

TEST(StagedNonce, RanksANonceCannotNameAreRefused) {
  uint8_t iv[12];
  EXPECT_THROW(sealNonce({kSealP2P, -2, 0, 0}, iv), InvalidArgument);
  EXPECT_THROW(sealNonce({kSealP2P, kSealMaxRank + 1, 0, 0}, iv), InvalidArgument);
  JobSecret s{};
  uint8_t k[kKeyBytes];
  EXPECT_THROW(sealOriginKey(s, -1, k), InvalidArgument);
}

TEST(StagedNonce, KeysDifferPerOriginAndPerJob) {
  JobSecret a = generateJobSecret(), b = a;
  b.jobId[0] ^= 1;  // same secret, another communicator
  uint8_t k0[kKeyBytes], k1[kKeyBytes], k0again[kKeyBytes], kb[kKeyBytes];
  sealOriginKey(a, 0, k0);
  sealOriginKey(a, 1, k1);
  sealOriginKey(a, 0, k0again);
  sealOriginKey(b, 0, kb);
  EXPECT_EQ(std::memcmp(k0, k0again, kKeyBytes), 0);
  EXPECT_NE(std::memcmp(k0, k1, kKeyBytes), 0);
  EXPECT_NE(std::memcmp(k0, kb, kKeyBytes), 0);
}

TEST(StagedNonce, ASequenceThatWouldWrapIsRefused) {
  uint32_t next = UINT32_MAX - 1;
  EXPECT_EQ(takeSealSeq(next), UINT32_MAX - 1);
  EXPECT_THROW(takeSealSeq(next), Error);
}

}  // namespace
}  // namespace gdr::paths::staged

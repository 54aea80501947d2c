// Chunk-size policy, RoCE GID choice and the GPUDirect decision: pure logic
// of the verbs transport, driven with made-up measurements and checks.
#if GDR_HAVE_IB
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "transport/ib/chunk_policy.h"
#include "transport/ib/gdr_mode.h"
#include "transport/ib/ib_device.h"

namespace gdr::transport::ib {
namespace {

TEST(IbChunkPolicy, FixedIsAlignedAndNeverMoves) {
  ChunkPolicy p(4096);
  EXPECT_FALSE(p.adaptive());
  EXPECT_EQ(p.chunk(), 4096u);
  for (int i = 0; i < 1000; ++i) p.onComplete(4096, i * 10.0, 1.0);
  EXPECT_EQ(p.chunk(), 4096u);
  EXPECT_EQ(ChunkPolicy(5000).chunk(), 8192u);  // rounded up to 4 KiB
}

TEST(IbChunkPolicy, AdaptiveStaysInRangeAndAligned) {
  std::mt19937_64 rng(std::random_device{}());
  ChunkPolicy p;
  double t = 0;
  for (int i = 0; i < 20000; ++i) {
    t += 1 + static_cast<double>(rng() % 1000);
    p.onComplete(p.chunk(), t, static_cast<double>(rng() % 101) / 100);
    ASSERT_GE(p.chunk(), ChunkPolicy::kMin);
    ASSERT_LE(p.chunk(), ChunkPolicy::kMax);
    ASSERT_EQ(p.chunk() % ChunkPolicy::kAlign, 0u);
  }
}

// A link whose per-chunk cost is fixed overhead + bytes/bandwidth: bigger
// chunks are always better, so the policy must end at the maximum.
TEST(IbChunkPolicy, ClimbsWhenBiggerChunksAreFaster) {
  ChunkPolicy p;
  double t = 0;
  for (int i = 0; i < 2000; ++i) {
    t += 50.0 + static_cast<double>(p.chunk()) / 1000.0;
    p.onComplete(p.chunk(), t, 0.5);
  }
  EXPECT_EQ(p.chunk(), ChunkPolicy::kMax);
}

// A link whose throughput collapses above 128 KiB (say, a cache or MTU
// effect): the policy must leave the large sizes and settle low.
TEST(IbChunkPolicy, BacksOffWhenBiggerChunksAreSlower) {
  ChunkPolicy p(0, ChunkPolicy::kMax);
  double t = 0;
  int atOrBelow128 = 0;
  for (int i = 0; i < 4000; ++i) {
    double rate = p.chunk() <= 128 * 1024 ? 1000.0 : 200.0;  // bytes per us
    t += static_cast<double>(p.chunk()) / rate;
    p.onComplete(p.chunk(), t, 0.5);
    if (i > 2000) atOrBelow128 += p.chunk() <= 128 * 1024;
  }
  EXPECT_GT(atOrBelow128, 1000);  // most of the late windows run at the fast sizes
}

TEST(IbChunkPolicy, ReceiverBoundStepsUp) {
  ChunkPolicy p(0, ChunkPolicy::kMin);
  double t = 0;
  for (int i = 0; i < 200; ++i) p.onComplete(p.chunk(), t += 100, 1.0);
  EXPECT_EQ(p.chunk(), ChunkPolicy::kMax);
}

ibv_gid v4(uint8_t last) {
  ibv_gid g{};
  g.raw[10] = 0xff;
  g.raw[11] = 0xff;
  g.raw[12] = 192;
  g.raw[13] = 168;
  g.raw[14] = 77;
  g.raw[15] = last;
  return g;
}

TEST(IbGid, PicksFirstIpv4MappedRoceV2) {
  // 0: link-local v1, 1: IPv4 v1, 2: IPv4 v2, 3: IPv4 v2
  auto query = [](int i, ibv_gid* g) {
    if (i == 0) {
      std::memset(g, 0, sizeof(*g));
      g->raw[0] = 0xfe;
      g->raw[1] = 0x80;
    } else {
      *g = v4(static_cast<uint8_t>(i));
    }
    return i < 4;
  };
  auto type = [](int i) { return std::string(i <= 1 ? "IB/RoCE v1" : "RoCE v2"); };
  EXPECT_EQ(pickRoceGid(16, query, type), 2);
  // Types unknown (no sysfs): the first IPv4-mapped entry.
  EXPECT_EQ(pickRoceGid(16, query, [](int) { return std::string(); }), 1);
  // Nothing IPv4-mapped.
  EXPECT_EQ(pickRoceGid(1, query, type), -1);
}

TEST(IbGdrDecision, EveryPath) {
  GdrChecks c;
  c.cudaBuilt = c.gpuPresent = true;
  c.nicDmaBuf = c.gpuDmaBuf = true;
  EXPECT_EQ(decideGdr(c).mode, GdrMode::DmaBuf);
  c.gpuDmaBuf = false;
  EXPECT_EQ(decideGdr(c).mode, GdrMode::Staged);
  c.peerMemLoaded = true;
  EXPECT_EQ(decideGdr(c).mode, GdrMode::PeerMem);
  c.forced = 0;
  GdrDecision d = decideGdr(c);
  EXPECT_EQ(d.mode, GdrMode::Staged);
  EXPECT_NE(d.reason.find("GDR_NET_GDR=0"), std::string::npos);
  c.forced = -1;
  c.pathAllowed = false;
  EXPECT_EQ(decideGdr(c).mode, GdrMode::Staged);
  c.forced = 1;  // forcing overrides the topology's advice, not missing support
  EXPECT_EQ(decideGdr(c).mode, GdrMode::PeerMem);
  c.peerMemLoaded = false;
  EXPECT_EQ(decideGdr(c).mode, GdrMode::Staged);
  GdrChecks none;
  d = decideGdr(none);
  EXPECT_EQ(d.mode, GdrMode::Staged);
  EXPECT_NE(d.reason.find("no CUDA"), std::string::npos);
}

}  // namespace
}  // namespace gdr::transport::ib
#endif  // GDR_HAVE_IB

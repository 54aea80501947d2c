// The GPUDirect path's plans (paths/direct/plan.h), checked on the host with
// fake device pointers: every rank's messages pair up with its peers' (same
// peer, same size, the k-th send to a peer meets the peer's k-th receive),
// the destinations cover the output exactly, and a reduction reads the ranks'
// contributions in rank order.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "paths/direct/plan.h"

namespace gdr::paths::direct {
namespace {

struct Bufs {  // one rank's buffers: fake addresses, never dereferenced
  std::vector<char> in, out, scratch;
};

CollCall callOf(CollKind k, Bufs& b, size_t count, int root = 0, bool inPlace = false) {
  CollCall c;
  c.kind = k;
  c.sendbuf = inPlace ? b.out.data() : b.in.data();
  c.recvbuf = b.out.data();
  c.count = count;
  c.type = gdrFloat32;
  c.op = gdrSum;
  c.root = root;
  c.inPlace = inPlace;
  return c;
}

// Pairs rank a's sends to b with b's receives from a, in order, and checks
// the sizes match. Returns the bytes each rank receives.
std::vector<size_t> checkPairs(const std::vector<Plan>& plans) {
  const int n = static_cast<int>(plans.size());
  std::vector<size_t> recvBytes(n, 0);
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      std::vector<size_t> sends, recvs;
      for (const Msg& m : plans[a].msgs)
        if (m.isSend && m.peer == b) sends.push_back(m.bytes);
      for (const Msg& m : plans[b].msgs)
        if (!m.isSend && m.peer == a) recvs.push_back(m.bytes);
      EXPECT_EQ(sends, recvs) << "rank " << a << " -> rank " << b;
      for (size_t r : recvs) recvBytes[b] += r;
    }
  for (int a = 0; a < n; ++a)
    for (const Msg& m : plans[a].msgs) EXPECT_NE(m.peer, a) << "a message to oneself";
  return recvBytes;
}

TEST(DirectPlan, ExchangesPairUpAndFillTheOutput) {
  for (int n : {2, 3, 5}) {
    const size_t count = 7, B = count * 4;
    std::vector<Bufs> bufs(n);
    for (auto& b : bufs) {
      b.in.resize(n * B);
      b.out.resize(n * B);
    }
    for (CollKind k :
         {CollKind::AllGather, CollKind::AllToAll, CollKind::Broadcast, CollKind::Barrier}) {
      std::vector<Plan> plans;
      for (int r = 0; r < n; ++r) {
        CollCall c = callOf(k, bufs[r], k == CollKind::Barrier ? 0 : count, /*root=*/n - 1);
        EXPECT_EQ(scratchBytes(c, r, n), 0u);
        plans.push_back(planCollective(c, r, n, nullptr));
        EXPECT_FALSE(plans.back().reduces);
      }
      std::vector<size_t> got = checkPairs(plans);
      for (int r = 0; r < n; ++r) {
        size_t want = 0, local = 0;
        for (const LocalCopy& lc : plans[r].before) local += lc.bytes;
        if (k == CollKind::AllGather || k == CollKind::AllToAll) {
          want = (n - 1) * B;
          EXPECT_EQ(local, B) << "the own block, rank " << r;
          // Every output block is written exactly once.
          std::vector<int> hits(n, 0);
          for (const Msg& m : plans[r].msgs)
            if (!m.isSend) ++hits[(m.buf - bufs[r].out.data()) / B];
          for (const LocalCopy& lc : plans[r].before) ++hits[(lc.dst - bufs[r].out.data()) / B];
          for (int p = 0; p < n; ++p) EXPECT_EQ(hits[p], 1) << collName(k) << " block " << p;
        } else if (k == CollKind::Broadcast) {
          want = r == n - 1 ? 0 : B;
        }
        EXPECT_EQ(got[r], want) << collName(k) << " n=" << n << " rank " << r;
      }
    }
  }
}

// One-shot reductions: reduce at any rank count, all-reduce and
// reduce-scatter at two ranks (beyond, the ring: paths_direct_ring_test.cc).
TEST(DirectPlan, ReductionsReadEveryRankInRankOrder) {
  for (int n : {2, 4}) {
    const size_t count = 5, B = count * 4;
    std::vector<Bufs> bufs(n);
    for (auto& b : bufs) {
      b.in.resize(n * B);
      b.out.resize(n * B);
      b.scratch.resize(n * B);
    }
    for (CollKind k : {CollKind::AllReduce, CollKind::ReduceScatter, CollKind::Reduce}) {
      if (n > 2 && k != CollKind::Reduce) continue;
      std::vector<Plan> plans;
      const int root = n - 1;
      for (int r = 0; r < n; ++r) {
        CollCall c = callOf(k, bufs[r], count, root);
        const size_t need = scratchBytes(c, r, n);
        EXPECT_EQ(need, k == CollKind::Reduce && r != root ? 0u : (n - 1) * B);
        plans.push_back(planCollective(c, r, n, bufs[r].scratch.data()));
      }
      checkPairs(plans);
      for (int r = 0; r < n; ++r) {
        const Plan& p = plans[r];
        const bool owns = k != CollKind::Reduce || r == root;
        ASSERT_EQ(p.reduces, owns) << collName(k) << " rank " << r;
        if (!owns) continue;
        ASSERT_EQ(p.reduction.srcs.size(), static_cast<size_t>(n));
        const char* mine = bufs[r].in.data() + (k == CollKind::ReduceScatter ? r * B : 0);
        EXPECT_EQ(p.reduction.srcs[r], mine);
        // Rank q's contribution lands where the plan reads it: the receive
        // from q writes srcs[q].
        for (const Msg& m : p.msgs)
          if (!m.isSend) {
            EXPECT_EQ(p.reduction.srcs[m.peer], m.buf) << collName(k) << " from " << m.peer;
          }
        EXPECT_EQ(p.reduction.dst, bufs[r].out.data());
        EXPECT_EQ(p.reduction.count, count);
      }
    }
  }
}

TEST(DirectPlan, InPlaceAllToAllSendsACopy) {
  const int n = 3;
  const size_t count = 4, B = count * 4;
  Bufs b;
  b.out.resize(n * B);
  b.scratch.resize(n * B);
  CollCall c = callOf(CollKind::AllToAll, b, count, 0, /*inPlace=*/true);
  ASSERT_EQ(scratchBytes(c, 1, n), n * B);
  Plan p = planCollective(c, 1, n, b.scratch.data());
  ASSERT_FALSE(p.before.empty());
  EXPECT_EQ(p.before[0].dst, b.scratch.data());
  EXPECT_EQ(p.before[0].src, b.out.data());
  for (const Msg& m : p.msgs)
    if (m.isSend) {
      EXPECT_GE(m.buf, b.scratch.data()) << "sent from the output it overwrites";
    }
}

TEST(DirectPlan, AllGatherBlockAtStartMovesFirst) {
  const int n = 2;
  const size_t count = 3, B = count * 4;
  Bufs b;
  b.out.resize(n * B);
  CollCall c = callOf(CollKind::AllGather, b, count, 0, /*inPlace=*/true);
  c.blockAtStart = true;
  Plan p = planCollective(c, 1, n, nullptr);
  ASSERT_EQ(p.before.size(), 1u);
  EXPECT_EQ(p.before[0].dst, b.out.data() + B);
  EXPECT_EQ(p.before[0].src, b.out.data());
  for (const Msg& m : p.msgs)
    if (m.isSend) {
      EXPECT_EQ(m.buf, b.out.data() + B);
    }
}

}  // namespace
}  // namespace gdr::paths::direct

// The verbs connection's lanes (qp_lanes.h): QPs over ports, placement by a
// hash of (peer, sequence), the receiver's reading of an immediate, and the
// failover rules, checked by simulating sender, QPs and receiver together
// under random interleavings with a QP failing mid-transfer.
#if GDR_HAVE_IB
#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <vector>

#include "transport/ib/ib_wire.h"
#include "transport/ib/ib_wr_id.h"
#include "transport/ib/qp_lanes.h"

namespace gdr::transport::ib {
namespace {

TEST(IbLanes, QpsGoRoundThePorts) {
  QpLanes a(4, 2);
  EXPECT_EQ(a.port(0), 0);
  EXPECT_EQ(a.port(1), 1);
  EXPECT_EQ(a.port(2), 0);
  EXPECT_EQ(a.port(3), 1);
  QpLanes b(3, 1);
  for (int q = 0; q < 3; ++q) EXPECT_EQ(b.port(q), 0);
  QpLanes c(1, 2);  // fewer QPs than ports: the first port only
  EXPECT_EQ(c.port(0), 0);
}

TEST(IbLanes, AllLiveGoesRoundEveryRunOfChunks) {
  QpLanes l(4, 2);
  // Any 4 consecutive chunks: one on each QP, so two on each port.
  for (uint64_t start : {0ull, 1ull, 12345ull, (1ull << 31) - 2})
    for (uint64_t peer : {0ull, 3ull, 17ull}) {
      std::vector<int> n(4, 0), perPort(2, 0);
      for (uint64_t s = start; s < start + 4; ++s) {
        ++n[l.pick(peer, s)];
        ++perPort[l.port(l.pick(peer, s))];
      }
      for (int q = 0; q < 4; ++q) EXPECT_EQ(n[q], 1) << "peer " << peer << " from " << start;
      EXPECT_EQ(perPort[0], 2);
    }
  // Peers start at different QPs.
  std::vector<int> first(4, 0);
  for (uint64_t peer = 0; peer < 64; ++peer) ++first[l.pick(peer, 0)];
  for (int q = 0; q < 4; ++q) EXPECT_GT(first[q], 4) << "QP " << q;
}

TEST(IbLanes, ADownQpsShareGoesEvenlyToTheOthersOnly) {
  QpLanes all(4, 2), l(4, 2);
  l.markDown(1);
  std::vector<int> moved(4, 0);
  for (uint64_t s = 0; s < 40000; ++s) {
    const int before = all.pick(5, s), now = l.pick(5, s);
    ASSERT_NE(now, 1);
    ASSERT_GE(now, 0);
    if (before != 1)
      ASSERT_EQ(now, before) << "chunk " << s << " moved off a live QP";
    else
      ++moved[now];
  }
  for (int q : {0, 2, 3}) EXPECT_NEAR(moved[q], 10000 / 3, 400) << "QP " << q;
}

// QPs 1 and 3 stand for a second device whose congestion window is full.
TEST(IbLanes, AChunkWhoseQpHasNoRoomGoesToTheNextQpThatHas) {
  QpLanes l(4, 2);
  const auto all = [](int) { return true; };
  const auto evenOnly = [](int q) { return q % 2 == 0; };
  const auto none = [](int) { return false; };
  for (uint64_t s = 0; s < 64; ++s) {
    const int q0 = l.pick(7, s);
    EXPECT_EQ(l.pickWithRoom(7, s, all), q0) << "chunk " << s << " moved with room everywhere";
    EXPECT_EQ(l.pickWithRoom(7, s, evenOnly), q0 % 2 ? (q0 + 1) % 4 : q0) << "chunk " << s;
    EXPECT_EQ(l.pickWithRoom(7, s, none), q0) << "chunk " << s << ": nowhere to go, it waits";
  }
  // A down QP is never chosen, room or not.
  l.markDown(2);
  for (uint64_t s = 0; s < 64; ++s) {
    const int q = l.pickWithRoom(7, s, evenOnly);
    EXPECT_NE(q, 2);
    if (l.pick(7, s) % 2) {
      EXPECT_EQ(q, 0) << "chunk " << s;
    }
  }
}

TEST(IbLanes, DownIsReportedOncePerPort) {
  QpLanes l(4, 2);
  EXPECT_TRUE(l.markDown(1));   // port 1's first
  EXPECT_FALSE(l.markDown(3));  // port 1 again
  EXPECT_FALSE(l.markDown(1));  // already down
  EXPECT_EQ(l.liveCount(), 2);
  EXPECT_EQ(l.control(), 0);
  EXPECT_TRUE(l.markDown(0));  // port 0's first
  EXPECT_EQ(l.control(), 2);
  l.markDown(2);
  EXPECT_EQ(l.liveCount(), 0);
  EXPECT_EQ(l.pick(1, 7), -1);
  EXPECT_EQ(l.control(), -1);
}

TEST(IbLanes, ImmediateFreshStaleOutside) {
  const uint32_t n = 8;
  EXPECT_EQ(classifyImm(100, 100, n).kind, ImmSeq::kFresh);
  EXPECT_EQ(classifyImm(107, 100, n).seq, 107u);
  EXPECT_EQ(classifyImm(108, 100, n).kind, ImmSeq::kOutside);  // beyond the window
  EXPECT_EQ(classifyImm(99, 100, n).kind, ImmSeq::kStale);
  EXPECT_EQ(classifyImm(84, 100, n).kind, ImmSeq::kStale);  // two windows behind
  EXPECT_EQ(classifyImm(83, 100, n).kind, ImmSeq::kOutside);
  EXPECT_EQ(classifyImm(kImmSeqMask, 0, n).kind, ImmSeq::kOutside);  // nothing before 0
  // The 31 bits wrap: sequence 2^31 + 2 travels as 2.
  const uint64_t r = (1ull << 31) - 1;
  ImmSeq f = classifyImm(2, r, n);
  EXPECT_EQ(f.kind, ImmSeq::kFresh);
  EXPECT_EQ(f.seq, (1ull << 31) + 2);
  EXPECT_EQ(classifyImm(static_cast<uint32_t>(r - 1) & kImmSeqMask, r, n).kind, ImmSeq::kStale);
}

// Sender, QPs and receiver of one direction, driven by a random schedule: a
// QP's writes land in order, their completions reach the sender later; once
// (at a random moment) a QP fails, and every write of it not yet completed
// at the sender completes in error, landed or not. The receiver must
// consume every chunk once, in order, with its own bytes in the slot.
struct FailoverSim {
  struct Write {
    uint64_t seq;
    bool resend;
  };
  static constexpr uint32_t kSlots = 4;
  QpLanes lanes{4, 2};
  ResendQueue rq;
  std::vector<std::deque<Write>> posted{4}, landed{4};  // per QP: not landed; landed, not completed
  uint64_t slot[kSlots] = {};
  bool arrived[kSlots] = {};
  uint64_t sseq = 0, consumed = 0, rseq = 0, total;
  int outside = 0, stale = 0, wrongBytes = 0;
  bool ignoreHold;  // the rule under test switched off: the sim must catch it

  FailoverSim(uint64_t n, bool ignore) : total(n), ignoreHold(ignore) {}

  void land(int q) {
    Write w = posted[q].front();
    posted[q].pop_front();
    slot[w.seq % kSlots] = w.seq;  // the write's bytes, then its immediate
    ImmSeq m = classifyImm(static_cast<uint32_t>(w.seq) & kImmSeqMask, rseq, kSlots);
    if (m.kind == ImmSeq::kOutside) ++outside;
    if (m.kind == ImmSeq::kStale) ++stale;
    if (m.kind == ImmSeq::kFresh) arrived[m.seq % kSlots] = true;
    landed[q].push_back(w);
  }
  void complete(int q) {
    rq.completed(landed[q].front().seq);
    landed[q].pop_front();
  }
  void fail(int q) {
    lanes.markDown(q);
    for (auto* d : {&landed[q], &posted[q]})
      for (const Write& w : *d) {
        rq.completed(w.seq);  // an errored resend is no longer in flight either
        rq.failed(w.seq);
      }
    landed[q].clear();
    posted[q].clear();
  }
  void consume() {
    while (arrived[rseq % kSlots]) {
      if (slot[rseq % kSlots] != rseq) ++wrongBytes;
      arrived[rseq % kSlots] = false;
      consumed = ++rseq;  // the credit word, seen at once
    }
  }
  void send() {
    while (!rq.empty()) {
      const uint64_t s = rq.front();
      if (s < consumed) {
        rq.dropped(s);  // delivered: its completion was lost with the QP
        continue;
      }
      posted[lanes.pick(1, s)].push_back({s, true});
      rq.resent(s);
    }
    if ((ignoreHold || !rq.holdsNew()) && sseq < total && sseq - consumed < kSlots) {
      posted[lanes.pick(1, sseq)].push_back({sseq, false});
      ++sseq;
    }
  }
  // Runs to the end; false when it stalls.
  bool run(std::mt19937& rng, int failAt) {
    for (int step = 0; step < 200000 && rseq < total; ++step) {
      if (step == failAt) fail(static_cast<int>(rng() % 4));
      const int q = static_cast<int>(rng() % 4);
      switch (rng() % 4) {
        case 0:
          if (!posted[q].empty()) land(q);
          break;
        case 1:
          if (!landed[q].empty()) complete(q);
          break;
        case 2:
          consume();
          break;
        default:
          send();
      }
    }
    return rseq == total;
  }
};

TEST(IbLanes, FailoverDeliversEveryChunkOnceInOrder) {
  std::mt19937 rng(std::random_device{}());
  int staleSeen = 0;
  for (int trial = 0; trial < 300; ++trial) {
    FailoverSim sim(200, false);
    const int failAt = static_cast<int>(rng() % 600);
    ASSERT_TRUE(sim.run(rng, failAt)) << "trial " << trial << " stalled at chunk " << sim.rseq;
    EXPECT_EQ(sim.outside, 0) << "trial " << trial;
    EXPECT_EQ(sim.wrongBytes, 0) << "trial " << trial;
    staleSeen += sim.stale;
  }
  EXPECT_GT(staleSeen, 0) << "no resend of a consumed chunk: the interleavings miss the hard case";
}

TEST(IbLanes, NewChunksDuringAResendCorruptASlot) {
  // The hold is what keeps a resent chunk and its slot's next chunk apart:
  // without it, some interleaving delivers wrong bytes.
  std::mt19937 rng(std::random_device{}());
  int bad = 0;
  for (int trial = 0; trial < 600 && !bad; ++trial) {
    FailoverSim sim(200, true);
    sim.run(rng, static_cast<int>(rng() % 600));
    bad += sim.wrongBytes + sim.outside;
  }
  EXPECT_GT(bad, 0);
}

}  // namespace
}  // namespace gdr::transport::ib
#endif

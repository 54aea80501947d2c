// The simulator must catch what it claims to catch: hand-written broken
// schedules, and every single-step deletion from every algorithm's real
// schedules.
#include "support/schedule_sim.h"

#include <gtest/gtest.h>

#include "collectives/schedule_common.h"

namespace gdr::coll {
namespace {

using detail::addCopy;
using detail::addRecv;
using detail::addRecvReduce;
using detail::addSend;
using detail::in;
using detail::out;
using detail::scratch;
using detail::Span;

CollArgs twoRankAllReduce(size_t count = 2) {
  CollArgs a;
  a.kind = CollKind::AllReduce;
  a.nranks = 2;
  a.count = count;
  return a;
}

std::string run(const CollArgs& base, const std::vector<Schedule>& s) {
  const std::vector<CollArgs> args = sim::forAllRanks(base);
  const std::string shape = sim::checkShape(args, s);
  return shape.empty() ? sim::verify(args, sim::simulate(args, s)) : shape;
}

// The textbook 2-rank all-reduce: swap and reduce.
std::vector<Schedule> swapAndReduce() {
  std::vector<Schedule> s(2);
  for (int r = 0; r < 2; ++r) {
    addSend(s[r], 1 - r, in(Span{0, 2}), 0);
    addRecvReduce(s[r], 1 - r, in(Span{0, 2}), out(Span{0, 2}), 0);
  }
  return s;
}

TEST(ScheduleSim, AcceptsACorrectSchedule) {
  EXPECT_EQ(run(twoRankAllReduce(), swapAndReduce()), "");
}

// In place, each rank's receive overwrites what its own send reads: fine
// with eager sends, a deadlock when a send holds its memory until received.
TEST(ScheduleSim, RendezvousCatchesReceivingUnderOwnSend) {
  CollArgs a = twoRankAllReduce();
  a.inPlace = true;
  const std::vector<CollArgs> args = sim::forAllRanks(a);
  EXPECT_EQ(sim::verify(args, sim::simulate(args, swapAndReduce(), false)), "");
  EXPECT_NE(sim::verify(args, sim::simulate(args, swapAndReduce(), true)).find("deadlock"),
            std::string::npos);
}

TEST(ScheduleSim, ReportsDeadlock) {
  std::vector<Schedule> s(2);
  for (int r = 0; r < 2; ++r) {
    addRecvReduce(s[r], 1 - r, in(Span{0, 2}), out(Span{0, 2}), 0);
    addSend(s[r], 1 - r, in(Span{0, 2}), 0);
  }
  EXPECT_NE(run(twoRankAllReduce(), s).find("deadlock"), std::string::npos);
}

TEST(ScheduleSim, ReportsUnreceivedMessages) {
  std::vector<Schedule> s = swapAndReduce();
  addSend(s[0], 1, in(Span{0, 1}), 1);
  EXPECT_NE(run(twoRankAllReduce(), s).find("never received"), std::string::npos);
}

TEST(ScheduleSim, ReportsCountMismatch) {
  std::vector<Schedule> s = swapAndReduce();
  s[1].steps[1].src.count = s[1].steps[1].dst.count = 1;
  EXPECT_NE(run(twoRankAllReduce(), s).find("receives 1 elements but rank 0 sent 2"),
            std::string::npos);
}

TEST(ScheduleSim, ReportsOutOfBounds) {
  std::vector<Schedule> s = swapAndReduce();
  s[0].steps[0].src.offset = 1;
  EXPECT_NE(run(twoRankAllReduce(), s).find("out of bounds"), std::string::npos);
}

TEST(ScheduleSim, ReportsWritesToInput) {
  std::vector<Schedule> s = swapAndReduce();
  s[1].steps[1].dst.buf = BufId::Input;
  EXPECT_NE(run(twoRankAllReduce(), s).find("read-only"), std::string::npos);
}

TEST(ScheduleSim, ReportsOutputOnReduceNonRoot) {
  CollArgs a;
  a.kind = CollKind::Reduce;
  a.nranks = 2;
  a.count = 2;
  a.root = 0;
  std::vector<Schedule> s(2);
  addRecvReduce(s[0], 1, in(Span{0, 2}), out(Span{0, 2}), 0);
  addCopy(s[1], in(Span{0, 2}), out(Span{0, 2}), 0);  // non-root has no Output
  addSend(s[1], 0, out(Span{0, 2}), 0);
  EXPECT_NE(run(a, s).find("does not have"), std::string::npos);
  // The same through Scratch is fine.
  s[1] = Schedule{};
  s[1].scratchElems = 2;
  addCopy(s[1], in(Span{0, 2}), scratch(Span{0, 2}), 0);
  addSend(s[1], 0, scratch(Span{0, 2}), 0);
  EXPECT_EQ(run(a, s), "");
}

TEST(ScheduleSim, ReportsDoubleCounting) {
  std::vector<Schedule> s = swapAndReduce();
  addSend(s[0], 1, in(Span{0, 2}), 1);
  addRecvReduce(s[1], 0, out(Span{0, 2}), out(Span{0, 2}), 1);
  const std::string err = run(twoRankAllReduce(), s);
  EXPECT_NE(err.find("rank 1 Output[0] is elem 0 {r0x2,r1}"), std::string::npos) << err;
}

TEST(ScheduleSim, ReportsMissingContribution) {
  std::vector<Schedule> s = swapAndReduce();
  s[1].steps[1] = Step{StepKind::Recv, 0, Region{}, out(Span{0, 2}), 0};
  const std::string err = run(twoRankAllReduce(), s);
  EXPECT_NE(err.find("want elem 0 {r0,r1}"), std::string::npos) << err;
}

TEST(ScheduleSim, ReportsReadsOfUnwrittenMemory) {
  std::vector<Schedule> s = swapAndReduce();
  s[0].steps[0].src.buf = BufId::Output;
  EXPECT_NE(run(twoRankAllReduce(), s).find("never written"), std::string::npos);
}

TEST(ScheduleSim, ReportsReducingDifferentElements) {
  std::vector<Schedule> s = swapAndReduce();
  s[1].steps[1].src = in(Span{1, 1});
  s[1].steps[1].dst = out(Span{0, 1});
  s[0].steps[0].src = in(Span{0, 1});
  EXPECT_NE(run(twoRankAllReduce(), s).find("different elements"), std::string::npos);
}

TEST(ScheduleSim, ReportsMessagesOverChunkSize) {
  CollArgs a = twoRankAllReduce();
  a.chunkElems = 1;
  EXPECT_NE(run(a, swapAndReduce()).find("longer than chunkElems"), std::string::npos);
}

TEST(ScheduleSim, ReportsABarrierThatDoesNotSynchronise) {
  CollArgs a;
  a.kind = CollKind::Barrier;
  a.nranks = 4;
  std::vector<Schedule> s(4);
  for (int r = 0; r < 4; ++r) {  // one ring round: rank r hears only from r-1
    addSend(s[r], (r + 1) % 4, in(Span{0, 0}), 0);
    addRecv(s[r], (r + 3) % 4, out(Span{0, 0}), 0);
  }
  EXPECT_NE(run(a, s).find("before hearing from every rank"), std::string::npos);
}

struct Case {
  Algo algo;
  CollKind kind;
};
const Case kCases[] = {
    {Algo::Ring, CollKind::AllReduce},
    {Algo::RecursiveDoubling, CollKind::AllReduce},
    {Algo::DoubleBinaryTree, CollKind::AllReduce},
    {Algo::RecHalvingDoubling, CollKind::AllReduce},
    {Algo::Ring, CollKind::AllGather},
    {Algo::RecursiveDoubling, CollKind::AllGather},
    {Algo::Ring, CollKind::ReduceScatter},
    {Algo::RecHalvingDoubling, CollKind::ReduceScatter},
    {Algo::Binomial, CollKind::Broadcast},
    {Algo::Chain, CollKind::Broadcast},
    {Algo::Binomial, CollKind::Reduce},
    {Algo::Chain, CollKind::Reduce},
    {Algo::Pairwise, CollKind::AllToAll},
    {Algo::Dissemination, CollKind::Barrier},
};

// Deleting any one step of any rank from a correct schedule must be caught:
// every step either moves data that the result needs or pairs with another.
TEST(ScheduleSim, CatchesEveryDeletedStep) {
  for (const Case& c : kCases) {
    for (int n : {3, 5, 6}) {
      CollArgs a;
      a.kind = c.kind;
      a.nranks = n;
      a.count = 11;
      a.chunkElems = 3;
      a.root = n - 1;
      const std::vector<CollArgs> args = sim::forAllRanks(a);
      std::vector<Schedule> good;
      good.reserve(args.size());
      for (const CollArgs& ra : args) good.push_back(build(c.algo, ra));
      ASSERT_EQ(sim::verify(args, sim::simulate(args, good)), "") << sim::caseName(c.algo, a);
      for (int r = 0; r < n; ++r) {
        for (size_t i = 0; i < good[r].steps.size(); ++i) {
          std::vector<Schedule> bad = good;
          bad[r].steps.erase(bad[r].steps.begin() + static_cast<long>(i));
          EXPECT_NE(sim::verify(args, sim::simulate(args, bad)), "")
              << sim::caseName(c.algo, a) << ": deleting rank " << r << " step " << i
              << " went unnoticed";
        }
      }
    }
  }
}

}  // namespace
}  // namespace gdr::coll

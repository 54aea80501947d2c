// Every algorithm x every collective it implements, run exhaustively through
// the schedule simulator (tests/support/schedule_sim.h): nranks 1..16, every
// root, counts {0, 1, n-1, n, 37, 300}, chunkElems {0, 1, 3, large}, in place
// and not.
#include <gtest/gtest.h>

#include "support/schedule_sim.h"

namespace gdr::coll {
namespace {

void expectSweepPasses(Algo algo, CollKind kind) {
  for (const std::string& f : sim::sweep(algo, kind)) ADD_FAILURE() << f;
}

TEST(ScheduleAllReduce, Ring) { expectSweepPasses(Algo::Ring, CollKind::AllReduce); }
TEST(ScheduleAllReduce, RecursiveDoubling) {
  expectSweepPasses(Algo::RecursiveDoubling, CollKind::AllReduce);
}
TEST(ScheduleAllReduce, DoubleBinaryTree) {
  expectSweepPasses(Algo::DoubleBinaryTree, CollKind::AllReduce);
}
TEST(ScheduleAllReduce, Rabenseifner) {
  expectSweepPasses(Algo::RecHalvingDoubling, CollKind::AllReduce);
}
TEST(ScheduleAllReduce, Direct) { expectSweepPasses(Algo::Direct, CollKind::AllReduce); }
TEST(ScheduleAllGather, Ring) { expectSweepPasses(Algo::Ring, CollKind::AllGather); }
TEST(ScheduleAllGather, RecursiveDoubling) {
  expectSweepPasses(Algo::RecursiveDoubling, CollKind::AllGather);
}
TEST(ScheduleReduceScatter, Ring) { expectSweepPasses(Algo::Ring, CollKind::ReduceScatter); }
TEST(ScheduleReduceScatter, RecursiveHalving) {
  expectSweepPasses(Algo::RecHalvingDoubling, CollKind::ReduceScatter);
}
TEST(ScheduleBroadcast, Binomial) { expectSweepPasses(Algo::Binomial, CollKind::Broadcast); }
TEST(ScheduleBroadcast, Chain) { expectSweepPasses(Algo::Chain, CollKind::Broadcast); }
TEST(ScheduleBroadcast, Direct) { expectSweepPasses(Algo::Direct, CollKind::Broadcast); }
TEST(ScheduleReduce, Binomial) { expectSweepPasses(Algo::Binomial, CollKind::Reduce); }
TEST(ScheduleReduce, Chain) { expectSweepPasses(Algo::Chain, CollKind::Reduce); }
TEST(ScheduleReduce, Ring) { expectSweepPasses(Algo::Ring, CollKind::Reduce); }
TEST(ScheduleReduce, Direct) { expectSweepPasses(Algo::Direct, CollKind::Reduce); }
TEST(ScheduleAllToAll, Pairwise) { expectSweepPasses(Algo::Pairwise, CollKind::AllToAll); }
TEST(ScheduleAllToAll, Direct) { expectSweepPasses(Algo::Direct, CollKind::AllToAll); }
TEST(ScheduleBarrier, Dissemination) { expectSweepPasses(Algo::Dissemination, CollKind::Barrier); }

}  // namespace
}  // namespace gdr::coll

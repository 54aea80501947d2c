// Names, the algorithm table, argument checks, and the selector with and
// without GDR_ALGO.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

#include "collectives/fused.h"
#include "collectives/schedule.h"
#include "core/error.h"

namespace gdr::coll {
namespace {

constexpr int kNumKinds = static_cast<int>(CollKind::Barrier) + 1;

// Sets GDR_ALGO for one scope and restores what was there.
class AlgoEnv {
 public:
  explicit AlgoEnv(const char* value) {
    const char* old = std::getenv("GDR_ALGO");
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv("GDR_ALGO", value, 1);
  }
  ~AlgoEnv() {
    if (had_)
      setenv("GDR_ALGO", old_.c_str(), 1);
    else
      unsetenv("GDR_ALGO");
  }

 private:
  bool had_ = false;
  std::string old_;
};

CollArgs args(CollKind kind, int nranks, size_t count) {
  CollArgs a;
  a.kind = kind;
  a.nranks = nranks;
  a.count = count;
  return a;
}

TEST(ScheduleNames, RoundTripAndAliases) {
  std::set<std::string> names;
  for (int i = 0; i < kNumAlgos; ++i) {
    const Algo algo = static_cast<Algo>(i);
    Algo parsed;
    ASSERT_TRUE(parseAlgo(algoName(algo), &parsed)) << algoName(algo);
    EXPECT_EQ(parsed, algo);
    names.insert(algoName(algo));
  }
  EXPECT_EQ(static_cast<int>(names.size()), kNumAlgos);
  Algo a;
  EXPECT_TRUE(parseAlgo("RING", &a));
  EXPECT_EQ(a, Algo::Ring);
  EXPECT_TRUE(parseAlgo("rabenseifner", &a));
  EXPECT_EQ(a, Algo::RecHalvingDoubling);
  EXPECT_TRUE(parseAlgo("tree", &a));
  EXPECT_EQ(a, Algo::DoubleBinaryTree);
  EXPECT_FALSE(parseAlgo("rign", &a));
  EXPECT_FALSE(parseAlgo("", &a));
  std::set<std::string> colls;
  for (int k = 0; k < kNumKinds; ++k) colls.insert(collName(static_cast<CollKind>(k)));
  EXPECT_EQ(static_cast<int>(colls.size()), kNumKinds);
}

TEST(ScheduleBuild, SupportsMatchesBuild) {
  for (int i = 0; i < kNumAlgos; ++i) {
    int served = 0;
    for (int k = 0; k < kNumKinds; ++k) {
      CollArgs a = args(static_cast<CollKind>(k), 4, 8);
      a.sendCounts = a.sendDispls = a.recvCounts = a.recvDispls = {0, 0, 0, 0};
      const Algo algo = static_cast<Algo>(i);
      if (supports(algo, a)) {
        ++served;
        EXPECT_NO_THROW(build(algo, a));
      } else {
        EXPECT_THROW(build(algo, a), InvalidArgument) << algoName(algo);
      }
    }
    // The fused kernels have no schedule: they run on the cuda_ipc path.
    if (!isFused(static_cast<Algo>(i))) {
      EXPECT_GT(served, 0) << algoName(static_cast<Algo>(i));
    }
  }
}

TEST(ScheduleSelect, GdrAlgoForcesTheFusedAllReduceKernels) {
  // Without GDR_ALGO: the built-in crossover (16 MiB with two ranks).
  EXPECT_EQ(selectFusedAllReduce(2, 1u << 10, 0, ""), FusedKind::OneShot);
  EXPECT_EQ(selectFusedAllReduce(2, 64u << 20, 0, ""), FusedKind::TwoShot);
  EXPECT_EQ(selectFusedAllReduce(2, 64u << 20, 0, "bcast=chain"), FusedKind::TwoShot);
  // Forced either way, at sizes where the default picks the other one.
  EXPECT_EQ(selectFusedAllReduce(2, 64u << 20, 0, "allreduce=oneshot"), FusedKind::OneShot);
  EXPECT_EQ(selectFusedAllReduce(4, 1u << 10, 0, "bcast=chain, allreduce=twoshot"),
            FusedKind::TwoShot);
  // A host schedule forced for all-reduce leaves the device choice alone.
  EXPECT_EQ(selectFusedAllReduce(2, 64u << 20, 0, "allreduce=ring"), FusedKind::TwoShot);
  // Host buffers cannot run a fused kernel: the default schedule, as for any
  // algorithm that does not serve the case.
  const CollArgs a = args(CollKind::AllReduce, 2, 1024);
  EXPECT_EQ(select(a, 4, "allreduce=oneshot"), select(a, 4, ""));
  EXPECT_NO_THROW(checkAlgoSpec("allreduce=twoshot"));
  Algo parsed;
  ASSERT_TRUE(parseAlgo("oneshot", &parsed));
  EXPECT_EQ(parsed, Algo::OneShot);
}

TEST(ScheduleSelect, TheLLAllReduceTakesSmallMessagesUpToItsLimit) {
  const size_t cap = 65536;
  // By size: LL up to llMax (capped by the LL area), one-shot above.
  EXPECT_EQ(selectFusedAllReduce(2, 8, 0, "", cap, cap), FusedKind::LL);
  EXPECT_EQ(selectFusedAllReduce(8, cap, 0, "", cap, cap), FusedKind::LL);
  EXPECT_EQ(selectFusedAllReduce(2, cap + 1, 0, "", cap, cap), FusedKind::OneShot);
  EXPECT_EQ(selectFusedAllReduce(2, 4096, 0, "", 1024, cap), FusedKind::OneShot);
  EXPECT_EQ(selectFusedAllReduce(2, 4096, 0, "", 1u << 20, cap), FusedKind::LL);
  EXPECT_EQ(selectFusedAllReduce(2, 1u << 17, 0, "", 1u << 20, cap), FusedKind::OneShot);
  // llMax 0 (GDR_CUDA_IPC_LL_BYTES=0): never.
  EXPECT_EQ(selectFusedAllReduce(2, 8, 0, "", 0, cap), FusedKind::OneShot);
  // Forced: LL wherever it fits, else the default without LL (logged by
  // nobody: the caller forced a kernel that cannot carry the message).
  EXPECT_EQ(selectFusedAllReduce(2, cap, 0, "allreduce=ll", 0, cap), FusedKind::LL);
  EXPECT_EQ(selectFusedAllReduce(2, cap + 1, 0, "allreduce=ll", cap, cap), FusedKind::OneShot);
  EXPECT_EQ(selectFusedAllReduce(2, 64u << 20, 0, "allreduce=ll", cap, cap), FusedKind::TwoShot);
  // The other kernels forced at LL sizes.
  EXPECT_EQ(selectFusedAllReduce(2, 8, 0, "allreduce=oneshot", cap, cap), FusedKind::OneShot);
  EXPECT_EQ(selectFusedAllReduce(2, 8, 0, "allreduce=twoshot", cap, cap), FusedKind::TwoShot);
  Algo parsed;
  ASSERT_TRUE(parseAlgo("ll", &parsed));
  EXPECT_EQ(parsed, Algo::LL);
  EXPECT_TRUE(isFused(Algo::LL));
  // Host buffers: the default schedule.
  const CollArgs a = args(CollKind::AllReduce, 2, 16);
  EXPECT_EQ(select(a, 4, "allreduce=ll"), select(a, 4, ""));
  EXPECT_EQ(fusedAllReduceKind(2, 1024, 0, cap), FusedKind::LL);
  EXPECT_EQ(fusedAllReduceKind(2, 1024), FusedKind::OneShot);  // the simulator's default
}

TEST(ScheduleBuild, RejectsBadArguments) {
  CollArgs a = args(CollKind::Broadcast, 4, 8);
  a.root = 4;
  EXPECT_THROW(build(Algo::Binomial, a), InvalidArgument);
  a.root = -1;
  EXPECT_THROW(build(Algo::Chain, a), InvalidArgument);
  a = args(CollKind::AllReduce, 4, 8);
  a.rank = 4;
  EXPECT_THROW(build(Algo::Ring, a), InvalidArgument);
  a.rank = 0;
  a.nranks = 0;
  EXPECT_THROW(build(Algo::Ring, a), InvalidArgument);
  a = args(CollKind::AllToAllv, 3, 0);
  a.sendCounts = a.sendDispls = a.recvCounts = {1, 1, 1};
  a.recvDispls = {0, 1};
  EXPECT_THROW(build(Algo::Pairwise, a), InvalidArgument);
}

TEST(ScheduleSelect, DefaultsBySizeAndRanks) {
  AlgoEnv env("");
  EXPECT_EQ(select(args(CollKind::AllReduce, 8, 16), 4), Algo::Direct);
  EXPECT_EQ(select(args(CollKind::AllReduce, 4, 256), 4), Algo::Direct);
  EXPECT_EQ(select(args(CollKind::AllReduce, 4, 512), 4), Algo::RecursiveDoubling);
  EXPECT_EQ(select(args(CollKind::AllReduce, 2, 16), 4), Algo::RecursiveDoubling);
  EXPECT_EQ(select(args(CollKind::AllReduce, 16, 16), 4), Algo::RecursiveDoubling);
  EXPECT_EQ(select(args(CollKind::AllReduce, 8, 64 << 10), 4), Algo::RecHalvingDoubling);
  EXPECT_EQ(select(args(CollKind::AllReduce, 6, 64 << 10), 4), Algo::Ring);
  EXPECT_EQ(select(args(CollKind::AllReduce, 8, 16 << 20), 4), Algo::Ring);
  EXPECT_EQ(select(args(CollKind::AllReduce, 64, 16 << 20), 4), Algo::DoubleBinaryTree);
  EXPECT_EQ(select(args(CollKind::Broadcast, 8, 100), 4), Algo::Binomial);
  // Three ranks: a chain up to 256 B, the binomial above.
  EXPECT_EQ(select(args(CollKind::Broadcast, 3, 64), 4), Algo::Chain);
  EXPECT_EQ(select(args(CollKind::Broadcast, 3, 128), 4), Algo::Binomial);
  EXPECT_EQ(select(args(CollKind::Broadcast, 8, 1 << 20), 4), Algo::Chain);
  EXPECT_EQ(select(args(CollKind::Broadcast, 2, 1 << 20), 4), Algo::Binomial);
  EXPECT_EQ(select(args(CollKind::Reduce, 8, 1 << 20), 4), Algo::Ring);
  EXPECT_EQ(select(args(CollKind::Reduce, 8, 100), 4), Algo::Binomial);
  EXPECT_EQ(select(args(CollKind::AllGather, 4, 16), 4), Algo::RecursiveDoubling);
  EXPECT_EQ(select(args(CollKind::AllGather, 4, 1 << 20), 4), Algo::Ring);
  EXPECT_EQ(select(args(CollKind::ReduceScatter, 4, 16), 4), Algo::RecHalvingDoubling);
  EXPECT_EQ(select(args(CollKind::ReduceScatter, 4, 1 << 20), 4), Algo::Ring);
  EXPECT_EQ(select(args(CollKind::AllToAll, 4, 16), 4), Algo::Direct);
  EXPECT_EQ(select(args(CollKind::AllToAll, 4, 4096), 4), Algo::Direct);  // 16 KiB blocks
  EXPECT_EQ(select(args(CollKind::AllToAll, 4, 4097), 4), Algo::Pairwise);
  EXPECT_EQ(select(args(CollKind::AllToAll, 2, 16), 4), Algo::Pairwise);
  {
    // A rank alone on its host: direct at any block size, from 3 ranks.
    CollArgs a = args(CollKind::AllToAll, 4, 1 << 20);
    a.aloneOnHost = true;
    EXPECT_EQ(select(a, 4), Algo::Direct);
    a.nranks = 2;
    EXPECT_EQ(select(a, 4), Algo::Pairwise);
    CollArgs v = args(CollKind::AllToAllv, 4, 0);
    v.sendCounts = {1 << 20, 1 << 20, 1 << 20, 1 << 20};
    v.recvCounts = v.sendCounts;
    EXPECT_EQ(select(v, 4), Algo::Pairwise);
    v.aloneOnHost = true;
    EXPECT_EQ(select(v, 4), Algo::Direct);
  }
  {
    // All-to-allv: by this rank's largest block, sent or received.
    CollArgs v = args(CollKind::AllToAllv, 4, 0);
    v.sendCounts = {10, 20, 4096, 0};
    v.recvCounts = {1, 1, 1, 1};
    EXPECT_EQ(select(v, 4), Algo::Direct);  // 16 KiB at most
    v.recvCounts[3] = 4097;
    EXPECT_EQ(select(v, 4), Algo::Pairwise);
    v.recvCounts[3] = 1;
    EXPECT_EQ(select(v, 8), Algo::Pairwise);  // 4096 doubles: 32 KiB
    v.nranks = 2;
    v.sendCounts.resize(2);
    v.recvCounts.resize(2);
    v.sendCounts[1] = 1;
    EXPECT_EQ(select(v, 4), Algo::Pairwise);  // two ranks: the two forms are one
  }
  EXPECT_EQ(select(args(CollKind::Barrier, 4, 0), 4), Algo::Dissemination);
  // Every default serves its collective.
  for (int k = 0; k < kNumKinds; ++k)
    for (int n = 1; n <= 64; n *= 2)
      for (size_t count : {size_t{0}, size_t{1}, size_t{1} << 24}) {
        const CollArgs a = args(static_cast<CollKind>(k), n, count);
        EXPECT_TRUE(supports(select(a, 8), a));
      }
}

// The router's one-message path (paths/one_message.cc) runs an np 2
// broadcast or reduce below 1 MiB as one message: what the selector's
// schedule sends there.
TEST(ScheduleSelect, TwoRanksSendWhatTheOneMessagePathSends) {
  AlgoEnv env("");
  for (CollKind k : {CollKind::Broadcast, CollKind::Reduce})
    for (size_t bytes : {size_t{4}, size_t{64} << 10, (size_t{1} << 20) - 4})
      for (int r = 0; r < 2; ++r) {
        CollArgs a = args(k, 2, bytes / 4);
        a.rank = r;
        const Schedule s = build(select(a, 4), a);
        size_t messages = 0;
        for (const Step& st : s.steps)
          messages += st.kind == StepKind::Send || st.kind == StepKind::Recv ||
                      st.kind == StepKind::RecvReduce;
        EXPECT_EQ(messages, 1u) << collName(k) << " " << bytes << " B, rank " << r;
      }
}

TEST(ScheduleSelect, GdrAlgoForcesPerCollective) {
  AlgoEnv env(" allreduce = ring , bcast=chain,reduce=binomial,allgather=rd,,broadcast=chain ");
  EXPECT_EQ(select(args(CollKind::AllReduce, 8, 4), 4), Algo::Ring);
  EXPECT_EQ(select(args(CollKind::Broadcast, 8, 4), 4), Algo::Chain);
  EXPECT_EQ(select(args(CollKind::Reduce, 8, 1 << 24), 4), Algo::Binomial);
  EXPECT_EQ(select(args(CollKind::AllGather, 8, 1 << 24), 4), Algo::RecursiveDoubling);
  // Not named: the default.
  EXPECT_EQ(select(args(CollKind::ReduceScatter, 8, 1 << 24), 4), Algo::Ring);
}

TEST(ScheduleSelect, UnsupportedForcedAlgorithmFallsBack) {
  AlgoEnv env("bcast=ring,allreduce=pairwise,alltoall=dbtree");
  EXPECT_EQ(select(args(CollKind::Broadcast, 8, 4), 4), Algo::Binomial);
  EXPECT_EQ(select(args(CollKind::AllReduce, 8, 4), 4), Algo::Direct);
  EXPECT_EQ(select(args(CollKind::AllToAll, 8, 4), 4), Algo::Direct);
  EXPECT_EQ(select(args(CollKind::AllToAll, 8, 1 << 20), 4), Algo::Pairwise);
}

TEST(ScheduleSelect, BadGdrAlgoNamesThrow) {
  auto message = [](const char* value) {
    AlgoEnv env(value);
    try {
      select(args(CollKind::AllReduce, 4, 4), 4);
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EXPECT_NE(message("allreduce=rign").find("unknown algorithm 'rign'"), std::string::npos);
  EXPECT_NE(message("allreduse=ring").find("unknown collective 'allreduse'"), std::string::npos);
  EXPECT_NE(message("ring").find("not collective=algorithm"), std::string::npos);
  // A bad entry for another collective is still an error.
  EXPECT_NE(message("allreduce=ring,bcast=chian").find("'chian'"), std::string::npos);
}

}  // namespace
}  // namespace gdr::coll

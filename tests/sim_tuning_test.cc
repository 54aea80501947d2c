// The selector's table (GDR_TUNING_FILE): parsing, rule matching, and that
// the table gdr-sim writes is one the parser takes back.
#include <gtest/gtest.h>

#include "collectives/tuning.h"
#include "core/error.h"
#include "sim/cluster.h"
#include "sim/tuning_writer.h"

namespace gdr::coll {
namespace {

CollArgs args(CollKind k, int n) {
  CollArgs a;
  a.kind = k;
  a.nranks = n;
  return a;
}

TEST(SimTuning, FirstMatchingRuleWins) {
  const std::vector<TuningRule> rules = parseTuning(
      "# comment\n"
      "allreduce 4 8 4096 rd\n"
      "allreduce 4 8 1048576 rhd   # trailing comment\n"
      "alltoall 2 1000 100 direct\n",
      "test");
  ASSERT_EQ(rules.size(), 3u);
  Algo a;
  ASSERT_TRUE(tunedAlgo(rules, args(CollKind::AllReduce, 4), 4096, &a));
  EXPECT_EQ(a, Algo::RecursiveDoubling);
  ASSERT_TRUE(tunedAlgo(rules, args(CollKind::AllReduce, 8), 4097, &a));
  EXPECT_EQ(a, Algo::RecHalvingDoubling);
  EXPECT_FALSE(
      tunedAlgo(rules, args(CollKind::AllReduce, 8), (1u << 20) + 1, &a));  // past every rule
  EXPECT_FALSE(tunedAlgo(rules, args(CollKind::AllReduce, 16), 16, &a));    // rank range
  EXPECT_FALSE(tunedAlgo(rules, args(CollKind::Broadcast, 4), 16, &a));     // no rule
}

TEST(SimTuning, AnAlgorithmThatDoesNotApplyLeavesTheDefault) {
  const std::vector<TuningRule> rules = parseTuning("bcast 1 64 1024 ring\n", "test");
  Algo a;
  EXPECT_FALSE(tunedAlgo(rules, args(CollKind::Broadcast, 4), 16, &a));
}

TEST(SimTuning, BadLinesAreNamed) {
  EXPECT_THROW(parseTuning("allreduce 4 8 rd\n", "t"), InvalidArgument);
  EXPECT_THROW(parseTuning("allreduce 8 4 100 rd\n", "t"), InvalidArgument);
  EXPECT_THROW(parseTuning("allfoo 4 8 100 rd\n", "t"), InvalidArgument);
  EXPECT_THROW(parseTuning("allreduce 4 8 100 quick\n", "t"), InvalidArgument);
}

// gdr-sim's table for a small host: parseable, every rule for this rank
// count, and sizes covered in increasing order per collective.
TEST(SimTuning, WrittenTableParses) {
  sim::Cluster c;
  ASSERT_TRUE(sim::preset("host-shm", &c));
  c.ranksPerHost = 4;
  c.link[static_cast<int>(sim::LinkClass::Shm)] = {0.3, 5.0};
  c.link[static_cast<int>(sim::LinkClass::ShmCma)] = {0.3, 4.0};
  c.copyGBps = 30.0;
  c.reduceGBps = 20.0;
  const std::vector<TuningRule> rules = parseTuning(sim::tuningTable(c, 4, 1u << 20, 4), "written");
  ASSERT_FALSE(rules.empty());
  for (size_t i = 0; i < rules.size(); ++i) {
    EXPECT_EQ(rules[i].minRanks, 4);
    EXPECT_EQ(rules[i].maxRanks, 4);
    if (i > 0 && rules[i].kind == rules[i - 1].kind) {
      EXPECT_GT(rules[i].maxBytes, rules[i - 1].maxBytes);
    }
  }
}

}  // namespace
}  // namespace gdr::coll

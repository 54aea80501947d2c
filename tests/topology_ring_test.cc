// Rank ordering for rings and trees (topology/ring_order.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "topology/ring_order.h"
#include "topology/topology.h"

using gdr::topo::RankPlace;
using gdr::topo::ringOrder;
using gdr::topo::Topology;

namespace {

std::string fixture(const char* name) {
  return std::string(GDR_TEST_DATA_DIR) + "/topologies/" + name;
}

}  // namespace

TEST(TopoRing, RanksOfOneHostAreAdjacentHostsByLowestRank) {
  // Ranks interleaved over hosts b, a: host b owns rank 0, so it comes first.
  std::vector<RankPlace> ranks = {{"b", "0000:01:00.0"}, {"a", "0000:01:00.0"},
                                  {"b", "0000:02:00.0"}, {"a", "0000:02:00.0"}};
  EXPECT_EQ(ringOrder(ranks, nullptr), (std::vector<int>{0, 2, 1, 3}));
}

TEST(TopoRing, RandomPlacementsKeepHostsContiguousAndEveryRankOnce) {
  std::mt19937 rng(std::random_device{}());
  Topology t = Topology::loadXml(fixture("topo.jwc09n003.xml"));
  const char* bus[] = {"0000:5d:00.0", "0000:5e:00.0", "0000:88:00.0", "0000:89:00.0"};
  for (int trial = 0; trial < 50; ++trial) {
    int nhosts = 1 + static_cast<int>(rng() % 5);
    std::vector<RankPlace> ranks;
    for (int h = 0; h < nhosts; ++h)
      for (int g = 0; g < 4; ++g) ranks.push_back({"host" + std::to_string(h), bus[g]});
    std::shuffle(ranks.begin(), ranks.end(), rng);
    std::vector<int> order = ringOrder(ranks, &t);
    ASSERT_EQ(order.size(), ranks.size());
    EXPECT_EQ(std::set<int>(order.begin(), order.end()).size(), ranks.size());
    std::set<std::string> closed;
    for (size_t i = 0; i < order.size(); ++i) {
      const std::string& h = ranks[order[i]].hostId;
      if (i > 0 && ranks[order[i - 1]].hostId != h) closed.insert(ranks[order[i - 1]].hostId);
      EXPECT_EQ(closed.count(h), 0u) << "host " << h << " split in the ring";
    }
    // Within each host the two GPUs of a PCIe switch are neighbours: the
    // chain has exactly one SYS hop (the one that changes sockets).
    for (size_t i = 0; i + 1 < order.size(); i += 4) {
      int sys = 0;
      for (size_t k = i; k + 1 < i + 4; ++k)
        sys += t.gpuGpuPath(t.findGpu(ranks[order[k]].busId), t.findGpu(ranks[order[k + 1]].busId)) ==
               gdr::topo::PathClass::SYS;
      EXPECT_EQ(sys, 1);
    }
  }
}

// JUWELS Cluster, one host, ranks given out of bus order. The ring should pair
// the GPUs of each PCIe switch (5d+5e, 88+89); from the lowest bus id:
// 5d (rank 1), 5e (rank 3), 88 (rank 0), 89 (rank 2).
TEST(TopoRing, OneHostPairsGpusOfASwitch) {
  Topology t = Topology::loadXml(fixture("topo.jwc09n003.xml"));
  std::vector<RankPlace> ranks = {{"h", "0000:88:00.0"}, {"h", "0000:5d:00.0"},
                                  {"h", "0000:89:00.0"}, {"h", "0000:5e:00.0"}};
  EXPECT_EQ(ringOrder(ranks, &t), (std::vector<int>{1, 3, 0, 2}));
}

// JUWELS Booster: GPU k uses mlx5_k (rail k), and all GPU pairs are SYS, so the
// chain in a host is bus order. Host A leaves on GPU 3 (rail 3); host B is run
// backwards to enter on its GPU 3, leaves on its GPU 0 (rail 0), and the ring
// closes into host A's GPU 0: every inter-host hop stays on one rail.
TEST(TopoRing, HostsSnakeSoHopsStayOnOneRail) {
  Topology t = Topology::loadXml(fixture("topo.jwb0004.xml"));
  const char* bus[] = {"0000:03:00.0", "0000:44:00.0", "0000:84:00.0", "0000:c4:00.0"};
  std::vector<RankPlace> ranks;
  for (const char* h : {"A", "B", "C"})
    for (const char* b : bus) ranks.push_back({h, b});
  std::vector<RankPlace> two(ranks.begin(), ranks.begin() + 8);
  EXPECT_EQ(ringOrder(two, &t), (std::vector<int>{0, 1, 2, 3, 7, 6, 5, 4}));
  // Three hosts: forwards, backwards, forwards; only the closing hop (11 -> 0)
  // must change rails, as with any odd number of hosts.
  EXPECT_EQ(ringOrder(ranks, &t), (std::vector<int>{0, 1, 2, 3, 7, 6, 5, 4, 8, 9, 10, 11}));
}

TEST(TopoRing, RanksSharingAGpuStayTogether) {
  Topology t = Topology::loadXml(fixture("topo.jwc09n003.xml"));
  std::vector<RankPlace> ranks = {{"h", "0000:5d:00.0"}, {"h", "0000:88:00.0"},
                                  {"h", "0000:5d:00.0"}, {"h", "0000:88:00.0"}};
  std::vector<int> order = ringOrder(ranks, &t);
  auto pos = [&](int r) { return std::find(order.begin(), order.end(), r) - order.begin(); };
  EXPECT_EQ(std::abs(pos(0) - pos(2)) % 2, 1);  // adjacent (4-ring: distance 1 or 3)
  EXPECT_EQ(std::abs(pos(1) - pos(3)) % 2, 1);
}

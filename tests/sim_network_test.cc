// The simulator's network against what can be worked out by hand: max-min
// sharing on a toy topology, a shared TCP port's efficiency, and which
// messages go single-copy (the library's thresholds, mirrored).
#include <gtest/gtest.h>

#include <vector>

#include "collectives/schedule.h"
#include "sim/cluster.h"
#include "sim/maxmin.h"
#include "sim/message_policy.h"
#include "sim/network.h"
#include "support/sim_toy.h"

namespace gdr::sim {
namespace {

// Two links of capacity 2 (two hosts' 2 cores); f1 on the first, f2 on
// both, f3 on the second with weight 3. Filling: at rate 0.5 the second
// link is full (0.5 + 3x0.5), freezing f2 and f3; f1 alone takes what is
// left of the first: 2 - 0.5 = 1.5.
TEST(SimModel, MaxMinOnAToyTopology) {
  Cluster c = toyHost(4);
  c.hosts = 2;
  c.coresPerHost = 2;  // a host's link is its 2 cores
  const Network net(c);
  const int l0 = net.path(0, 1, true).links[0], l1 = net.path(4, 5, true).links[0];
  ASSERT_NE(l0, l1);
  ASSERT_DOUBLE_EQ(net.capacity(l0), 2.0);
  Path f1, f2, f3;
  f1.add(l0);
  f2.add(l0);
  f2.add(l1);
  f3.add(l1, 3.0);
  std::vector<double> r = maxMinRates(net, {{&f1, 0}, {&f2, 0}, {&f3, 0}});
  EXPECT_NEAR(r[0], 1.5, 1e-9);
  EXPECT_NEAR(r[1], 0.5, 1e-9);
  EXPECT_NEAR(r[2], 0.5, 1e-9);
  // A flow's own cap: f1 capped at 0.5 leaves f2 its share of both links.
  r = maxMinRates(net, {{&f1, 0.5}, {&f2, 0}});
  EXPECT_NEAR(r[0], 0.5, 1e-9);
  EXPECT_NEAR(r[1], 1.5, 1e-9);
  // An eager host message is copied twice, each copy by a core at the
  // single-copy rate (2 GB/s): 2 / 2 of a core per GB/s, so 2 GB/s on 2 cores.
  const Path eagerPath = net.path(0, 1, false);
  EXPECT_NEAR(maxMinRates(net, {{&eagerPath, 0}})[0], 2.0, 1e-9);
  // With cma_mem_gbps the single-copy reads of a host share its memory too:
  // two at once on 2 cores (2 GB/s each alone) get 3 / 2 each.
  c.cmaMemGBps = 3.0;
  const Network shared(c);
  const Path a = shared.path(0, 1, true), b = shared.path(2, 3, true);
  r = maxMinRates(shared, {{&a, a.flowCapGBps}, {&b, b.flowCapGBps}});
  EXPECT_NEAR(r[0], 1.5, 1e-9);
  EXPECT_NEAR(r[1], 1.5, 1e-9);
  const Path e = shared.path(0, 1, false);  // eager: not limited by it
  EXPECT_NEAR(maxMinRates(shared, {{&e, 0}})[0], 2.0, 1e-9);
}

// The library's broadcast threshold follows whether the host's ranks have a
// core each (CollTraits::singleCopyFromOwnCores): 32 KiB then, else 256 KiB.
TEST(SimModel, BroadcastThresholdFollowsOwnCores) {
  Cluster c;
  ASSERT_TRUE(preset("host-shm", &c));
  c.ranksPerHost = 2;
  c.coresPerHost = 2;
  EXPECT_TRUE(singleCopy(c, coll::CollKind::Broadcast, 32u << 10));
  EXPECT_FALSE(singleCopy(c, coll::CollKind::Broadcast, (32u << 10) - 4));
  EXPECT_FALSE(singleCopy(c, coll::CollKind::AllReduce, 32u << 10));
  c.ranksPerHost = 4;
  EXPECT_FALSE(singleCopy(c, coll::CollKind::Broadcast, 128u << 10));
  EXPECT_TRUE(singleCopy(c, coll::CollKind::Broadcast, 256u << 10));
  c.cmaThresholdOwnCores = 256u << 10;  // a set measured before the change
  c.ranksPerHost = 2;
  EXPECT_FALSE(singleCopy(c, coll::CollKind::Broadcast, 128u << 10));
}

// socket_shared_eff: a host's TCP port crossed by two flows offers that
// fraction of its capacity (TCP flows through one shaped port), one flow
// alone the whole of it; links inside a host are not affected.
TEST(SimModel, SharedNetworkPortOffersItsEfficiency) {
  Cluster c;
  ASSERT_TRUE(preset("socket", &c));
  c.hosts = 3;
  c.link[static_cast<int>(LinkClass::Socket)] = {1.0, 1.0};
  c.socketSharedEff = 0.8;
  const Network net(c);
  const Path a = net.path(0, 1, false), b = net.path(0, 2, false);
  std::vector<double> r = maxMinRates(net, {{&a, 0}, {&b, 0}});
  EXPECT_NEAR(r[0], 0.4, 1e-9);
  EXPECT_NEAR(r[1], 0.4, 1e-9);
  EXPECT_NEAR(maxMinRates(net, {{&a, 0}})[0], 1.0, 1e-9);
  // Two flows on different ports each have theirs whole.
  const Path d = net.path(1, 2, false);
  r = maxMinRates(net, {{&a, 0}, {&d, 0}});
  EXPECT_NEAR(r[0], 1.0, 1e-9);
  EXPECT_NEAR(r[1], 1.0, 1e-9);
  // Verbs ports (net_transport nic) keep their whole capacity.
  Cluster v = c;
  v.netTransport = "nic";
  v.link[static_cast<int>(LinkClass::Nic)] = {1.0, 1.0};
  const Network vn(v);
  const Path va = vn.path(0, 1, false), vb = vn.path(0, 2, false);
  r = maxMinRates(vn, {{&va, 0}, {&vb, 0}});
  EXPECT_NEAR(r[0] + r[1], 1.0, 1e-9);
  // Inside one host (the cores) nothing changes.
  Cluster h = toyHost(4);
  h.coresPerHost = 2;
  h.socketSharedEff = 0.5;
  const Network hn(h);
  const Path x = hn.path(0, 1, true), y = hn.path(2, 3, true);
  r = maxMinRates(hn, {{&x, 0}, {&y, 0}});
  EXPECT_NEAR(r[0] + r[1], 4.0, 1e-9);
}

}  // namespace
}  // namespace gdr::sim

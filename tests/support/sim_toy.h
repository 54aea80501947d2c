// The simulator tests' toy host: host processes with round numbers, so
// that what a test expects can be worked out by hand.
#pragma once

#include <gtest/gtest.h>

#include "sim/cluster.h"

namespace gdr::sim {

// 1 us latency, 1 GB/s eager, 2 GB/s single-copy, reductions at 1 GB/s,
// one core per rank.
inline Cluster toyHost(int ranks) {
  Cluster c;
  EXPECT_TRUE(preset("host-shm", &c));
  c.ranksPerHost = ranks;
  c.coresPerHost = 0;
  c.link[static_cast<int>(LinkClass::Shm)] = {1.0, 1.0};
  c.link[static_cast<int>(LinkClass::ShmCma)] = {1.0, 2.0};
  c.copyGBps = 100.0;
  c.reduceGBps = 1.0;
  return c;
}

}  // namespace gdr::sim

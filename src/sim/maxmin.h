// Max-min fair sharing of links among flows (progressive filling): every
// flow's rate grows at the same pace until a link it crosses is full or it
// reaches its own cap; frozen flows keep their rate, the rest go on. A
// flow crossing a link with weight w consumes w x its rate there (an eager
// host-memory message is copied twice by the same cores).
#pragma once

#include <vector>

#include "sim/network.h"

namespace gdr::sim {

struct FlowDemand {
  const Path* path;
  double capGBps;  // <= 0: no cap of its own
};

// Rates in GB/s, one per flow, given the links' capacities.
std::vector<double> maxMinRates(const Network& net, const std::vector<FlowDemand>& flows);

}  // namespace gdr::sim

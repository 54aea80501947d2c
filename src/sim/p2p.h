// What the schedules of collectives/ do not cover: a group's point-to-point
// messages, and calls whose ranks' arguments differ (NCCL's gather and
// scatter, which the library runs as an all-to-all-v with one rank's counts
// non-zero). Both are priced by the event walker, as one call from a
// common start.
#pragma once

#include <cstddef>
#include <vector>

#include "collectives/schedule.h"
#include "sim/cluster.h"

namespace gdr::sim {

struct P2pOp {
  bool send = true;
  int peer = 0;
  size_t bytes = 0;
};

// One rank's sends and receives of a group, all in flight together: the
// rank's step list holds its sends first (a send does not block), then its
// receives, and every peer does the mirror of what it shares with the rank
// (the group's other messages are not this rank's to know); messages to
// the rank itself are local copies and left out. Microseconds.
double p2pUs(const Cluster& c, int rank, const std::vector<P2pOp>& ops);

// Gather to `root` (or scatter from it) of `count` elements per rank: the
// all-to-all-v of those counts with the selector's algorithm. Microseconds.
double rootedUs(const Cluster& c, bool gather, int root, size_t count, size_t elemBytes);

}  // namespace gdr::sim

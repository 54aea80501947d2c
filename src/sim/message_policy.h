// How the modelled transports move one message, as both engines (engine.cc,
// symmetric.cc) price it: single-copy on shm from the per-collective
// threshold, the socket transport where a pair talks over TCP, and whether a
// send needs its receiver (eager) or waits for it.
#pragma once

#include <cstddef>

#include "collectives/schedule.h"
#include "sim/cluster.h"

namespace gdr::sim {

// Whether a host-memory message of `bytes` goes single-copy for `kind`
// (the shm transport's per-collective threshold).
bool singleCopy(const Cluster& c, coll::CollKind kind, size_t bytes);
// Whether a single-copy shm message of `kind` is copied by sender and
// receiver together (core/call.cc's sharedCopy, and the cluster's cma_share).
bool sharedCopy(const Cluster& c, coll::CollKind kind);
// Whether a pair of ranks talks over the socket transport.
bool socketPair(const Cluster& c, bool sameHost);
// Whether a message is eager (its send needs no receiver).
bool eager(const Cluster& c, coll::CollKind kind, size_t bytes, bool sameHost);

}  // namespace gdr::sim

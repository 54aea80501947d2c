// The scale walker: for schedules in which every rank does the same thing
// relative to itself, walk one rank's list only.
//
// A schedule is symmetric when every step of every rank has the same kind
// and size as rank 0's and its peer follows one relation for all ranks:
// a shift (peer = rank + d mod n: rings, pairwise all-to-all) or an xor
// (peer = rank ^ m: recursive doubling and halving). It is checked on a few
// sample ranks' lists, not proven for all. Then all ranks are in lockstep,
// so rank 0's j-th receive from rank n-d completes when rank 0's own j-th
// send to rank d would (its mirror), and a rendezvous starts when rank 0's
// mirror receive is posted.
//
// The bandwidth of a step comes from all n flows of its relation at once
// (counted link by link over the whole cluster, once per relation): the
// bottleneck link's capacity over its load, the same for every flow; its
// latency is the flows' mean (see Walker::round). Rank
// 0's own overlapping flows split that share evenly. What it costs: no rank
// is ever late (no stragglers, no skew between hosts), flows of different
// relations in flight together only see each other through rank 0's own
// count, and a bottleneck elsewhere slows every flow, not only its own.
#pragma once

#include "collectives/schedule.h"
#include "sim/engine.h"

namespace gdr::sim {

// Fills *out and returns true when the schedule is symmetric; false (and
// nothing done) when it is not, so the caller runs the event walker.
bool runSymmetric(const EngineInput& in, coll::Algo algo, const coll::CollArgs& base,
                  EngineResult* out);

}  // namespace gdr::sim

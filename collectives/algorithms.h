// The schedule builders, one per (algorithm, collective). build.cc dispatches
// to them after checking the arguments; each file's opening comment explains
// its schedule.
#pragma once

#include "collectives/schedule.h"

namespace gdr::coll::detail {

Schedule ringAllReduce(const CollArgs& a);               // allreduce_ring.cc
Schedule recursiveDoublingAllReduce(const CollArgs& a);  // allreduce_rd.cc
Schedule doubleTreeAllReduce(const CollArgs& a);         // allreduce_tree.cc
Schedule rabenseifnerAllReduce(const CollArgs& a);       // allreduce_rhd.cc
Schedule directAllReduce(const CollArgs& a);             // allreduce_direct.cc
Schedule ringAllGather(const CollArgs& a);               // allgather.cc
Schedule recursiveDoublingAllGather(const CollArgs& a);
Schedule ringReduceScatter(const CollArgs& a);  // reducescatter.cc
Schedule recursiveHalvingReduceScatter(const CollArgs& a);
Schedule binomialBroadcast(const CollArgs& a);  // bcast.cc
Schedule chainBroadcast(const CollArgs& a);
Schedule directBroadcast(const CollArgs& a);
Schedule binomialReduce(const CollArgs& a);  // reduce.cc
Schedule chainReduce(const CollArgs& a);
Schedule directReduce(const CollArgs& a);
Schedule ringReduce(const CollArgs& a);  // reduce_ring.cc
Schedule pairwiseAllToAll(const CollArgs& a);  // alltoall.cc
Schedule directAllToAll(const CollArgs& a);
Schedule directAllToAllv(const CollArgs& a);
Schedule pairwiseAllToAllv(const CollArgs& a);
Schedule disseminationBarrier(const CollArgs& a);  // barrier.cc

}  // namespace gdr::coll::detail

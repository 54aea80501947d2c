// Schedules short enough to run without the executor's runner: one
// message (a leaf of a small broadcast or reduce), or a few message steps
// with local copies only after them (a small tree's root or forwarding
// rank, the exchange of two ranks). At a few hundred bytes the runner's send
// pool and bookkeeping cost more than the messages. Each returns false,
// having moved nothing, for a schedule it does not cover; execute() then
// runs the runner. Internal to collectives/ (executor.cc).
#pragma once

#include <string>

#include "collectives/executor.h"

namespace gdr::coll::detail {

// The back ends learn the collective's single-copy threshold from each
// operation (they never look at its kind).
inline size_t singleCopyFromOf(const Links& comm, const transport::OpSig& sig) {
  return gdr::singleCopyFromOf(static_cast<CollKind>(sig.kind), comm.ownCores());
}

bool runSingleMessage(Links& comm, const Schedule& sched, const HostBuffers& bufs, transport::ReduceFn fn,
                      const transport::OpSig& sig, const int* peerOf);
bool runShort(Links& comm, const Schedule& sched, const HostBuffers& bufs, transport::ReduceFn fn,
              const transport::OpSig& sig, const int* peerOf);

}  // namespace gdr::coll::detail

// Collectives on host memory: arranges the buffers (in-place forms), picks
// and builds the schedule, runs it, and finishes avg.
#pragma once

#include "collectives/schedule.h"
#include "comm/comm.h"
#include "core/call.h"

namespace gdr::paths {

void runHostCollective(Communicator& comm, const CollCall& call);

}  // namespace gdr::paths

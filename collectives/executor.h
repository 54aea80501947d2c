// Runs one rank's schedule over its links (an endpoint per peer, links.h),
// on host memory.
// Sends are posted and left in flight; receives are waited on; a step that
// would overwrite memory an in-flight send still reads waits for that send
// first, so schedules keep their value semantics (see schedule.h).
#pragma once

#include <string>

#include "collectives/links.h"
#include "collectives/schedule.h"
#include "transport/transport.h"

namespace gdr::coll {

struct HostBuffers {
  const char* input = nullptr;
  char* output = nullptr;
  char* scratch = nullptr;
  size_t elemBytes = 1;
};

// `peerOf` maps the schedule's ranks to the links' (nullptr: the same);
// schedules built on ring positions use it.
void execute(Links& links, const Schedule& sched, const HostBuffers& bufs, transport::ReduceFn fn,
             const transport::OpSig& sig, const int* peerOf = nullptr);

// What a wait of step `idx` (of `nsteps`) is for, as a timeout names it:
// "waiting <what> from/to rank <peer> in <operation>, step i of n (<kind>,
// chunk c)"; without a step, "after step n of n" (the last sends draining).
std::string waitText(const std::string& what, int peer, const transport::OpSig& sig, const Step* st,
                     size_t idx, size_t nsteps);

}  // namespace gdr::coll

// The GPUDirect path's decision for one rank: every peer over verbs whose
// endpoint takes device memory. Its reason is one line for the log.
#pragma once

#include <string>

#include "comm/comm.h"

namespace gdr::paths::direct {

// True when this rank could take the path; `why` says why or why not.
bool usableHere(const Communicator& comm, std::string* why);

}  // namespace gdr::paths::direct

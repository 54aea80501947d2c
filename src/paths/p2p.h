// Point-to-point send/receive on host buffers. A lone call runs at once and
// returns when its buffer is done with. A batch (one communicator's share of
// a gdrGroupStart/gdrGroupEnd group, see dispatch/group.h) posts every call
// before waiting on any, so any pattern of sends and receives completes.
#pragma once

#include <cstddef>
#include <vector>

#include "comm/comm.h"
#include "core/call.h"

namespace gdr::paths {

void p2pSend(Communicator& comm, const void* buf, size_t count, gdrDataType_t type, int peer);
void p2pRecv(Communicator& comm, void* buf, size_t count, gdrDataType_t type, int peer);
// Host buffers: posts every request, then waits for all; throws the first error.
void p2pRunBatch(Communicator& comm, const std::vector<P2PCall>& reqs);

}  // namespace gdr::paths

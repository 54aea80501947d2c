// Point-to-point send/receive on host buffers. A lone call runs at once and
// returns when its buffer is done with. A batch (one communicator's share of
// a gdrGroupStart/gdrGroupEnd group, see comm/group.h) posts every call
// before waiting on any, so any pattern of sends and receives completes.
#pragma once

#include <cstddef>
#include <vector>

#include "comm/comm.h"

namespace gdr {

// One send or receive, as queued by a group (host or device buffers).
struct P2PRequest {
  bool isSend = false;
  const void* sendBuf = nullptr;
  void* recvBuf = nullptr;
  size_t count = 0;
  gdrDataType_t type = gdrUint8;
  int peer = 0;
  gdrStream_t stream = nullptr;
  bool preSealed = false;  // sealed by the GPU (see CollCall::preSealed)
};

void p2pSend(Communicator& comm, const void* buf, size_t count, gdrDataType_t type, int peer);
void p2pRecv(Communicator& comm, void* buf, size_t count, gdrDataType_t type, int peer);
// Host buffers: posts every request, then waits for all; throws the first error.
void p2pRunBatch(Communicator& comm, const std::vector<P2PRequest>& reqs);
// Drops messages a communicator being destroyed sent to itself.
void p2pForget(Communicator* comm);

}  // namespace gdr

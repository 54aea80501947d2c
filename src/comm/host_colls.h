// Collectives on host memory: arranges the buffers (in-place forms), picks
// and builds the schedule, runs it, and finishes avg.
#pragma once

#include "collectives/schedule.h"
#include "comm/comm.h"

namespace gdr {

struct CollCall {
  coll::CollKind kind;
  const void* sendbuf = nullptr;  // GDR_IN_PLACE already resolved: see inPlace
  void* recvbuf = nullptr;
  size_t count = 0;
  gdrDataType_t type = gdrUint8;
  gdrRedOp_t op = gdrSum;
  int root = 0;
  bool inPlace = false;
  // An all-gather given sendbuf == recvbuf: this rank's block is the first
  // `count` elements of recvbuf. It moves to its own slot and the call runs
  // in place (inPlace is set too).
  bool blockAtStart = false;
  // The buffers hold rows the GPU sealed (staged path, GDR_ENCRYPT=1):
  // transports send them without encrypting again (transport::kSigPreSealed).
  bool preSealed = false;
  const size_t* sendCounts = nullptr;
  const size_t* sendDispls = nullptr;
  const size_t* recvCounts = nullptr;
  const size_t* recvDispls = nullptr;
};

void runHostCollective(Communicator& comm, const CollCall& call);

}  // namespace gdr

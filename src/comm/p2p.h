// Point-to-point send/receive and groups. Outside a group a call runs at
// once and returns when its buffer is done with. Inside gdrGroupStart /
// gdrGroupEnd calls are queued (per thread) and gdrGroupEnd posts them all
// before waiting on any, so any pattern of sends and receives completes.
#pragma once

#include <cstddef>

#include "comm/comm.h"

namespace gdr {

void p2pSend(Communicator& comm, const void* buf, size_t count, gdrDataType_t type, int peer);
void p2pRecv(Communicator& comm, void* buf, size_t count, gdrDataType_t type, int peer);
void groupStart();
// Runs the queued calls; throws the first error (every queued call is
// dropped either way).
void groupEnd();
bool inGroup();
// Drops queued calls of a communicator being destroyed.
void groupForget(Communicator* comm);

}  // namespace gdr

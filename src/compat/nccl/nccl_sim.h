// ncclGroupSimulateEnd's estimate. Each collective queued in an open group
// notes its kind, count, type and root here; the estimate prices the notes
// with gdr-sim's model (src/sim, the schedules and the selector the library
// runs) on the cluster GDR_SIM_CLUSTER names: a preset or a description file,
// by default h200x2 (one host of the communicator's size of GPUs over NVLink),
// with the calibration of the build (GDR_SIM_CALIBRATION overrides it). Calls
// on one communicator add up; communicators of one group run side by side,
// so the group costs its slowest communicator. A communicator's sends and
// receives run together, priced as one exchange (sim/p2p.h: its peers do
// the mirror); gather and scatter as the all-to-all-v the library runs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "compat/nccl/nccl_compat.h"
#include "core/call.h"

namespace gdr::nccl {

enum class SimShape : uint8_t { Coll, Send, Recv, Gather, Scatter };

struct SimCall {
  bool priced = false;
  CollKind kind = CollKind::AllReduce;
  size_t count = 0;  // the NCCL call's count (per rank for the gathers and all-to-all)
  ncclDataType_t type = ncclFloat32;
  int root = 0;  // the root, or a send's or receive's peer
  SimShape shape = SimShape::Coll;
};

inline SimCall simCall(CollKind kind, size_t count, ncclDataType_t type, int root = 0) {
  return SimCall{true, kind, count, type, root};
}
// A send, receive, gather or scatter (`peer`: the peer or the root).
inline SimCall simOther(SimShape shape, size_t count, ncclDataType_t type, int peer) {
  return SimCall{true, CollKind::AllToAllv, count, type, peer, shape};
}

// Notes a call queued in this thread's open group on `comm`.
void groupNoteSim(const Comm& comm, const SimCall& call);
// Drops this thread's notes (the group ran or was discarded).
void groupClearSim();
// The notes' estimated time in microseconds (0 without any); throws
// InvalidArgument for a bad GDR_SIM_CLUSTER or calibration.
float groupSimulatedUs();

}  // namespace gdr::nccl

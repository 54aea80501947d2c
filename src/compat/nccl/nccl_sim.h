// ncclGroupSimulateEnd's estimate. Each collective queued in an open group
// notes its kind, count, type and root here; the estimate prices the notes
// with gdr-sim's model (src/sim, the schedules and the selector the library
// runs) on the cluster GDR_SIM_CLUSTER names: a preset or a description file,
// by default h200x2 (one host of the communicator's size of GPUs over NVLink),
// with the calibration of the build (GDR_SIM_CALIBRATION overrides it). Calls
// on one communicator add up; communicators of one group run side by side,
// so the group costs its slowest communicator. Send, receive, gather and
// scatter have no schedule in the model and add nothing.
#pragma once

#include <cstddef>

#include "compat/nccl/nccl_compat.h"
#include "core/call.h"

namespace gdr::nccl {

struct SimCall {
  bool priced = false;
  CollKind kind = CollKind::AllReduce;
  size_t count = 0;  // the NCCL call's count (per rank for the gathers and all-to-all)
  ncclDataType_t type = ncclFloat32;
  int root = 0;
};

inline SimCall simCall(CollKind kind, size_t count, ncclDataType_t type, int root = 0) {
  return SimCall{true, kind, count, type, root};
}

// Notes a call queued in this thread's open group on `comm`.
void groupNoteSim(const Comm& comm, const SimCall& call);
// Drops this thread's notes (the group ran or was discarded).
void groupClearSim();
// The notes' estimated time in microseconds (0 without any); throws
// InvalidArgument for a bad GDR_SIM_CLUSTER or calibration.
float groupSimulatedUs();

}  // namespace gdr::nccl

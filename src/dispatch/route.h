// The one router: which path runs a call, for every collective and
// send/recv, whether it comes from the C API, from a group or from the NCCL
// face (which calls the C API).
//
// - Host buffers: the host path (schedules over the endpoints, paths/host.h
//   and paths/p2p.h).
// - Device buffers: the GPUDirect path (paths/direct/path.h) where every
//   peer is reached over verbs that take device memory, else the device
//   path (paths/device.h), which takes the fused cuda_ipc kernels where every
//   rank shares a host and the staged path (paths/staged/path.h) otherwise.
//   Device work runs with the communicator's CUDA device set.
//
// Ordering between paths: host work on a communicator waits until the staged
// and GPUDirect device work queued before it on that communicator has run,
// since their progress threads drive the same endpoints. The rule holds for
// lone calls and for the calls of a group alike.
#pragma once

#include <vector>

#include "comm/comm.h"
#include "core/call.h"

namespace gdr::dispatch {

// A collective from the API: queued when this thread has a group open (see
// dispatch/group.h), else run now.
void collective(Communicator& comm, const CollCall& call, bool onDevice, gdrStream_t stream);
// A send or receive from the API: queued inside a group, else run now.
void p2p(Communicator& comm, const P2PCall& call, bool onDevice);

// Runs a collective now, on the path its buffers take.
void runCollective(Communicator& comm, const CollCall& call, bool onDevice, gdrStream_t stream);
// Runs a batch of send/recv now: the device ones first (they only enqueue),
// then the host ones, all posted before any is waited for. Clears both.
void runP2PBatch(Communicator& comm, std::vector<P2PCall>& host, std::vector<P2PCall>& device);

}  // namespace gdr::dispatch

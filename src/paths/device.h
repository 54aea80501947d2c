// Collectives and send/recv on device buffers. Stream-ordered: enqueued on
// the caller's stream, returning at once.
//
// - All ranks on one host (and GDR_CUDA_IPC on): one fused kernel per
//   collective over the cuda_ipc transport (transport/cuda_ipc), set up at
//   the communicator's first device operation (of any kind). No host round trip, no host
//   sync; capturable in CUDA graphs.
// - Otherwise (ranks on several hosts, GDR_TRANSPORT=socket, more than 8
//   local ranks): the staged path (paths/staged/path.h), stream-ordered
//   through pinned host memory and its progress thread. The router sends
//   device work to the GPUDirect path (paths/direct/path.h) instead where
//   that was chosen for the communicator.
#pragma once

#include <vector>

#include "comm/comm.h"
#include "core/cuda.h"
#include "paths/host.h"
#include "paths/p2p.h"

namespace gdr::paths {

// True if the call's buffers are device memory, false if host memory;
// throws InvalidArgument on a mix. Without a usable device every buffer is
// host memory, and the pointers are not asked about (two calls saved on
// every small host collective).
bool isDeviceCallAsked(const void* a, const void* b);
inline bool isDeviceCall(const void* a, const void* b = nullptr) {
  return anyCudaDevice() && isDeviceCallAsked(a, b);
}

// `stream` is a cudaStream_t (gdrStream_t).
void runDeviceCollective(Communicator& comm, const CollCall& call, gdrStream_t stream);
void deviceSend(Communicator& comm, const void* buf, size_t count, gdrDataType_t type, int peer, gdrStream_t stream);
void deviceRecv(Communicator& comm, void* buf, size_t count, gdrDataType_t type, int peer, gdrStream_t stream);
// One communicator's device send/recv queued by a group (dispatch/group.h): the
// k-th kernel carries the k-th send and receive of every peer.
void deviceP2PBatch(Communicator& comm, const std::vector<P2PCall>& reqs);
// True when device work on `comm` only enqueues kernels (cuda_ipc set up and
// healthy), so a group can launch it from the calling thread.
bool deviceOpsAsync(const Communicator& comm);

}  // namespace gdr::paths

// Peer access between two devices of this process: ranks that live in one
// process (one process driving several GPUs, or several communicators on
// one GPU) reach each other's device memory by raw pointer, since
// cudaIpcOpenMemHandle refuses a handle of its own process.
#pragma once

#include <cuda_runtime_api.h>

namespace gdr::transport::cuda_ipc {

// Lets `myDevice` (the current device) access `peerDevice`'s memory; success
// when they are the same device or access is on already.
cudaError_t enablePeerAccess(int myDevice, int peerDevice);

}  // namespace gdr::transport::cuda_ipc

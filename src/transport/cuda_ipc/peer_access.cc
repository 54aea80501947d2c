#include "transport/cuda_ipc/peer_access.h"

namespace gdr::transport::cuda_ipc {

cudaError_t enablePeerAccess(int myDevice, int peerDevice) {
  if (peerDevice == myDevice) return cudaSuccess;
  int can = 0;
  cudaError_t rc = cudaDeviceCanAccessPeer(&can, myDevice, peerDevice);
  if (rc != cudaSuccess) return rc;
  if (!can) return cudaErrorPeerAccessUnsupported;
  rc = cudaDeviceEnablePeerAccess(peerDevice, 0);
  if (rc == cudaErrorPeerAccessAlreadyEnabled) {
    cudaGetLastError();
    return cudaSuccess;
  }
  return rc;
}

}  // namespace gdr::transport::cuda_ipc

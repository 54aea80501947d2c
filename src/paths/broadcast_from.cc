#include "paths/broadcast_from.h"

#include <cstring>

#include "core/cuda.h"
#include "core/datatype.h"
#include "core/error.h"

#if GDR_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace gdr::paths {

CollCall rootCopiedFirst(const CollCall& call, bool onDevice, gdrStream_t stream) {
  if (!isBroadcastFrom(call)) return call;
  const size_t bytes = call.count * gdr::typeSize(call.type);
  if (!onDevice) {
    if (bytes) std::memmove(call.recvbuf, call.sendbuf, bytes);
  } else {
#if GDR_HAVE_CUDA
    if (bytes)
      checkCuda(cudaMemcpyAsync(call.recvbuf, call.sendbuf, bytes, cudaMemcpyDeviceToDevice,
                                reinterpret_cast<cudaStream_t>(stream)),
                "cudaMemcpyAsync (the broadcast root's sendbuf to its recvbuf)");
#else
    (void)stream;
    throw NotSupported("this build of gdrcoll has no CUDA support");
#endif
  }
  CollCall c = call;
  c.sendbuf = c.recvbuf;
  return c;
}

}  // namespace gdr::paths

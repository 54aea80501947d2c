// An out-of-place broadcast (gdrBroadcastFrom: the root's sendbuf is not its
// recvbuf) on a path that broadcasts in place: the root copies sendbuf into
// recvbuf first, in stream order for device buffers, and the call goes on in
// place. The cuda_ipc kernel and one-rank communicators do the copy as part
// of the call instead.
#pragma once

#include "core/call.h"
#include "gdrcoll.h"

namespace gdr::paths {

inline bool isBroadcastFrom(const CollCall& call) {
  return call.kind == CollKind::Broadcast && call.sendbuf != call.recvbuf;
}

// `call` itself unless it is an out-of-place broadcast; then the copy is
// made (a memcpy, or a cudaMemcpyAsync on `stream`) and the in-place call
// returned.
CollCall rootCopiedFirst(const CollCall& call, bool onDevice, gdrStream_t stream);

}  // namespace gdr::paths

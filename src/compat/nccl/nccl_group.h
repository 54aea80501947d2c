// NCCL groups over gdrcoll. Inside ncclGroupStart/ncclGroupEnd nothing
// blocks: calls are queued per thread and ncclGroupEnd runs them. Each
// communicator's queue runs on its own thread when the group spans several
// (one thread driving several ranks would otherwise wait on itself):
// collectives and splits first, in call order, then every send and receive
// together inside one gdrGroupStart/gdrGroupEnd, so any send/recv pattern
// completes. Communicators created inside the group rendezvous on threads of
// their own; ncclGroupEnd waits for the blocking ones.
#pragma once

#include <functional>

#include "compat/nccl/nccl_compat.h"

namespace gdr::nccl {

bool groupActive();
void groupStart();
// Runs the queued calls. On failure the first error's text is this thread's
// last error (it was logged where it happened).
ncclResult_t groupEnd();
// Closes one level of the group; at the outermost, drops its queued calls
// unrun (inits already started go on). No-op outside a group.
void groupDiscard();
// An init started inside the group (on its own thread).
void groupNoteInit(Comm* comm);
// Queues a call on `comm`; p2p calls run inside one gdr group per communicator.
void groupDefer(Comm* comm, bool p2p, std::function<ncclResult_t()> call);

}  // namespace gdr::nccl

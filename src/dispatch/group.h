// Groups (gdrGroupStart / gdrGroupEnd) of the native API. Inside a group
// nothing blocks: collectives and send/recv are queued per communicator, and
// gdrCommInitRank returns a pending handle whose rendezvous is queued too.
// gdrGroupEnd runs it all:
//
// - one communicator and no init: on the calling thread, as before groups
//   could hold collectives (no thread, no copy beyond the queue);
// - device work only, on communicators whose device path is ready and never
//   blocks the host (cuda_ipc kernels): launched on the calling thread, each
//   communicator's share with its device set;
// - otherwise (several communicators driven by one thread, as an NCCL
//   program drives one GPU each, or any pending init): one worker thread per
//   communicator, with the communicator's CUDA device set, running its init
//   and then its share in order. Each share's send/recv between two
//   collectives form one batch (posted together, any pattern completes).
//
// gdrGroupEnd returns when every share is done (host buffers complete,
// device work enqueued) with the first error; a failed init leaves its
// communicator in the error state. A gdrCommInitRank that failed inside the
// group fails the group's other pending inits instead of leaving them to
// wait for a rank that will never come.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "bootstrap/bootstrap.h"
#include "comm/comm.h"
#include "core/call.h"

namespace gdr::dispatch {

void groupStart();
// Runs the outermost group's queued work; throws the first error (every
// queued call is dropped either way).
void groupEnd();
bool inGroup();
// Drops the queued work and pending init of a communicator being destroyed.
void groupForget(Communicator* comm);

using BootstrapFactory = std::function<std::unique_ptr<boot::Bootstrap>()>;
// Queues comm->start(make()) for the end of the group.
void groupAddInit(Communicator* comm, BootstrapFactory make);
// True when this thread's open group holds comm's pending init.
bool groupOwnsInit(const Communicator* comm);
// A gdrCommInitRank inside the group failed with (code, text).
void groupNoteInitError(gdrResult_t code, const std::string& text);

// `call` is copied (all-to-all-v count arrays included).
void groupAddColl(Communicator& comm, const CollCall& call, bool onDevice, gdrStream_t stream);
void groupAddP2P(Communicator& comm, const P2PCall& req, bool onDevice);

}  // namespace gdr::dispatch

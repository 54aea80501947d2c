// Groups (gdrGroupStart / gdrGroupEnd, and NCCL's ncclGroupStart /
// ncclGroupEnd, which are the same groups). Inside a group nothing blocks:
// collectives and send/recv are queued per communicator, and gdrCommInitRank
// returns a pending handle whose rendezvous is queued too. gdrGroupEnd runs
// it all:
//
// - one communicator and no init: on the calling thread, as before groups
//   could hold collectives (no thread, no copy beyond the queue);
// - device work only, on communicators whose device path is ready and never
//   blocks the host (cuda_ipc kernels): launched on the calling thread, each
//   communicator's share with its device set;
// - otherwise (several communicators driven by one thread, as an NCCL
//   program drives one GPU each, or any pending init): one worker thread per
//   communicator, with the communicator's CUDA device set, running its init
//   and then its share.
//
// A share runs in the group's order, which its outermost start chose:
// - InOrder (gdrGroupStart): the calls in order, each run of send/recv
//   between two collectives one batch (posted together, any pattern
//   completes);
// - CollectivesFirst (ncclGroupStart): the collectives and steps in order,
//   then every send and receive of the share in one batch, so a group that
//   sends, runs a collective and then receives the matching message
//   completes, as in NCCL, where a group's operations run concurrently.
//
// Besides calls a share holds steps: work a translated call needs at its
// place in the order (the copy an out-of-place broadcast makes first, the
// copy of a reduce-scatter's result to where NCCL puts it, an NCCL split).
//
// A deferred member stands for a communicator that is still being made when
// work is queued for it (an NCCL communicator whose init runs on a thread
// of its own). At the group's end, on its own thread, it waits for the
// communicator, then replays the queued calls inside a group of that
// thread's own (same order), so they queue and run as if made then.
//
// gdrGroupEnd returns when every share is done (host buffers complete,
// device work enqueued) with the first error; a failed init leaves its
// communicator in the error state. A gdrCommInitRank that failed inside the
// group fails the group's other pending inits instead of leaving them to
// wait for a rank that will never come.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "bootstrap/bootstrap.h"
#include "comm/comm.h"
#include "core/call.h"

namespace gdr::dispatch {

enum class GroupOrder : uint8_t { InOrder, CollectivesFirst };

// Opens a group; the outermost start's order is the group's.
void groupStart(GroupOrder order = GroupOrder::InOrder);
// Runs the outermost group's queued work; throws the first error (every
// queued call is dropped either way).
void groupEnd();
// Closes one level without running anything; at the outermost, drops the
// queued work and fails the pending inits (ncclGroupSimulateEnd).
void groupDiscard();
bool inGroup();
// Drops the queued work and pending init of a communicator being destroyed
// (a Communicator*, or a deferred member's key).
void groupForget(const void* key);

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
// Queues `step` at this place in comm's share (counted with its
// collectives); it runs outside any group and throws to fail the share.
void groupAddStep(Communicator& comm, std::function<void()> step);

// Queues `replay` on the deferred member named `key` (made on its first
// use, with `wait`, which returns once the communicator exists and throws
// if its creation failed; a later call's `wait` is ignored). `replay` may be
// empty: the group then only waits.
void groupAddDeferred(const void* key, std::function<void()> wait, std::function<void()> replay);
// True when this thread's open group holds a deferred member named `key`
// (work for it must then be deferred too, to keep its order).
bool groupDefers(const void* key);

}  // namespace gdr::dispatch

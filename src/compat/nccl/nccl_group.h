// NCCL groups are gdrcoll's groups (dispatch/group.h), in NCCL's order:
// ncclGroupStart opens one with GroupOrder::CollectivesFirst, so each
// communicator's collectives (and splits) run in call order, then all its
// send/recv in one batch. What the face adds is translation only:
// - a call on a communicator that exists is made at once (its gdr* calls
//   queue in the group); a call on one whose init still runs on a thread of
//   its own (non-blocking, or created inside this group) is deferred: the
//   group's deferred member for it waits for the init at the group's end,
//   then replays the call;
// - work a translated call needs besides gdr* calls (a copy, a split) is a
//   step of the group, at its place in the order (groupStep);
// - ncclGroupEnd waits for the blocking inits made inside the group and
//   returns ncclInProgress while a non-blocking one still runs.
#pragma once

#include <functional>

#include "compat/nccl/nccl_compat.h"

namespace gdr::nccl {

bool groupActive();
void groupStart();
// Closes one level; at the outermost, runs the group. Throws its first
// error; returns ncclInProgress while a non-blocking init made inside it
// still runs.
ncclResult_t groupEnd();
// Closes one level of the group; at the outermost, drops its queued calls
// unrun (inits already started go on). No-op outside a group.
void groupDiscard();
// An init started inside the group (on its own thread).
void groupNoteInit(Comm* comm);
// Drops the group's deferred calls on a communicator being destroyed.
void groupForget(Comm* comm);
// Inside a group, when `comm`'s init still runs (or its calls are deferred
// already): queues `replay` for the group's end and returns true. Otherwise
// returns false and the caller makes the call now.
bool groupDefer(Comm& comm, std::function<void()> replay);
// Runs `step` now outside a group; inside one, queues it at this place in
// `comm`'s share (comm is initialized).
void groupStep(Comm& comm, std::function<void()> step);

}  // namespace gdr::nccl

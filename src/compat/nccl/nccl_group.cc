#include "compat/nccl/nccl_group.h"

#include <vector>

#include "compat/nccl/nccl_sim.h"
#include "core/cuda.h"
#include "dispatch/group.h"

namespace gdr::nccl {

namespace {

// The non-blocking communicators created inside this thread's open group:
// ncclGroupEnd returns ncclInProgress while one of them still initializes.
thread_local std::vector<Comm*> tNonBlocking;

// Joins a blocking init made inside the group; throws its error.
void waitInit(Comm* c) {
  {
    std::lock_guard<std::mutex> lk(c->threadMu);
    if (c->initThread.joinable()) c->initThread.join();
  }
  const int st = c->initState.load();
  if (st == ncclSuccess) return;
  std::lock_guard<std::mutex> lk(c->mu);
  throw GdrCallError(toGdr(static_cast<ncclResult_t>(st)), c->lastError);
}

void clearAtOutermost() {
  if (dispatch::inGroup()) return;
  groupClearSim();
  tNonBlocking.clear();
}

}  // namespace

bool groupActive() { return dispatch::inGroup(); }

void groupStart() { dispatch::groupStart(dispatch::GroupOrder::CollectivesFirst); }

ncclResult_t groupEnd() {
  if (!dispatch::inGroup()) throw InvalidUsage("ncclGroupEnd without ncclGroupStart");
  std::vector<Comm*> nonBlocking = tNonBlocking;
  try {
    dispatch::groupEnd();
  } catch (...) {
    clearAtOutermost();
    throw;
  }
  if (dispatch::inGroup()) return ncclSuccess;
  clearAtOutermost();
  for (Comm* c : nonBlocking)
    if (c && c->initState.load() == ncclInProgress) return ncclInProgress;
  return ncclSuccess;
}

void groupDiscard() {
  if (!dispatch::inGroup()) return;
  dispatch::groupDiscard();
  clearAtOutermost();  // each init finishes on its own thread; using the communicator waits for it
}

void groupNoteInit(Comm* comm) {
  if (comm->blocking)
    dispatch::groupAddDeferred(comm, std::bind(waitInit, comm), nullptr);
  else
    tNonBlocking.push_back(comm);
}

void groupForget(Comm* comm) {
  if (!dispatch::inGroup()) return;
  dispatch::groupForget(comm);
  for (Comm*& c : tNonBlocking)
    if (c == comm) c = nullptr;
}

bool groupDefer(Comm& comm, std::function<void()> replay) {
  if (!dispatch::inGroup()) return false;
  if (!dispatch::groupDefers(&comm) && comm.initState.load() != ncclInProgress) return false;
  dispatch::groupAddDeferred(&comm, std::bind(readyComm, &comm), std::move(replay));
  return true;
}

void groupStep(Comm& comm, std::function<void()> step) {
  if (!dispatch::inGroup()) return step();
  // With the communicator's device current, as its calls run: a step may
  // copy on its stream.
  dispatch::groupAddStep(*comm.gdr, [device = comm.cudaDev, step = std::move(step)] {
    ScopedDevice d(device);
    step();
  });
}

}  // namespace gdr::nccl

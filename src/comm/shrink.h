// gdrCommShrink: the ranks still alive agree on who they are and build a
// communicator of just those ranks, over the recovery listeners
// (comm/recovery.h), neither the bootstrap (which may have died with a rank,
// or be MPI, which cannot carry on) nor the broken endpoints.
//
// The agreement has a coordinator, the lowest rank every survivor's probes
// find alive. Each survivor sends it the ranks it knows are out; the
// coordinator waits (GDR_TIMEOUT_MS at most) until every rank has either
// checked in or stopped listening, and answers each with the members. A
// survivor that loses the coordinator (it died during the agreement) counts
// it out and starts again with the next; at most one attempt per rank. The
// coordinator becomes rank 0 of the new communicator and carries its
// set-up exchange over the same connections (a star), with a job secret
// derived from the old one and a fresh nonce, so the new communicator has
// new keys and new endpoints; if a member dies during that set-up, the
// survivors agree again.
#pragma once

#include <vector>

#include "comm/comm.h"

namespace gdr {

// Collective over the survivors of `old`; `exclude` (the same on every rank)
// names ranks to leave out even if alive. Returns the new communicator
// (unregistered, with `old`'s device), or throws (RemoteError for a rank the
// others left out).
gdrComm* shrinkCommunicator(Communicator& old, const std::vector<int>& exclude);

}  // namespace gdr

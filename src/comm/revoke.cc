// gdrCommRevoke. The request is a flag every wait and every call checks; the
// notice to the peers goes out through fail(), whose abort notices reach
// every endpoint, from whichever thread drives the communicator, so no two
// threads touch an endpoint at once.
#include "comm/comm.h"
#include "core/error.h"
#include "core/log.h"

namespace gdr {

void Communicator::requestRevoke() noexcept {
  revokeRequested_.store(true);
  // The registry's reference and the revoking call's: no other call is in
  // progress, and one that starts from now on sees the flag before it
  // touches an endpoint (both sides are sequentially consistent), so this
  // thread may tell the peers. Otherwise the call in progress does, from its
  // wait or, if it ends first, the next call or the free.
  if (refs_.load() <= 2) applyRevoke();
}

void Communicator::applyRevoke() noexcept {
  if (asyncCode_.load() != gdrSuccess) return;  // the peers were told of the first failure
  GDR_INFO(kInit, "rank %d: revoking the communicator", rank_);
  fail(gdrRemoteError, strprintf("the communicator was revoked (gdrCommRevoke on rank %d)", rank_));
}

}  // namespace gdr

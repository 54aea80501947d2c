// gdrCommRevoke. The request is a flag every wait and every call checks; the
// notice to the peers goes out through fail(), whose abort notices reach
// every endpoint, from whichever thread drives the communicator, so no two
// threads touch an endpoint at once.
#include "comm/comm.h"
#include "core/error.h"
#include "core/log.h"

namespace gdr {

void Communicator::applyRevoke() noexcept {
  if (asyncCode_.load() != gdrSuccess) return;  // the peers were told of the first failure
  GDR_INFO(kInit, "rank %d: revoking the communicator", rank_);
  fail(gdrRemoteError, strprintf("the communicator was revoked (gdrCommRevoke on rank %d)", rank_));
}

}  // namespace gdr

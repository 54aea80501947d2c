// gdrCommRevoke. The request is a flag every wait and every call checks; the
// notice to the peers goes out through fail(), whose abort notices reach
// every endpoint, from whichever thread drives the communicator, so no two
// threads touch an endpoint at once: the caller's, or, while staged work
// may run, the staged path's progress thread (an AsyncDriver).
#include "comm/comm.h"
#include "core/error.h"
#include "core/log.h"

namespace gdr {

void Communicator::applyRevoke() noexcept {
  if (asyncCode_.load() != gdrSuccess) return;  // the peers were told of the first failure
  if (AsyncDriver* d = asyncDriver_.load()) {
    d->takeRevoke();
    return;
  }
  revokeHere();
}

void Communicator::revokeHere() noexcept {
  if (asyncCode_.load() != gdrSuccess) return;
  GDR_INFO(kInit, "rank %d: revoking the communicator", rank_);
  fail(gdrRemoteError, strprintf("the communicator was revoked (gdrCommRevoke on rank %d)", rank_));
}

void Communicator::driverFailed(gdrResult_t code, const std::string& text) noexcept {
  if (revokeRequested())
    revokeHere();
  else
    fail(code, text);
}

}  // namespace gdr

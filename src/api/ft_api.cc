// Fault-tolerance entry points of the C API: revoke and shrink.
#include <vector>

#include "api/guard.h"
#include "dispatch/group.h"
#include "comm/shrink.h"

using gdr::api::checkComm;
using gdr::api::guarded;

extern "C" {

// The revoking thread tells the peers itself only when no other call holds
// the communicator (so no two threads touch an endpoint at once): the flag
// is set first, and a call that starts after the check sees it before it
// touches an endpoint (api/comm_use.h). Otherwise the call in progress tells
// them from its wait, or, if it ends first, the next call or the free does.
gdrResult_t gdrCommRevoke(gdrComm_t comm) {
  return guarded("gdrCommRevoke", nullptr, [&] {
    gdr::api::CommUse use = gdr::api::useComm(comm);
    if (!use.get()) throw gdr::InvalidArgument("comm is not a live communicator");
    gdr::Communicator& c = *use.get();
    if (c.pending())
      throw gdr::InvalidUsage("the communicator is not connected yet (inside a group)");
    c.requestRevoke();
    if (!gdr::api::usedByAnotherCall(&c, use.counted())) c.applyRevoke();
  });
}

gdrResult_t gdrCommShrink(gdrComm_t comm, const int* excludeRanks, int excludeCount,
                          gdrComm_t* newcomm) {
  return guarded("gdrCommShrink", comm, [&] {
    GDR_CHECK_ARG(newcomm, "newcomm (the output pointer) is NULL");
    *newcomm = nullptr;
    gdr::Communicator& c = checkComm(comm);
    GDR_CHECK_ARG(excludeCount >= 0, "excludeCount is negative (%d)", excludeCount);
    GDR_CHECK_ARG(excludeCount == 0 || excludeRanks, "excludeRanks is NULL but excludeCount is %d",
                  excludeCount);
    if (gdr::dispatch::inGroup())
      throw gdr::InvalidUsage("gdrCommShrink is not allowed inside gdrGroupStart/gdrGroupEnd");
    std::vector<int> exclude(excludeRanks, excludeRanks + excludeCount);
    gdrComm* n = gdr::shrinkCommunicator(c, exclude);
    gdr::api::registerComm(n);
    *newcomm = n;
  });
}

}  // extern "C"

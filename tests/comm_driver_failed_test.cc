// Communicator::driverFailed: what a device path's progress thread (an
// AsyncDriver: the staged and GPUDirect paths) does with a failed job. A
// revoke requested meanwhile is applied there (the communicator fails with
// gdrRemoteError naming the revoke, whatever the job's own error was);
// otherwise the job's error becomes the communicator's.
#include <gtest/gtest.h>

#include <string>

#include "comm/comm.h"
#include "support/multiproc.h"

namespace {

gdrResult_t asyncOf(gdrComm_t comm) {
  gdrResult_t a = gdrSuccess;
  gdrCommGetAsyncError(comm, &a);
  return a;
}

// The text a later call fails with.
std::string laterError(gdrComm_t comm) {
  EXPECT_NE(gdrBarrier(comm, nullptr), gdrSuccess);
  return gdrGetLastError(comm);
}

int check(bool revoke, gdrComm_t comm) {
  auto& c = *static_cast<gdr::Communicator*>(comm);
  if (revoke) c.requestRevoke();
  c.driverFailed(gdrInternalError, "a job of the progress thread failed");
  const gdrResult_t a = asyncOf(comm);
  const std::string text = laterError(comm);
  if (revoke) {
    CHILD_CHECK(a == gdrRemoteError, "revoke requested: async error %d, want gdrRemoteError", a);
    CHILD_CHECK(text.find("revoked") != std::string::npos, "not named a revoke: %s", text.c_str());
  } else {
    CHILD_CHECK(a == gdrInternalError, "async error %d, want the job's gdrInternalError", a);
    CHILD_CHECK(text.find("a job of the progress thread failed") != std::string::npos,
                "not the job's error: %s", text.c_str());
  }
  return gdrtest::childFailures() ? 1 : 0;
}

TEST(CommDriverFailed, ARequestedRevokeIsAppliedElseTheJobsErrorStands) {
  for (bool revoke : {false, true}) {
    auto exits = gdrtest::runRanks(
        1, [revoke](int, int, gdrComm_t comm) { return check(revoke, comm); }, {}, 60);
    std::string why;
    EXPECT_TRUE(gdrtest::allOk(exits, &why)) << (revoke ? "revoke: " : "failure: ") << why;
  }
}

}  // namespace

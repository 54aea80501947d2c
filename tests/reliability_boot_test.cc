// The TCP bootstrap under hostile or broken conditions: an idle connection
// to the rendezvous port delays nobody, and a rank the rendezvous refuses (or
// one left waiting for ranks that never come) learns why.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "core/net.h"
#include "support/exit_checks.h"
#include "support/multiproc.h"

namespace {

using gdrtest::contains;

// Before, the service served one connection at a time and gave the idle one
// GDR_AUTH_TIMEOUT_MS (10 s) to speak, so a 3 s GDR_TIMEOUT_MS failed init.
TEST(ReliabilityBoot, IdleConnectionToTheRendezvousDelaysNoRank) {
  int idle = -1;
  auto t0 = std::chrono::steady_clock::now();
  auto exits = gdrtest::runRanks(
      3,
      [](int rank, int, gdrComm_t comm) {
        float x = 1;
        gdrResult_t r = gdrAllReduce(GDR_IN_PLACE, &x, 1, gdrFloat32, gdrSum, comm, nullptr);
        CHILD_CHECK(r == gdrSuccess && x == 3.0f, "rank %d: %d %s", rank, r, gdrGetLastError(comm));
        return 0;
      },
      {{"GDR_TIMEOUT_MS", "3000"}, {"GDR_AUTH_TIMEOUT_MS", "10000"}}, 60, nullptr,
      [&idle](const gdrUniqueId& id) {
        idle = gdr::net::connectTo(gdr::boot::rendezvousAddress(id), gdr::net::deadlineFromNow(),
                                   "the service");
        usleep(50 * 1000);  // the service has accepted it before any rank connects
      });
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (idle >= 0) close(idle);
  gdrtest::expectAllOk(exits);
  EXPECT_LT(secs, 2.5) << "the idle connection delayed init";
}

struct InitResult {
  gdrResult_t code = gdrInternalError;
  std::string text;
  gdrComm_t comm = nullptr;
};

// Runs gdrCommInitRank on a thread of this process (the bootstrap needs no
// separate processes) and reports how it ended.
std::thread initOnThread(const gdrUniqueId& id, int nranks, int rank, InitResult* out) {
  return std::thread([=] {
    out->code = gdrCommInitRank(&out->comm, nranks, id, rank);
    out->text = gdrGetLastError(nullptr);
  });
}

// Ranks the service refuses hear the reason (before, "the rendezvous
// service closed the connection"); the job still forms with the right ranks.
TEST(ReliabilityBoot, RefusedRanksLearnWhy) {
  setenv("GDR_TIMEOUT_MS", "10000", 1);
  gdrUniqueId id;
  ASSERT_EQ(gdrGetUniqueId(&id), gdrSuccess);
  InitResult first, wrongSize, duplicate, second;
  std::thread a = initOnThread(id, 2, 0, &first);
  usleep(300 * 1000);
  std::thread b = initOnThread(id, 3, 1, &wrongSize);
  b.join();
  std::thread c = initOnThread(id, 2, 0, &duplicate);
  c.join();
  std::thread d = initOnThread(id, 2, 1, &second);
  a.join();
  d.join();
  unsetenv("GDR_TIMEOUT_MS");
  EXPECT_EQ(wrongSize.code, gdrInvalidUsage) << wrongSize.text;
  EXPECT_TRUE(contains(wrongSize.text.c_str(), "3 ranks")) << wrongSize.text;
  EXPECT_EQ(duplicate.code, gdrInvalidUsage) << duplicate.text;
  EXPECT_TRUE(contains(duplicate.text.c_str(), "already checked in")) << duplicate.text;
  EXPECT_EQ(first.code, gdrSuccess) << first.text;
  EXPECT_EQ(second.code, gdrSuccess) << second.text;
  if (first.comm) gdrCommDestroy(first.comm);
  if (second.comm) gdrCommDestroy(second.comm);
}

// A rank left waiting for ranks that never come is told which are missing.
TEST(ReliabilityBoot, WaitingRankLearnsWhichRanksAreMissing) {
  setenv("GDR_TIMEOUT_MS", "1500", 1);
  gdrUniqueId id;
  ASSERT_EQ(gdrGetUniqueId(&id), gdrSuccess);
  InitResult only;
  initOnThread(id, 3, 1, &only).join();
  unsetenv("GDR_TIMEOUT_MS");
  EXPECT_NE(only.code, gdrSuccess);
  EXPECT_TRUE(contains(only.text.c_str(), "rank(s) 0, 2 did not check in")) << only.text;
}

}  // namespace

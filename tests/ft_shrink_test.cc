// Revoke and shrink (the ULFM shape): a rank killed in a loop of
// all-reduces at np 4, the survivors shrink and finish the loop on 3 ranks
// with correct results; a revoke makes every pending and later call on
// every rank fail fast; excluded ranks are left out of a shrink.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "support/exit_checks.h"
#include "support/multiproc.h"

namespace {

using gdrtest::contains;
using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

constexpr int kIters = 12;
constexpr size_t kCount = 4099;  // odd: uneven blocks

// Rank `victim` dies (GDR_FAULT kill, its own environment only) at a
// middle step of the fifth all-reduce. The survivors shrink, agree on the
// first iteration any of them lacks (an all-reduce of the minimum on the
// new communicator, as a ULFM program does) and finish the loop; every
// result is checked against the ranks that took part.
void killAndShrink(const char* transport, int victim) {
  const std::string fault = std::to_string(victim) + ":5:middle:kill";
  auto exits = gdrtest::runRanks(
      4,
      [&](int rank, int, gdrComm_t comm) {
        std::vector<int> alive = {0, 1, 2, 3};
        gdrComm_t cur = comm;
        std::vector<double> in(kCount), out(kCount);
        int shrinks = 0;
        for (int i = 0; i < kIters;) {
          for (size_t k = 0; k < kCount; ++k) in[k] = (rank + 1) * 1000.0 + i + k % 7;
          gdrResult_t r =
              gdrAllReduce(in.data(), out.data(), kCount, gdrFloat64, gdrSum, cur, nullptr);
          if (r == gdrSuccess) {
            for (size_t k = 0; k < kCount; ++k) {
              double want = 0;
              for (int a : alive) want += (a + 1) * 1000.0 + i + k % 7;
              if (out[k] != want) {
                CHILD_CHECK(out[k] == want, "%s iteration %d element %zu: %g, want %g", transport,
                            i, k, out[k], want);
                break;
              }
            }
            ++i;
            continue;
          }
          CHILD_CHECK(shrinks == 0, "%s: a second failure at iteration %d: %s", transport, i,
                      gdrGetLastError(cur));
          if (shrinks++) break;
          CHILD_CHECK(contains(gdrGetLastError(cur), ("rank " + std::to_string(victim)).c_str()) ||
                          contains(gdrGetLastError(cur), "revoked"),
                      "%s: the failure names neither rank %d nor a revoke: %s", transport, victim,
                      gdrGetLastError(cur));
          auto t0 = Clock::now();
          gdrComm_t next = nullptr;
          r = gdrCommShrink(cur, nullptr, 0, &next);
          CHILD_CHECK(r == gdrSuccess && next, "%s: shrink failed: %s", transport,
                      gdrGetLastError(cur));
          if (r != gdrSuccess) break;
          CHILD_CHECK(msSince(t0) < 8000, "%s: shrink took %.0f ms", transport, msSince(t0));
          int size = 0, newRank = -1;
          gdrCommSize(next, &size);
          gdrCommRank(next, &newRank);
          alive.erase(alive.begin() + victim);
          int wantRank = rank - (rank > victim ? 1 : 0);
          CHILD_CHECK(size == 3 && newRank == wantRank, "%s: shrunk to rank %d of %d, want %d of 3",
                      transport, newRank, size, wantRank);
          if (cur != comm) gdrCommDestroy(cur);
          cur = next;
          int resume = i;
          r = gdrAllReduce(&resume, &resume, 1, gdrInt32, gdrMin, cur, nullptr);
          CHILD_CHECK(r == gdrSuccess, "%s: the agreement on the iteration failed: %s", transport,
                      gdrGetLastError(cur));
          if (r != gdrSuccess) break;
          CHILD_CHECK(resume >= 3 && resume <= 5, "%s: resuming at iteration %d", transport,
                      resume);
          i = resume;
        }
        CHILD_CHECK(shrinks == 1, "%s: rank %d shrank %d times", transport, rank, shrinks);
        if (cur != comm) gdrCommDestroy(cur);
        return gdrtest::childFailures() ? 1 : 0;
      },
      {{"GDR_TRANSPORT", transport}, {"GDR_TIMEOUT_MS", "3000"}}, 90,
      [&](int rank) {
        if (rank == victim) setenv("GDR_FAULT", fault.c_str(), 1);
      });
  ASSERT_EQ(exits.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_FALSE(exits[r].timedOut) << transport << ": rank " << r << " hung";
    if (r == victim)
      EXPECT_EQ(exits[r].signal, SIGKILL) << transport << ": the victim was not killed";
    else
      EXPECT_EQ(exits[r].code, 0) << transport << ": rank " << r
                                  << " failed a check (see its stderr)";
  }
}

TEST(FtShrink, KilledRankSurvivorsFinishOnThreeShm) { killAndShrink("shm", 1); }
TEST(FtShrink, KilledRankSurvivorsFinishOnThreeSocket) { killAndShrink("socket", 2); }
// The lowest rank dies: the coordinator is the next one.
TEST(FtShrink, KilledRankZeroSocket) { killAndShrink("socket", 0); }

// A rank dies during the agreement: rank 1 dies in an all-reduce, and rank
// 0, the coordinator every survivor picks, dies 500 ms later without
// answering. Ranks 2 and 3 lose it, agree again under rank 2 and go on as a
// communicator of two.
TEST(FtShrink, CoordinatorDiesDuringAgreement) {
  auto exits = gdrtest::runRanks(
      4,
      [](int rank, int, gdrComm_t comm) {
        int x = rank;
        gdrResult_t r = gdrSuccess;
        for (int i = 0; i < 4 && r == gdrSuccess; ++i)
          r = gdrAllReduce(&x, &x, 1, gdrInt32, gdrMax, comm, nullptr);
        CHILD_CHECK(r != gdrSuccess, "rank %d: no failure", rank);
        if (rank == 0) {
          usleep(500 * 1000);
          raise(SIGKILL);
        }
        auto t0 = Clock::now();
        gdrComm_t next = nullptr;
        r = gdrCommShrink(comm, nullptr, 0, &next);
        CHILD_CHECK(r == gdrSuccess, "rank %d: shrink: %s", rank, gdrGetLastError(comm));
        if (r != gdrSuccess) return 1;
        CHILD_CHECK(msSince(t0) < 8000, "shrink took %.0f ms", msSince(t0));
        int size = 0, newRank = -1;
        gdrCommSize(next, &size);
        gdrCommRank(next, &newRank);
        CHILD_CHECK(size == 2 && newRank == rank - 2, "rank %d is rank %d of %d", rank, newRank,
                    size);
        x = rank;
        r = gdrAllReduce(&x, &x, 1, gdrInt32, gdrSum, next, nullptr);
        CHILD_CHECK(r == gdrSuccess && x == 5, "the shrunk all-reduce: %d", x);
        gdrCommDestroy(next);
        return gdrtest::childFailures() ? 1 : 0;
      },
      {{"GDR_TIMEOUT_MS", "3000"}}, 90,
      [](int rank) {
        if (rank == 1) setenv("GDR_FAULT", "1:3:first:kill", 1);
      });
  ASSERT_EQ(exits.size(), 4u);
  EXPECT_EQ(exits[0].signal, SIGKILL);
  EXPECT_EQ(exits[1].signal, SIGKILL);
  EXPECT_EQ(exits[2].code, 0) << "rank 2 failed a check (see its stderr)";
  EXPECT_EQ(exits[3].code, 0) << "rank 3 failed a check (see its stderr)";
}

// Ranks named in the exclude list are left out, alive; the rest carry on.
TEST(FtShrink, ExcludedRankLeftOut) {
  auto exits = gdrtest::runRanks(
      3,
      [](int rank, int, gdrComm_t comm) {
        if (rank == 2) return 0;  // excluded: it does not call
        const int exclude[] = {2};
        gdrComm_t next = nullptr;
        gdrResult_t r = gdrCommShrink(comm, exclude, 1, &next);
        CHILD_CHECK(r == gdrSuccess, "shrink: %s", gdrGetLastError(comm));
        if (r != gdrSuccess) return 1;
        int size = 0, x = rank + 1;
        gdrCommSize(next, &size);
        CHILD_CHECK(size == 2, "size %d", size);
        r = gdrAllReduce(&x, &x, 1, gdrInt32, gdrSum, next, nullptr);
        CHILD_CHECK(r == gdrSuccess && x == 3, "allreduce %d: %d", r, x);
        // The old communicator is revoked by the shrink.
        CHILD_CHECK(gdrBarrier(comm, nullptr) == gdrRemoteError,
                    "the old communicator still works");
        gdrCommDestroy(next);
        return gdrtest::childFailures() ? 1 : 0;
      },
      {{"GDR_TIMEOUT_MS", "3000"}}, 60);
  gdrtest::expectAllOk(exits);
}

// One rank revokes between calls: its next call fails at once, the others'
// next calls fail as the notice arrives (well before GDR_TIMEOUT_MS), a
// later call fails at once everywhere, and a shrink gives a working
// communicator of all three.
TEST(FtRevoke, EveryRankFailsFastThenShrinks) {
  auto exits = gdrtest::runRanks(
      3,
      [](int rank, int, gdrComm_t comm) {
        int x = 1;
        CHILD_CHECK(
            gdrAllReduce(&x, &x, 1, gdrInt32, gdrSum, comm, nullptr) == gdrSuccess && x == 3,
            "the first all-reduce");
        if (rank == 1)
          CHILD_CHECK(gdrCommRevoke(comm) == gdrSuccess, "revoke: %s", gdrGetLastError(comm));
        auto t0 = Clock::now();
        x = 1;
        gdrResult_t r = gdrAllReduce(&x, &x, 1, gdrInt32, gdrSum, comm, nullptr);
        CHILD_CHECK(r == gdrRemoteError, "rank %d: the all-reduce after the revoke returned %d",
                    rank, r);
        CHILD_CHECK(contains(gdrGetLastError(comm), "revoked"), "rank %d: %s", rank,
                    gdrGetLastError(comm));
        CHILD_CHECK(msSince(t0) < 2000, "rank %d failed after %.0f ms", rank, msSince(t0));
        t0 = Clock::now();
        r = gdrBroadcast(&x, 1, gdrInt32, 0, comm, nullptr);
        CHILD_CHECK(r == gdrRemoteError && msSince(t0) < 100,
                    "rank %d: the later call: %d after %.0f ms", rank, r, msSince(t0));
        gdrResult_t async = gdrSuccess;
        gdrCommGetAsyncError(comm, &async);
        CHILD_CHECK(async == gdrRemoteError, "async error %d", async);
        CHILD_CHECK(gdrCommRevoke(comm) == gdrSuccess, "a second revoke");
        gdrComm_t next = nullptr;
        r = gdrCommShrink(comm, nullptr, 0, &next);
        CHILD_CHECK(r == gdrSuccess, "shrink: %s", gdrGetLastError(comm));
        if (r != gdrSuccess) return 1;
        int size = 0, newRank = -1;
        gdrCommSize(next, &size);
        gdrCommRank(next, &newRank);
        CHILD_CHECK(size == 3 && newRank == rank, "rank %d of %d", newRank, size);
        x = rank + 1;
        CHILD_CHECK(
            gdrAllReduce(&x, &x, 1, gdrInt32, gdrSum, next, nullptr) == gdrSuccess && x == 6,
            "the shrunk all-reduce: %d", x);
        gdrCommDestroy(next);
        return gdrtest::childFailures() ? 1 : 0;
      },
      {{"GDR_TIMEOUT_MS", "20000"}}, 60);
  gdrtest::expectAllOk(exits);
}

// A watchdog thread revokes while the rank waits in a call that cannot
// complete (rank 2 is late): the waiting call returns at once, rank 1's
// waiting call returns as the notice arrives, and rank 2's late call fails
// fast.
TEST(FtRevoke, WatchdogRevokesPendingCalls) {
  auto exits = gdrtest::runRanks(
      3,
      [](int rank, int, gdrComm_t comm) {
        std::vector<float> buf(1 << 16, 1.0f);
        auto t0 = Clock::now();
        std::thread watchdog;
        if (rank == 0)
          watchdog = std::thread([comm] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            CHILD_CHECK(gdrCommRevoke(comm) == gdrSuccess, "revoke from the watchdog");
          });
        if (rank == 2) std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        gdrResult_t r =
            gdrAllReduce(buf.data(), buf.data(), buf.size(), gdrFloat32, gdrSum, comm, nullptr);
        double ms = msSince(t0);
        if (watchdog.joinable()) watchdog.join();
        CHILD_CHECK(r == gdrRemoteError && contains(gdrGetLastError(comm), "revoked"),
                    "rank %d: %d: %s", rank, r, gdrGetLastError(comm));
        if (rank < 2)
          CHILD_CHECK(ms > 250 && ms < 1400, "rank %d returned after %.0f ms", rank, ms);
        else
          CHILD_CHECK(ms < 1500 + 1000, "the late rank returned after %.0f ms", ms);
        usleep(100 * 1000);
        return gdrtest::childFailures() ? 1 : 0;
      },
      {{"GDR_TIMEOUT_MS", "20000"}}, 60);
  gdrtest::expectAllOk(exits);
}

}  // namespace

// GDR_FAULT at every collective x the first, a middle and the last message
// step x each kind, on shm and socket, np 3: every surviving rank fails
// within 2 x GDR_TIMEOUT_MS with an error naming the failed rank and the step
// it waited at, and nothing hangs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "support/exit_checks.h"
#include "support/multiproc.h"

namespace {

using gdrtest::contains;

constexpr int kTimeoutMs = 2000;
constexpr int kFaultRank = 1;
constexpr const char* kColls[] = {"allreduce",     "bcast",    "reduce", "allgather",
                                  "reducescatter", "alltoall", "barrier"};

gdrResult_t callOnce(const std::string& coll, std::vector<float>& in, std::vector<float>& out,
                     gdrComm_t comm) {
  const size_t n = 999;  // odd: uneven blocks
  if (coll == "allreduce")
    return gdrAllReduce(in.data(), out.data(), n, gdrFloat32, gdrSum, comm, nullptr);
  if (coll == "bcast") return gdrBroadcast(out.data(), n, gdrFloat32, 0, comm, nullptr);
  if (coll == "reduce")
    return gdrReduce(in.data(), out.data(), n, gdrFloat32, gdrSum, 0, comm, nullptr);
  if (coll == "allgather")
    return gdrAllGather(in.data(), n / 3, out.data(), gdrFloat32, comm, nullptr);
  if (coll == "reducescatter")
    return gdrReduceScatter(in.data(), out.data(), n / 3, gdrFloat32, gdrSum, comm, nullptr);
  if (coll == "alltoall")
    return gdrAllToAll(in.data(), n / 3, out.data(), gdrFloat32, comm, nullptr);
  return gdrBarrier(comm, nullptr);
}

// The fault hits the second call (op 2) on rank 1; every rank makes three,
// then a barrier.
void faultCase(const char* transport, const std::string& coll, const char* step, const char* kind) {
  const std::string spec = std::to_string(kFaultRank) + ":2:" + step + ":" + kind;
  auto exits = gdrtest::runRanks(
      3,
      [&](int rank, int, gdrComm_t comm) {
        std::vector<float> in(3000, 1.0f), out(3000, 0.0f);
        gdrResult_t r = callOnce(coll, in, out, comm);
        // The faulty rank's call before the fault must succeed. A peer still
        // in that call when rank 1 fails may report the failure already (the
        // notice can overtake data rank 1 sent before it: seen under ASan),
        // but only as rank 1's failure.
        if (rank == kFaultRank)
          CHILD_CHECK(r == gdrSuccess, "%s: the faulty rank's call before the fault failed: %s",
                      spec.c_str(), gdrGetLastError(comm));
        else if (r != gdrSuccess)
          CHILD_CHECK(contains(gdrGetLastError(comm), "rank 1"),
                      "%s: the call before the fault failed, not naming rank 1: %s", spec.c_str(),
                      gdrGetLastError(comm));
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < 2 && r == gdrSuccess; ++i) r = callOnce(coll, in, out, comm);
        // A rank that only sends (a broadcast root past a dead leaf) learns
        // at its next call that talks to the failed rank: a barrier does.
        if (r == gdrSuccess) r = gdrBarrier(comm, nullptr);
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                        .count();
        if (rank != kFaultRank) {
          const char* e = gdrGetLastError(comm);
          CHILD_CHECK(r != gdrSuccess, "%s %s: rank %d never failed", transport, spec.c_str(),
                      rank);
          CHILD_CHECK(ms < 2 * kTimeoutMs, "%s %s: rank %d failed after %.0f ms", transport,
                      spec.c_str(), rank, ms);
          CHILD_CHECK(contains(e, "rank 1") && contains(e, "step"),
                      "%s %s: rank %d: the error names neither: %s", transport, spec.c_str(), rank,
                      e);
        }
        // Linger so this rank's abort notices are read before its exit
        // resets its TCP connections (a reset discards them unread).
        usleep(100 * 1000);
        _exit(gdrtest::childFailures() ? 1 : 0);
        return 0;
      },
      {{"GDR_TRANSPORT", transport},
       {"GDR_FAULT", spec},
       {"GDR_TIMEOUT_MS", std::to_string(kTimeoutMs)}},
      60);
  ASSERT_EQ(exits.size(), 3u);
  for (int r = 0; r < 3; ++r) {
    if (r == kFaultRank) {
      EXPECT_FALSE(exits[r].timedOut) << transport << " " << spec << ": the faulty rank hung";
      continue;
    }
    EXPECT_EQ(exits[r].code, 0) << transport << " " << spec << ": rank " << r
                                << (exits[r].timedOut ? " hung"
                                                      : " failed a check (see its stderr)");
  }
}

void fastMatrix(const char* transport) {
  for (const char* coll : kColls)
    for (const char* step : {"first", "middle", "last"})
      for (const char* kind : {"kill", "close", "corrupt"}) faultCase(transport, coll, step, kind);
}

TEST(FaultMatrix, EveryCollectiveStepAndKindShm) { fastMatrix("shm"); }
TEST(FaultMatrix, EveryCollectiveStepAndKindSocket) { fastMatrix("socket"); }

// A stalled rank makes the others time out (each stall holds the test for
// 2.5 x GDR_TIMEOUT_MS, so only a middle step of all-reduce).
TEST(FaultMatrix, StallTimesOutEveryOtherRank) {
  for (const char* transport : {"shm", "socket"}) faultCase(transport, "allreduce", "middle", "stall");
}

}  // namespace

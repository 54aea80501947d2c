// Failure and bad input: clear errors, nothing written, the communicator
// still usable after a local error; mismatched collectives fail on every
// rank; a killed rank or a silent one makes the others fail within the
// deadline instead of hanging.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "support/exit_checks.h"
#include "support/multiproc.h"

namespace {

using gdrtest::runRanks;

using gdrtest::contains;
using gdrtest::expectAllOk;

TEST(Failure, BadArgumentsGiveClearErrorsAndLeaveTheCommunicatorUsable) {
  auto exits = runRanks(2, [](int rank, int n, gdrComm_t comm) {
    std::vector<float> in(8, 1.0f), out(8, -7.0f);
    auto untouched = [&] { return out == std::vector<float>(8, -7.0f); };
    gdrResult_t r;
    r = gdrAllReduce(nullptr, out.data(), 8, gdrFloat32, gdrSum, comm, nullptr);
    CHILD_CHECK(r == gdrInvalidArgument && contains(gdrGetLastError(comm), "sendbuf is NULL"), "null: %s",
                gdrGetLastError(comm));
    r = gdrAllReduce(in.data(), out.data(), 8, static_cast<gdrDataType_t>(42), gdrSum, comm, nullptr);
    CHILD_CHECK(r == gdrInvalidArgument && contains(gdrGetLastError(comm), "datatype 42"), "type: %s",
                gdrGetLastError(comm));
    r = gdrAllReduce(in.data(), out.data(), 8, gdrFloat32, static_cast<gdrRedOp_t>(9), comm, nullptr);
    CHILD_CHECK(r == gdrInvalidArgument && contains(gdrGetLastError(comm), "op 9"), "op: %s", gdrGetLastError(comm));
    r = gdrAllReduce(in.data(), out.data(), static_cast<size_t>(-8), gdrFloat32, gdrSum, comm, nullptr);
    CHILD_CHECK(r == gdrInvalidArgument && contains(gdrGetLastError(comm), "too large"), "count: %s",
                gdrGetLastError(comm));
    r = gdrBroadcast(out.data(), 8, gdrFloat32, n, comm, nullptr);
    CHILD_CHECK(r == gdrInvalidArgument && contains(gdrGetLastError(comm), "root 2"), "root: %s",
                gdrGetLastError(comm));
    r = gdrReduce(GDR_IN_PLACE, out.data(), 8, gdrFloat32, gdrSum, 1 - rank, comm, nullptr);
    CHILD_CHECK(r == gdrInvalidArgument, "in-place on a non-root: %d", r);
    r = gdrSend(in.data(), 8, gdrFloat32, -1, comm, nullptr);
    CHILD_CHECK(r == gdrInvalidArgument && contains(gdrGetLastError(comm), "peer -1"), "peer: %s",
                gdrGetLastError(comm));
    CHILD_CHECK(untouched(), "a rejected call wrote the output");
    CHILD_CHECK(gdrGroupEnd() == gdrInvalidUsage, "gdrGroupEnd without start");
    // Still usable.
    r = gdrAllReduce(in.data(), out.data(), 8, gdrFloat32, gdrSum, comm, nullptr);
    CHILD_CHECK(r == gdrSuccess && out[0] == static_cast<float>(n), "allreduce after errors: %d %s", r,
                gdrGetLastError(comm));
    gdrResult_t async = gdrInternalError;
    CHILD_CHECK(gdrCommGetAsyncError(comm, &async) == gdrSuccess && async == gdrSuccess, "async error set");
    return 0;
  });
  expectAllOk(exits);
}

TEST(Failure, NullAndDestroyedCommunicators) {
  float x = 0;
  EXPECT_EQ(gdrAllReduce(&x, &x, 1, gdrFloat32, gdrSum, nullptr, nullptr), gdrInvalidArgument);
  EXPECT_TRUE(contains(gdrGetLastError(nullptr), "NULL"));
  auto exits = runRanks(1, [](int, int, gdrComm_t comm) {
    CHILD_CHECK(gdrCommDestroy(comm) == gdrSuccess, "destroy");
    float y = 1;
    gdrResult_t r = gdrAllReduce(&y, &y, 1, gdrFloat32, gdrSum, comm, nullptr);
    CHILD_CHECK(r == gdrInvalidArgument && contains(gdrGetLastError(nullptr), "destroyed"), "use after destroy: %d %s",
                r, gdrGetLastError(nullptr));
    _exit(gdrtest::childFailures() ? 1 : 0);  // the harness would destroy it again
    return 0;
  });
  expectAllOk(exits);
}

// Ranks disagree on count, op, root or the collective itself: every rank gets
// an error that names the mismatch, none hangs.
void mismatchCase(const char* transport, int variant) {
  auto exits = runRanks(3, [variant](int rank, int, gdrComm_t comm) {
    std::vector<int32_t> in(64, rank), out(64);
    gdrResult_t r = gdrSuccess;
    bool odd = rank == 1;
    switch (variant) {
      case 0: r = gdrAllReduce(in.data(), out.data(), odd ? 32 : 64, gdrInt32, gdrSum, comm, nullptr); break;
      case 1: r = gdrAllReduce(in.data(), out.data(), 64, gdrInt32, odd ? gdrMax : gdrSum, comm, nullptr); break;
      case 2: r = gdrBroadcast(in.data(), 64, gdrInt32, odd ? 2 : 0, comm, nullptr); break;
      case 3:
        r = odd ? gdrAllGather(in.data(), 8, out.data(), gdrInt32, comm, nullptr)
                : gdrAllReduce(in.data(), out.data(), 64, gdrInt32, gdrSum, comm, nullptr);
        break;
      case 4: r = gdrAllReduce(in.data(), out.data(), 64, odd ? gdrUint32 : gdrInt32, gdrSum, comm, nullptr); break;
    }
    CHILD_CHECK(r == gdrInvalidUsage && contains(gdrGetLastError(comm), "mismatch"),
                "variant %d: rank %d got %d: %s", variant, rank, r, gdrGetLastError(comm));
    _exit(gdrtest::childFailures() ? 1 : 0);
    return 0;
  }, {{"GDR_TRANSPORT", transport}, {"GDR_CHECK_MISMATCH", "2"}, {"GDR_TIMEOUT_MS", "20000"}}, 60);
  expectAllOk(exits);
}

TEST(Failure, MismatchedCollectivesFailOnEveryRankShm) {
  for (int v = 0; v < 5; ++v) mismatchCase("shm", v);
}
TEST(Failure, MismatchedCollectivesFailOnEveryRankSocket) {
  for (int v = 0; v < 5; ++v) mismatchCase("socket", v);
}

// With the default check level, a mismatch in count is still caught on
// every rank by the per-message signatures of an all-reduce.
TEST(Failure, DefaultLevelCatchesCountMismatch) {
  auto exits = runRanks(2, [](int rank, int, gdrComm_t comm) {
    std::vector<float> in(1000, 1.f), out(1000);
    gdrResult_t r = gdrAllReduce(in.data(), out.data(), rank ? 500 : 1000, gdrFloat32, gdrSum, comm, nullptr);
    CHILD_CHECK(r == gdrInvalidUsage && contains(gdrGetLastError(comm), "mismatch"), "rank %d got %d: %s", rank, r,
                gdrGetLastError(comm));
    _exit(gdrtest::childFailures() ? 1 : 0);
    return 0;
  }, {{"GDR_TIMEOUT_MS", "20000"}}, 60);
  expectAllOk(exits);
}

// A rank killed with SIGKILL: the survivors' calls fail with a remote error
// long before the deadline, on shm (pid liveness) and socket (EOF).
void killedRank(const char* transport) {
  auto exits = runRanks(4, [](int rank, int, gdrComm_t comm) {
    std::vector<double> buf(1 << 16, 1.0);
    // Rank 2 dies before the first collective (dying right after one races
    // with its peers still reading its last bytes: that is a failure during
    // the operation, also a remote error, but not the case under test).
    if (rank == 2) raise(SIGKILL);
    auto t0 = std::chrono::steady_clock::now();
    gdrResult_t r = gdrSuccess;
    for (int i = 0; i < 50 && r == gdrSuccess; ++i)
      r = gdrAllReduce(GDR_IN_PLACE, buf.data(), buf.size(), gdrFloat64, gdrSum, comm, nullptr);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHILD_CHECK(r == gdrRemoteError, "rank %d got %d: %s", rank, r, gdrGetLastError(comm));
    CHILD_CHECK(secs < 20, "took %.1f s to notice", secs);
    gdrResult_t async = gdrSuccess;
    gdrCommGetAsyncError(comm, &async);
    CHILD_CHECK(async != gdrSuccess, "no async error recorded");
    // Later calls fail fast.
    r = gdrBarrier(comm, nullptr);
    CHILD_CHECK(r != gdrSuccess, "barrier after failure succeeded");
    CHILD_CHECK(gdrCommAbort(comm) == gdrSuccess, "abort");
    _exit(gdrtest::childFailures() ? 1 : 0);
    return 0;
  }, {{"GDR_TRANSPORT", transport}, {"GDR_TIMEOUT_MS", "60000"}}, 90);
  ASSERT_EQ(exits.size(), 4u);
  EXPECT_EQ(exits[2].signal, SIGKILL);
  for (int r : {0, 1, 3}) EXPECT_EQ(exits[r].code, 0) << "rank " << r << (exits[r].timedOut ? " hung" : "");
}

// Destroying a communicator is not collective: a rank that finished and left
// must not break the others' later traffic among themselves.
void leaverIsNoError(const char* transport) {
  auto exits = runRanks(3, [](int rank, int, gdrComm_t comm) {
    float x = 1;
    if (gdrAllReduce(&x, &x, 1, gdrFloat32, gdrSum, comm, nullptr) != gdrSuccess) return 4;
    if (rank == 2) return 0;  // destroys its communicator and exits
    usleep(200 * 1000);
    std::vector<int32_t> out(1000), in(1000, rank);
    gdrGroupStart();
    gdrSend(in.data(), in.size(), gdrInt32, 1 - rank, comm, nullptr);
    gdrRecv(out.data(), out.size(), gdrInt32, 1 - rank, comm, nullptr);
    gdrResult_t r = gdrGroupEnd();
    CHILD_CHECK(r == gdrSuccess && out[999] == 1 - rank, "rank %d: %d %s", rank, r, gdrGetLastError(comm));
    return 0;
  }, {{"GDR_TRANSPORT", transport}, {"GDR_TIMEOUT_MS", "20000"}}, 60);
  expectAllOk(exits);
}

TEST(Failure, RankThatLeftIsNoErrorShm) { leaverIsNoError("shm"); }
TEST(Failure, RankThatLeftIsNoErrorSocket) { leaverIsNoError("socket"); }

TEST(Failure, KilledRankShm) { killedRank("shm"); }
TEST(Failure, KilledRankSocket) { killedRank("socket"); }

// A rank that never calls: the others time out at GDR_TIMEOUT_MS with an
// error naming the peer and the step (the receive of the two-rank exchange:
// step 2 of 3 in place, where a copy back follows, and of 2 out of place).
void timeoutNamesPeerAndStep(bool inPlace) {
  auto exits = runRanks(2, [inPlace](int rank, int, gdrComm_t comm) {
    if (rank == 1) {
      sleep(4);
      _exit(0);
    }
    float x = 1, y = 0;
    gdrResult_t r = gdrAllReduce(&x, inPlace ? &x : &y, 1, gdrFloat32, gdrSum, comm, nullptr);
    const char* e = gdrGetLastError(comm);
    CHILD_CHECK(r == gdrTimeout && contains(e, "rank 1") &&
                    contains(e, inPlace ? "step 2 of 3 (recv-reduce" : "step 2 of 2 (recv-reduce"),
                "got %d: %s", r, e);
    _exit(gdrtest::childFailures() ? 1 : 0);
    return 0;
  }, {{"GDR_TIMEOUT_MS", "1000"}}, 30);
  expectAllOk(exits);
}

TEST(Failure, TimeoutNamesPeerAndStep) { timeoutNamesPeerAndStep(true); }
TEST(Failure, TimeoutNamesPeerAndStepOutOfPlace) { timeoutNamesPeerAndStep(false); }

}  // namespace

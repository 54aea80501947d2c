// Defects an outside fault campaign found, each pinned by a test that failed
// before its fix: the in-place marker where a real buffer is required, all-gather
// with the send buffer aliasing the receive buffer, and more below.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "support/exit_checks.h"
#include "support/multiproc.h"

namespace {

using gdrtest::runRanks;

using gdrtest::contains;
using gdrtest::expectAllOk;

// GDR_IN_PLACE is a pointer value no program owns: passed as a buffer the
// call must read or write, it is an invalid argument, not a dereference of 0x1.
TEST(Reliability, InPlaceMarkerWhereABufferIsRequiredIsRefused) {
  auto exits = runRanks(2, [](int rank, int, gdrComm_t comm) {
    std::vector<float> buf(8, 1.0f);
    void* ip = GDR_IN_PLACE;
    auto refused = [&](gdrResult_t r, const char* what) {
      CHILD_CHECK(r == gdrInvalidArgument && contains(gdrGetLastError(comm), "GDR_IN_PLACE"),
                  "%s: %d %s", what, r, gdrGetLastError(comm));
    };
    refused(gdrBroadcast(ip, 8, gdrFloat32, 0, comm, nullptr), "broadcast buffer");
    refused(gdrAllReduce(buf.data(), ip, 8, gdrFloat32, gdrSum, comm, nullptr),
            "all-reduce recvbuf");
    refused(gdrAllReduce(ip, ip, 8, gdrFloat32, gdrSum, comm, nullptr), "all-reduce both");
    if (rank == 0)
      refused(gdrReduce(buf.data(), ip, 8, gdrFloat32, gdrSum, 0, comm, nullptr),
              "reduce root recvbuf");
    refused(gdrAllGather(buf.data(), 4, ip, gdrFloat32, comm, nullptr), "all-gather recvbuf");
    refused(gdrReduceScatter(buf.data(), ip, 4, gdrFloat32, gdrSum, comm, nullptr),
            "reduce-scatter recvbuf");
    refused(gdrAllToAll(buf.data(), 4, ip, gdrFloat32, comm, nullptr), "all-to-all recvbuf");
    refused(gdrSend(ip, 8, gdrFloat32, 1 - rank, comm, nullptr), "send buffer");
    refused(gdrRecv(ip, 8, gdrFloat32, 1 - rank, comm, nullptr), "recv buffer");
    // The communicator is still usable.
    gdrResult_t r = gdrAllReduce(GDR_IN_PLACE, buf.data(), 8, gdrFloat32, gdrSum, comm, nullptr);
    CHILD_CHECK(r == gdrSuccess && buf[7] == 2.0f, "in-place all-reduce after the refusals: %d %s",
                r, gdrGetLastError(comm));
    return 0;
  });
  expectAllOk(exits);
}

// sendbuf == recvbuf in an all-gather: the block sits at the buffer's start
// and every rank gets every block, at the rank counts (and message sizes)
// where recursive doubling's extra steps used to overwrite it first.
TEST(Reliability, AllGatherWithAliasedBuffersIsInPlace) {
  for (int n : {2, 3, 5}) {
    for (size_t count : {size_t(1), size_t(7), size_t(3000)}) {
      auto exits = runRanks(
          n,
          [count](int rank, int nranks, gdrComm_t comm) {
            std::vector<int32_t> buf(count * nranks, -1);
            for (size_t i = 0; i < count; ++i) buf[i] = rank * 100000 + static_cast<int32_t>(i);
            gdrResult_t r = gdrAllGather(buf.data(), count, buf.data(), gdrInt32, comm, nullptr);
            CHILD_CHECK(r == gdrSuccess, "all-gather: %d %s", r, gdrGetLastError(comm));
            int bad = 0;
            for (int p = 0; p < nranks; ++p)
              for (size_t i = 0; i < count; ++i)
                bad += buf[p * count + i] != p * 100000 + static_cast<int32_t>(i);
            CHILD_CHECK(bad == 0, "np %d count %zu: %d wrong elements", nranks, count, bad);
            return 0;
          },
          {{"GDR_TIMEOUT_MS", "20000"}}, 60);
      expectAllOk(exits);
    }
  }
}

// A peer that dies after posting a single-copy (CMA) message: the reader's
// process_vm_readv fails with ESRCH, which is the peer's failure
// (gdrRemoteError), not a local system error.
TEST(Reliability, PeerThatDiesDuringASingleCopyReadIsARemoteError) {
  auto exits = runRanks(
      2,
      [](int rank, int, gdrComm_t comm) {
        std::vector<double> buf(1 << 17, 1.0);
        if (rank == 1) {
          std::thread([] {
            usleep(150 * 1000);
            raise(SIGKILL);
          }).detach();
          gdrSend(buf.data(), buf.size(), gdrFloat64, 0, comm, nullptr);
          pause();
        }
        usleep(500 * 1000);
        gdrResult_t r = gdrRecv(buf.data(), buf.size(), gdrFloat64, 1, comm, nullptr);
        CHILD_CHECK(r == gdrRemoteError && contains(gdrGetLastError(comm), "rank 1"), "got %d: %s",
                    r, gdrGetLastError(comm));
        _exit(gdrtest::childFailures() ? 1 : 0);
        return 0;
      },
      {{"GDR_TRANSPORT", "shm"}, {"GDR_SHM_CMA_THRESHOLD", "4096"}, {"GDR_TIMEOUT_MS", "20000"}},
      60);
  ASSERT_EQ(exits.size(), 2u);
  EXPECT_EQ(exits[0].code, 0) << (exits[0].timedOut ? "rank 0 hung" : "rank 0 failed");
  EXPECT_EQ(exits[1].signal, SIGKILL);
}

// Every rank's init fails, promptly, when one rank's configuration does not
// parse or the settings schedules depend on differ across ranks (before, the
// others waited for the failed rank until the rendezvous deadline, or ran
// different algorithms for one call). A rank whose init fails exits 90.
void everyInitFails(const char* var, const char* oddValue) {
  auto t0 = std::chrono::steady_clock::now();
  auto exits = runRanks(
      3, [](int, int, gdrComm_t) { return 0; }, {{"GDR_TIMEOUT_MS", "30000"}}, 60,
      [var, oddValue](int rank) {
        if (rank == 1) setenv(var, oddValue, 1);
      });
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (size_t r = 0; r < exits.size(); ++r)
    EXPECT_EQ(exits[r].code, 90) << var << ": rank " << r
                                 << (exits[r].timedOut ? " hung" : " did not fail its init");
  EXPECT_LT(secs, 10) << var << ": the others waited for the deadline";
}

TEST(Reliability, OneRanksBadConfigurationFailsEveryRanksInit) {
  everyInitFails("GDR_TRANSPORT", "carrier-pigeon");
}
TEST(Reliability, GdrAlgoThatDiffersAcrossRanksFailsEveryRanksInit) {
  everyInitFails("GDR_ALGO", "allreduce=ring");
}
TEST(Reliability, ChunkBytesThatDifferAcrossRanksFailEveryRanksInit) {
  everyInitFails("GDR_CHUNK_BYTES", "64");
}

// GDR_TUNING_FILE joins the vote by content: one rank with a table the
// others lack fails every rank's init; the same table under two paths is
// the same configuration.
TEST(Reliability, TuningFileThatDiffersAcrossRanksFailsEveryRanksInit) {
  char a[] = "/tmp/gdr-tuning-a-XXXXXX", b[] = "/tmp/gdr-tuning-b-XXXXXX";
  const int fa = mkstemp(a), fb = mkstemp(b);
  ASSERT_TRUE(fa >= 0 && fb >= 0);
  const std::string table = "allreduce 1 64 1048576 ring\n";
  ASSERT_EQ(write(fa, table.data(), table.size()), (ssize_t)table.size());
  ASSERT_EQ(write(fb, table.data(), table.size()), (ssize_t)table.size());
  close(fa);
  close(fb);
  everyInitFails("GDR_TUNING_FILE", a);
  const std::string pa = a, pb = b;
  auto exits = runRanks(
      3,
      [](int, int, gdrComm_t comm) {
        int x = 1;
        return gdrAllReduce(&x, &x, 1, gdrInt32, gdrSum, comm, nullptr) == gdrSuccess && x == 3 ? 0
                                                                                                : 1;
      },
      {{"GDR_TIMEOUT_MS", "30000"}}, 60,
      [pa, pb](int rank) { setenv("GDR_TUNING_FILE", rank == 1 ? pb.c_str() : pa.c_str(), 1); });
  expectAllOk(exits);
  unlink(a);
  unlink(b);
}

// GDR_ALGO is read once per communicator: changing it between calls (on
// one rank) changes nothing, so an in-place reduce stays right.
TEST(Reliability, GdrAlgoChangedBetweenCallsIsIgnored) {
  auto exits = runRanks(
      3,
      [](int rank, int nranks, gdrComm_t comm) {
        for (size_t count : {size_t(5), size_t(9), size_t(2000)}) {
          std::vector<int32_t> buf(count, rank + 1);
          gdrResult_t r = gdrReduce(rank == 0 ? GDR_IN_PLACE : buf.data(), buf.data(), count,
                                    gdrInt32, gdrSum, 0, comm, nullptr);
          CHILD_CHECK(r == gdrSuccess, "reduce: %d %s", r, gdrGetLastError(comm));
          const int32_t want = nranks * (nranks + 1) / 2;
          if (rank == 0)
            for (size_t i = 0; i < count; ++i)
              CHILD_CHECK(buf[i] == want, "count %zu: [%zu] = %d, want %d", count, i, buf[i], want);
          if (rank == 0) setenv("GDR_ALGO", count == 5 ? "reduce=ring" : "reduce=binomial", 1);
          if (rank == 2) setenv("GDR_ALGO", "reduce=binomial", 1);
        }
        return 0;
      },
      {{"GDR_TIMEOUT_MS", "20000"}}, 60);
  expectAllOk(exits);
}

// gdrCommAbort from a watchdog thread while another thread waits on the
// communicator: abort returns, the waiter returns an error at once (it used
// to run on freed memory), and the peer learns of the abort.
TEST(Reliability, AbortFromAnotherThreadWhileACallWaits) {
  auto exits = runRanks(
      2,
      [](int rank, int, gdrComm_t comm) {
        std::vector<float> buf(1000, 1.0f);
        if (rank == 1) {
          // The first call may still complete (rank 0's data was sent
          // before the abort); the abort follows it in order.
          usleep(800 * 1000);
          gdrResult_t r = gdrSuccess;
          for (int i = 0; i < 2 && r == gdrSuccess; ++i)
            r = gdrAllReduce(GDR_IN_PLACE, buf.data(), buf.size(), gdrFloat32, gdrSum, comm,
                             nullptr);
          CHILD_CHECK(r == gdrRemoteError && contains(gdrGetLastError(comm), "abort"),
                      "the peer of the aborted rank got %d: %s", r, gdrGetLastError(comm));
          return 0;
        }
        gdrResult_t waited = gdrSuccess;
        std::chrono::steady_clock::time_point returned;
        std::thread waiter([&] {
          waited =
              gdrAllReduce(GDR_IN_PLACE, buf.data(), buf.size(), gdrFloat32, gdrSum, comm, nullptr);
          returned = std::chrono::steady_clock::now();
        });
        usleep(200 * 1000);
        auto aborted = std::chrono::steady_clock::now();
        CHILD_CHECK(gdrCommAbort(comm) == gdrSuccess, "abort: %s", gdrGetLastError(nullptr));
        waiter.join();
        double secs = std::chrono::duration<double>(returned - aborted).count();
        CHILD_CHECK(waited == gdrRemoteError, "the waiter got %d", waited);
        CHILD_CHECK(secs < 1.0, "the waiter returned %.2f s after the abort", secs);
        CHILD_CHECK(gdrCommAbort(comm) == gdrInvalidArgument, "a second abort of the same handle");
        _exit(gdrtest::childFailures() ? 1 : 0);  // the harness would destroy it again
        return 0;
      },
      {{"GDR_TIMEOUT_MS", "20000"}}, 60);
  expectAllOk(exits);
}

// Level 1 (the default): a broadcast where one rank passes count 0 and the
// others 100 fails in the same call on the count-0 rank (before, it returned
// success) and on the ranks that exchange messages with it, and on every
// rank by its next call. A rank that only sends in the call (the root) may
// still return success: nothing comes back to it (docs/reliability.md).
void zeroCountAgainstHundred(int nranks, int zeroRank) {
  auto exits = runRanks(
      nranks,
      [zeroRank](int rank, int, gdrComm_t comm) {
        std::vector<int32_t> buf(100, rank);
        const size_t count = rank == zeroRank ? 0 : 100;
        gdrResult_t r = gdrBroadcast(buf.data(), count, gdrInt32, 0, comm, nullptr);
        if (rank == zeroRank)
          CHILD_CHECK(r != gdrSuccess && contains(gdrGetLastError(comm), "mismatch"),
                      "rank %d (count %zu) got %d: %s", rank, count, r, gdrGetLastError(comm));
        if (r == gdrSuccess) r = gdrBarrier(comm, nullptr);
        CHILD_CHECK(r != gdrSuccess, "rank %d (count %zu) never saw the mismatch", rank, count);
        _exit(gdrtest::childFailures() ? 1 : 0);
        return 0;
      },
      {{"GDR_TIMEOUT_MS", "10000"}}, 60);
  expectAllOk(exits);
}

TEST(Reliability, ZeroCountAgainstAHundredIsCaughtAtTheDefaultLevel) {
  zeroCountAgainstHundred(2, 1);
  zeroCountAgainstHundred(2, 0);
  zeroCountAgainstHundred(3, 2);
}

}  // namespace

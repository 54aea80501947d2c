// Every collective, type and op, at sizes 0, 1, odd and several MiB, in place
// and not, with ranks as forked processes over shm and over TCP sockets.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <tuple>

#include "support/coll_check.h"
#include "comm/comm.h"
#include "support/multiproc.h"

namespace {

using gdrtest::CollCase;

const gdrDataType_t kTypes[] = {gdrInt8,    gdrUint8,   gdrInt32,      gdrUint32,    gdrInt64,  gdrUint64,
                                gdrFloat16, gdrBfloat16, gdrFloat32, gdrFloat64, gdrFloat8e4m3, gdrFloat8e5m2};
const gdrRedOp_t kOps[] = {gdrSum, gdrProd, gdrMax, gdrMin, gdrAvg};
const size_t kCounts[] = {0, 1, 37, 1001};

unsigned freshSeed() { return std::random_device{}(); }

int everyCollective(int rank, int n, gdrComm_t comm, unsigned seed) {
  unsigned s = seed;
  for (size_t count : kCounts) {
    for (bool inPlace : {false, true}) {
      for (gdrDataType_t t : kTypes) {
        for (gdrRedOp_t op : kOps) {
          CollCase c{t, op, count, inPlace, static_cast<int>(++s % n), s};
          gdrtest::checkAllReduce(comm, rank, n, c);
          gdrtest::checkReduce(comm, rank, n, c);
          gdrtest::checkReduceScatter(comm, rank, n, c);
        }
        CollCase c{t, gdrSum, count, inPlace, static_cast<int>(++s % n), s};
        gdrtest::checkBroadcast(comm, rank, n, c);
        gdrtest::checkAllGather(comm, rank, n, c);
        gdrtest::checkAllToAll(comm, rank, n, c);
        if (!inPlace) {
          gdrtest::checkAllToAllv(comm, rank, n, c);
          gdrtest::checkSendRecvRing(comm, rank, n, c);
        }
      }
    }
    if (gdrBarrier(comm, nullptr) != gdrSuccess) return 3;
  }
  // Several MiB: larger than every transport buffer, so chunking, flow
  // control and single-copy paths all run.
  const size_t big = (3u << 20) + 13;
  for (auto [t, op] : {std::pair{gdrFloat32, gdrSum}, std::pair{gdrInt64, gdrMax}, std::pair{gdrBfloat16, gdrAvg}}) {
    for (bool inPlace : {false, true}) {
      size_t count = big / 4;
      CollCase c{t, op, count, inPlace, static_cast<int>(++s % n), s};
      gdrtest::checkAllReduce(comm, rank, n, c);
      gdrtest::checkReduce(comm, rank, n, c);
      gdrtest::checkBroadcast(comm, rank, n, c);
      CollCase per{t, op, count / n + 1, inPlace, 0, s};
      gdrtest::checkReduceScatter(comm, rank, n, per);
      gdrtest::checkAllGather(comm, rank, n, per);
      gdrtest::checkAllToAll(comm, rank, n, per);
    }
  }
  return 0;
}

class CollMultiproc : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(CollMultiproc, EveryCollectiveTypeOpSizeInPlace) {
  auto [transport, n] = GetParam();
  unsigned seed = freshSeed();
  RecordProperty("seed", std::to_string(seed));
  auto exits = gdrtest::runRanks(
      n, [&](int rank, int nr, gdrComm_t comm) { return everyCollective(rank, nr, comm, seed); },
      {{"GDR_TRANSPORT", transport}, {"GDR_TIMEOUT_MS", "60000"}}, 500);
  std::string why;
  EXPECT_TRUE(gdrtest::allOk(exits, &why)) << why << " (seed " << seed << ")";
}

// GDR_CHUNK_BYTES cuts every schedule's messages into tiny chunks: the
// pipelined forms of every algorithm run end to end.
TEST(CollChunked, TinyChunksStayCorrect) {
  unsigned seed = freshSeed();
  auto exits = gdrtest::runRanks(
      3, [&](int rank, int nr, gdrComm_t comm) { return everyCollective(rank, nr, comm, seed); },
      {{"GDR_CHUNK_BYTES", "24"}, {"GDR_TIMEOUT_MS", "60000"}}, 500);
  std::string why;
  EXPECT_TRUE(gdrtest::allOk(exits, &why)) << why << " (seed " << seed << ")";
}

// Every shared-memory message of one byte or more goes single-copy (the
// receiver reads the sender's buffer with process_vm_readv, reductions
// through its bounce buffer), whatever its collective: the threshold at 1.
TEST(CollShmSingleCopy, EveryMessageReadFromTheSender) {
  unsigned seed = freshSeed();
  auto exits = gdrtest::runRanks(
      3, [&](int rank, int nr, gdrComm_t comm) { return everyCollective(rank, nr, comm, seed); },
      {{"GDR_TRANSPORT", "shm"}, {"GDR_SHM_CMA_THRESHOLD", "1"}, {"GDR_TIMEOUT_MS", "60000"}}, 500);
  std::string why;
  EXPECT_TRUE(gdrtest::allOk(exits, &why)) << why << " (seed " << seed << ")";
}

// Ranks 0, 2, 4 on one "host" and 1, 3, 5 on another (GDR_HOST_ID): shm
// inside each, TCP between them, and the topology's ring order (hosts
// together: 0 2 4 1 3 5) instead of rank order for all-reduce, broadcast,
// reduce and barrier.
TEST(CollTwoHosts, InterleavedRanksFollowTheTopologyOrder) {
  unsigned seed = freshSeed();
  auto exits = gdrtest::runRanks(
      6,
      [&](int rank, int nr, gdrComm_t comm) {
        const gdr::TopoPlan& plan = static_cast<gdr::Communicator*>(comm)->topoPlan();
        const std::vector<int> want = {0, 2, 4, 1, 3, 5};
        CHILD_CHECK(plan.order == want, "ring order is not hosts-together");
        CHILD_CHECK(std::string(comm->transportTo(rank ^ 1)) == "socket", "other host not over socket");
        if (rank + 2 < nr) CHILD_CHECK(std::string(comm->transportTo(rank + 2)) == "shm", "same host not shm");
        return everyCollective(rank, nr, comm, seed);
      },
      {{"GDR_TIMEOUT_MS", "60000"}}, 500,
      [](int rank) { setenv("GDR_HOST_ID", rank % 2 ? "test-host-b" : "test-host-a", 1); });
  std::string why;
  EXPECT_TRUE(gdrtest::allOk(exits, &why)) << why << " (seed " << seed << ")";
}

INSTANTIATE_TEST_SUITE_P(Ranks, CollMultiproc,
                         ::testing::Combine(::testing::Values("shm", "socket"), ::testing::Values(1, 2, 3, 4, 7, 8)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_np" + std::to_string(std::get<1>(info.param));
                         });

}  // namespace

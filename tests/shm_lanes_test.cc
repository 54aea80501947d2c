// The shared-memory transport's two lanes (transport/shm/shm_layout.h): tiny
// messages run far ahead of their receiver, messages of every size stay in
// order across the lanes, and a sender that disagrees on a message's size
// (so that it takes the other lane) is reported as a mismatch, not waited on.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "support/multiproc.h"

namespace {

using gdrtest::runRanks;

void expectAllOk(const std::vector<gdrtest::RankExit>& exits) {
  std::string why;
  EXPECT_TRUE(gdrtest::allOk(exits, &why)) << why;
}

bool waitForFile(const std::string& path, int seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (access(path.c_str(), F_OK) != 0) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

uint8_t byteOf(int msg, size_t i) { return static_cast<uint8_t>(msg * 31 + i * 7 + 1); }

// Rank 0's 200 eight-byte sends all complete before rank 1 receives any:
// with only the main lane's few slots the sender would stall after a handful
// and never write the marker.
TEST(ShmLanes, TinySendsRunFarAheadOfTheReceiver) {
  const std::string marker = "/tmp/gdr-shm-lanes-" + std::to_string(getpid()) + ".sent";
  unlink(marker.c_str());
  constexpr int kMsgs = 200;
  auto exits = runRanks(
      2,
      [&](int rank, int, gdrComm_t comm) {
        std::vector<uint8_t> buf(8);
        if (rank == 0) {
          for (int m = 0; m < kMsgs; ++m) {
            for (size_t i = 0; i < buf.size(); ++i) buf[i] = byteOf(m, i);
            CHILD_CHECK(gdrSend(buf.data(), buf.size(), gdrUint8, 1, comm, nullptr) == gdrSuccess,
                        "send %d: %s", m, gdrGetLastError(comm));
          }
          FILE* f = std::fopen(marker.c_str(), "w");
          CHILD_CHECK(f != nullptr, "cannot write %s", marker.c_str());
          if (f) std::fclose(f);
        } else {
          CHILD_CHECK(waitForFile(marker, 20), "the sender stalled before its %d sends completed",
                      kMsgs);
          for (int m = 0; m < kMsgs; ++m) {
            CHILD_CHECK(gdrRecv(buf.data(), buf.size(), gdrUint8, 0, comm, nullptr) == gdrSuccess,
                        "recv %d: %s", m, gdrGetLastError(comm));
            for (size_t i = 0; i < buf.size(); ++i)
              CHILD_CHECK(buf[i] == byteOf(m, i), "message %d byte %zu", m, i);
          }
        }
        _exit(gdrtest::childFailures() ? 1 : 0);
        return 0;
      },
      {{"GDR_TRANSPORT", "shm"}, {"GDR_TIMEOUT_MS", "30000"}}, 60);
  unlink(marker.c_str());
  expectAllOk(exits);
}

// Sizes on both sides of every boundary (inline, small lane, a main-lane
// slot, single copy), interleaved, more messages than the small lane has
// slots: each arrives whole and in order.
TEST(ShmLanes, MixedSizesStayInOrder) {
  const size_t kSizes[] = {1, 16, 17, 319, 320, 321, 5000, 65536 + 3, 300000};
  constexpr int kMsgs = 700;
  for (const char* cma : {"-1", "100"}) {
    auto exits = runRanks(
        2,
        [&](int rank, int, gdrComm_t comm) {
          std::vector<uint8_t> buf(300000);
          for (int m = 0; m < kMsgs; ++m) {
            // Mostly small ones, so the small lane wraps several times.
            const size_t n =
                m % 4 ? kSizes[m % 3] : kSizes[(m / 4) % (sizeof(kSizes) / sizeof(kSizes[0]))];
            if (rank == 0) {
              for (size_t i = 0; i < n; ++i) buf[i] = byteOf(m, i);
              CHILD_CHECK(gdrSend(buf.data(), n, gdrUint8, 1, comm, nullptr) == gdrSuccess,
                          "send %d: %s", m, gdrGetLastError(comm));
            } else {
              std::memset(buf.data(), 0xEE, n);
              CHILD_CHECK(gdrRecv(buf.data(), n, gdrUint8, 0, comm, nullptr) == gdrSuccess,
                          "recv %d: %s", m, gdrGetLastError(comm));
              size_t bad = 0;
              for (size_t i = 0; i < n; ++i) bad += buf[i] != byteOf(m, i);
              CHILD_CHECK(bad == 0, "message %d (%zu bytes): %zu wrong bytes", m, n, bad);
            }
          }
          _exit(gdrtest::childFailures() ? 1 : 0);
          return 0;
        },
        {{"GDR_TRANSPORT", "shm"}, {"GDR_SHM_CMA_THRESHOLD", cma}, {"GDR_TIMEOUT_MS", "30000"}},
        120);
    expectAllOk(exits);
  }
}

// 64 floats (256 bytes: the small lane) against 200 (800 bytes: the main
// lane), at the default check level: both ranks report the mismatch at once.
TEST(ShmLanes, SizeMismatchAcrossLanesIsReported) {
  auto exits = runRanks(
      2,
      [](int rank, int, gdrComm_t comm) {
        std::vector<float> in(200, 1.f), out(200);
        auto t0 = std::chrono::steady_clock::now();
        gdrResult_t r =
            gdrAllReduce(in.data(), out.data(), rank ? 200 : 64, gdrFloat32, gdrSum, comm, nullptr);
        double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        CHILD_CHECK(r == gdrInvalidUsage && std::strstr(gdrGetLastError(comm), "mismatch"),
                    "rank %d got %d: %s", rank, r, gdrGetLastError(comm));
        CHILD_CHECK(secs < 10, "rank %d took %.1f s to notice", rank, secs);
        _exit(gdrtest::childFailures() ? 1 : 0);
        return 0;
      },
      {{"GDR_TRANSPORT", "shm"}, {"GDR_TIMEOUT_MS", "20000"}}, 60);
  expectAllOk(exits);
}

// The receiver hands the small lane's slots back in batches. Rank 1 consumes
// 250 tiny messages (so some of its room is still held back), then waits on
// rank 2, which waits on rank 0, which first sends rank 1 enough more to need
// every slot of the lane: unless a receiver that waits on another peer hands
// back what it holds, the three wait on each other until the timeout.
TEST(ShmLanes, HeldBackRoomReturnsWhileTheReceiverWaitsElsewhere) {
  // Rank 1 reads the first 250 only once all are there, so it never waits
  // for one and hands back only whole batches of them (224); the lane is
  // then full after 224 + 256 = 480 messages.
  constexpr int kFirst = 250, kMore = 231;
  const std::string marker = "/tmp/gdr-shm-held-" + std::to_string(getpid()) + ".sent";
  unlink(marker.c_str());
  auto exits = runRanks(
      3,
      [&](int rank, int, gdrComm_t comm) {
        uint8_t b[8] = {};
        auto send = [&](int peer, int m) {
          for (size_t i = 0; i < sizeof(b); ++i) b[i] = byteOf(m, i);
          CHILD_CHECK(gdrSend(b, sizeof(b), gdrUint8, peer, comm, nullptr) == gdrSuccess,
                      "rank %d send %d to %d: %s", rank, m, peer, gdrGetLastError(comm));
        };
        auto recv = [&](int peer, int m) {
          CHILD_CHECK(gdrRecv(b, sizeof(b), gdrUint8, peer, comm, nullptr) == gdrSuccess,
                      "rank %d recv %d from %d: %s", rank, m, peer, gdrGetLastError(comm));
          for (size_t i = 0; i < sizeof(b); ++i)
            CHILD_CHECK(b[i] == byteOf(m, i), "rank %d message %d byte %zu", rank, m, i);
        };
        if (rank == 0) {
          for (int m = 0; m < kFirst; ++m) send(1, m);
          FILE* f = std::fopen(marker.c_str(), "w");
          CHILD_CHECK(f != nullptr, "cannot write %s", marker.c_str());
          if (f) std::fclose(f);
          for (int m = kFirst; m < kFirst + kMore; ++m) send(1, m);
          send(2, 0);
        } else if (rank == 1) {
          CHILD_CHECK(waitForFile(marker, 20), "rank 0 did not send its first %d", kFirst);
          for (int m = 0; m < kFirst; ++m) recv(0, m);
          recv(2, 0);
          for (int m = kFirst; m < kFirst + kMore; ++m) recv(0, m);
        } else {
          recv(0, 0);
          send(1, 0);
        }
        _exit(gdrtest::childFailures() ? 1 : 0);
        return 0;
      },
      {{"GDR_TRANSPORT", "shm"}, {"GDR_TIMEOUT_MS", "10000"}}, 60);
  unlink(marker.c_str());
  expectAllOk(exits);
}

}  // namespace

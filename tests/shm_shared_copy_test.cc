// A single-copy shared-memory message copied by both ranks at once
// (transport/shm/cma_copy.h): the pieces cover the message exactly, each is
// copied by one side only, the two halves of the work compose into the whole
// message, and end to end every size across the piece boundaries arrives
// intact with the sharing on and off.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "support/multiproc.h"
#include "transport/shm/cma_copy.h"

namespace {

using gdr::transport::shm::CopyShare;
using gdr::transport::shm::copyPieces;
using gdr::transport::shm::initShare;

uint8_t byteOf(int msg, size_t i) { return static_cast<uint8_t>(msg * 13 + i * 7 + (i >> 12) + 1); }

TEST(ShmSharedCopy, PiecesCoverTheMessageInPageMultiples) {
  for (size_t bytes : {size_t{1}, size_t{65536}, size_t{131072}, size_t{300001}, size_t{1} << 20,
                       (size_t{3} << 20) + 5, size_t{64} << 20}) {
    CopyShare share;
    initShare(&share, bytes);
    EXPECT_EQ(share.pieceBytes % 4096, 0u) << bytes;
    EXPECT_GE(share.pieceBytes, 16384u) << bytes;
    EXPECT_LE(share.pieceBytes, 1u << 20) << bytes;
    EXPECT_GE(size_t{share.pieces} * share.pieceBytes, bytes) << bytes;
    EXPECT_LT(size_t{share.pieces - 1} * share.pieceBytes, bytes) << bytes;
    EXPECT_EQ(share.dst.load(), 0u);
    EXPECT_EQ(share.next.load(), 0u);
    EXPECT_EQ(share.done.load(), 0u);
  }
  CopyShare share;
  initShare(&share, 256 << 10);
  EXPECT_EQ(share.pieces, 2u) << "a 256 KiB message is one half for each rank";
  initShare(&share, 32 << 10);
  EXPECT_EQ(share.pieces, 2u) << "so is a 32 KiB one (broadcast's threshold where ranks have cores)";
  initShare(&share, 20 << 10);
  EXPECT_EQ(share.pieces, 2u) << "16 KiB and the rest";
  initShare(&share, 16 << 10);
  EXPECT_EQ(share.pieces, 1u) << "no piece under 16 KiB";
}

// The two sides of one message, as two threads of this process (CMA to the
// own pid is allowed): one reads pieces from the source, the other writes
// pieces into the destination; together they copy each piece exactly once.
TEST(ShmSharedCopy, ReaderAndWriterTogetherCopyEachPieceOnce) {
  const size_t bytes = (size_t{7} << 20) + 12345;
  std::vector<uint8_t> src(bytes), dst(bytes, 0xEE);
  for (size_t i = 0; i < bytes; ++i) src[i] = byteOf(1, i);
  CopyShare share;
  initShare(&share, bytes);
  share.dst.store(reinterpret_cast<uintptr_t>(dst.data()));
  size_t byReader = 0, byWriter = 0;
  const pid_t self = getpid();
  std::thread writer([&] {
    byWriter = copyPieces(&share, true, self, 0, reinterpret_cast<char*>(src.data()),
                          share.dst.load(), bytes);
  });
  byReader = copyPieces(&share, false, self, 1, reinterpret_cast<char*>(dst.data()),
                        reinterpret_cast<uintptr_t>(src.data()), bytes);
  writer.join();
  EXPECT_EQ(byReader + byWriter, share.pieces);
  EXPECT_EQ(share.done.load(), share.pieces);
  EXPECT_TRUE(std::memcmp(src.data(), dst.data(), bytes) == 0) << "the halves do not compose";
}

// A piece copied by the writer alone (the reader never ran) is still whole.
TEST(ShmSharedCopy, OneSideAloneCopiesEverything) {
  const size_t bytes = (size_t{2} << 20) + 3;
  std::vector<uint8_t> src(bytes), dst(bytes, 0);
  for (size_t i = 0; i < bytes; ++i) src[i] = byteOf(2, i);
  CopyShare share;
  initShare(&share, bytes);
  EXPECT_EQ(copyPieces(&share, true, getpid(), 0, reinterpret_cast<char*>(src.data()),
                       reinterpret_cast<uintptr_t>(dst.data()), bytes),
            share.pieces);
  EXPECT_EQ(copyPieces(&share, false, getpid(), 0, reinterpret_cast<char*>(dst.data()),
                       reinterpret_cast<uintptr_t>(src.data()), bytes),
            0u)
      << "nothing is left once every piece is claimed";
  EXPECT_TRUE(std::memcmp(src.data(), dst.data(), bytes) == 0);
}

// End to end over shm, single copy from 100 B: sizes on both sides of the
// piece bounds (one piece, two, the 1 MiB cap), with sharing on and off;
// every message arrives whole and in order, and a broadcast of them too.
TEST(ShmSharedCopy, EverySizeArrivesWholeWithSharingOnAndOff) {
  const size_t kSizes[] = {100, 65535, 65536, 131072 + 1, 262144, 999999, (size_t{5} << 20) + 17};
  for (const char* share : {"1", "0"}) {
    auto exits = gdrtest::runRanks(
        2,
        [&](int rank, int, gdrComm_t comm) {
          std::vector<uint8_t> buf(kSizes[6]);
          int m = 0;
          for (int round = 0; round < 3; ++round)
            for (size_t n : kSizes) {
              ++m;
              if (rank == 0) {
                for (size_t i = 0; i < n; ++i) buf[i] = byteOf(m, i);
                CHILD_CHECK(gdrSend(buf.data(), n, gdrUint8, 1, comm, nullptr) == gdrSuccess,
                            "send %d: %s", m, gdrGetLastError(comm));
              } else {
                std::memset(buf.data(), 0xEE, n);
                CHILD_CHECK(gdrRecv(buf.data(), n, gdrUint8, 0, comm, nullptr) == gdrSuccess,
                            "recv %d: %s", m, gdrGetLastError(comm));
              }
              if (rank == 1) {
                size_t bad = 0;
                for (size_t i = 0; i < n; ++i) bad += buf[i] != byteOf(m, i);
                CHILD_CHECK(bad == 0, "message %d (%zu bytes): %zu wrong bytes", m, n, bad);
              }
              if (rank == 0)
                for (size_t i = 0; i < n; ++i) buf[i] = byteOf(-m, i);
              else
                std::memset(buf.data(), 0, n);
              CHILD_CHECK(gdrBroadcast(buf.data(), n, gdrUint8, 0, comm, nullptr) ==
                              gdrSuccess,
                          "bcast %d: %s", m, gdrGetLastError(comm));
              size_t bad = 0;
              for (size_t i = 0; i < n; ++i) bad += buf[i] != byteOf(-m, i);
              CHILD_CHECK(bad == 0, "broadcast %d (%zu bytes): %zu wrong bytes", m, n, bad);
            }
          _exit(gdrtest::childFailures() ? 1 : 0);
          return 0;
        },
        {{"GDR_TRANSPORT", "shm"}, {"GDR_SHM_CMA_THRESHOLD", "100"}, {"GDR_SHM_CMA_SHARE", share},
         {"GDR_TIMEOUT_MS", "30000"}},
        120);
    std::string why;
    EXPECT_TRUE(gdrtest::allOk(exits, &why)) << "GDR_SHM_CMA_SHARE=" << share << ": " << why;
  }
}

}  // namespace

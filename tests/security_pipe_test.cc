// GDR_ENCRYPT=1 socket frames through the sealing/opening pipeline
// (transport/socket/record_pipe.h): many frames of random sizes both ways at
// once, small ones sealed inline and large ones by the crypto pool, plain
// receives and receive-reduces: every byte arrives, in order, in the right
// frame; records opened with the wrong key are never delivered. Some frames
// carry pre-sealed payloads (clear records after a sealed header), mixed with
// the others; a clear record where a sealed one must be ends the connection.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <random>
#include <vector>

#include "core/error.h"
#include "transport/socket/socket_endpoint.h"

namespace {

using namespace gdr;
using transport::sock::SocketEndpoint;

std::mt19937_64 rng{std::random_device{}()};

void addBytes(void* dst, const void* a, const void* in, size_t n) {
  for (size_t i = 0; i < n; ++i)
    static_cast<uint8_t*>(dst)[i] =
        static_cast<uint8_t>(static_cast<const uint8_t*>(a)[i] + static_cast<const uint8_t*>(in)[i]);
}

struct Flow {
  std::vector<std::vector<uint8_t>> src, dst, base;
  std::vector<transport::SendOp> sends;
  std::vector<transport::RecvOp> recvs;
  explicit Flow(int n) : src(n), dst(n), base(n), sends(n), recvs(n) {
    for (int i = 0; i < n; ++i) {
      size_t bytes = rng() % 4 == 0 ? rng() % 64 : rng() % (300 * 1024);
      src[i].resize(bytes);
      for (auto& b : src[i]) b = static_cast<uint8_t>(rng());
      dst[i].assign(bytes, 0);
      base[i].resize(bytes);
      for (auto& b : base[i]) b = static_cast<uint8_t>(rng());
      sends[i].data = src[i].data();
      sends[i].bytes = bytes;
      sends[i].sig.seq = i;
      recvs[i].dst = dst[i].data();
      recvs[i].bytes = bytes;
      recvs[i].sig.seq = i;
      if (i % 3 == 1) {  // a receive-reduce
        recvs[i].fn = addBytes;
        recvs[i].reduceSrc = base[i].data();
      } else if (i % 3 == 2) {  // a payload the GPU sealed: goes in clear records
        sends[i].sig.flags = recvs[i].sig.flags = transport::kSigPreSealed;
      }
    }
  }
  void check() const {
    for (size_t i = 0; i < src.size(); ++i) {
      ASSERT_TRUE(recvs[i].complete) << "frame " << i;
      std::vector<uint8_t> want = src[i];
      if (recvs[i].fn) addBytes(want.data(), base[i].data(), src[i].data(), want.size());
      ASSERT_EQ(dst[i], want) << "frame " << i << " of " << src[i].size() << " bytes";
    }
  }
};

security::SessionKeys keys(const std::vector<uint8_t>& s, const std::vector<uint8_t>& r) {
  security::SessionKeys k{};
  std::memcpy(k.send, s.data(), 32);
  std::memcpy(k.recv, r.data(), 32);
  return k;
}

// Both directions at once between two endpoints over a socketpair; every
// frame must arrive intact (gtest failures otherwise).
void manyFramesBothWays() {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  std::vector<uint8_t> k1(32), k2(32);
  for (auto& b : k1) b = static_cast<uint8_t>(rng());
  for (auto& b : k2) b = static_cast<uint8_t>(rng());
  auto ka = keys(k1, k2), kb = keys(k2, k1);
  SocketEndpoint a(fds[0], 0, 1, &ka), b(fds[1], 1, 0, &kb);
  const int n = 24;
  Flow ab(n), ba(n);
  for (int i = 0; i < n; ++i) {
    a.postSend(&ab.sends[i]);
    b.postRecv(&ab.recvs[i]);
    b.postSend(&ba.sends[i]);
    a.postRecv(&ba.recvs[i]);
  }
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto done = [&] { return ab.recvs.back().complete && ba.recvs.back().complete && ab.sends.back().complete &&
                           ba.sends.back().complete; };
  while (!done() && std::chrono::steady_clock::now() < until) {
    a.progress();
    b.progress();
  }
  ASSERT_TRUE(done()) << "transfers did not finish";
  ab.check();
  ba.check();
}

TEST(SecurityPipe, ManyFramesBothWaysArriveIntactAndInOrder) { manyFramesBothWays(); }

// The pool's workers do not survive fork(); a child must still get its
// records sealed and opened (by its own threads), and must not hang.
TEST(SecurityPipe, AForkedChildStillEncrypts) {
  manyFramesBothWays();  // the pool (if any) is running now
  pid_t pid = fork();
  if (pid == 0) {
    alarm(120);  // a child stuck on a lock held across fork dies and fails the test
    manyFramesBothWays();
    _exit(::testing::Test::HasFailure() ? 1 : 0);
  }
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

TEST(SecurityPipe, RecordsUnderAnotherKeyAreNeverDelivered) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  std::vector<uint8_t> k1(32, 1), k2(32, 2), k3(32, 3);
  auto ka = keys(k1, k2), kb = keys(k2, k3);  // b expects k3 from a, a seals with k1
  SocketEndpoint a(fds[0], 0, 1, &ka), b(fds[1], 1, 0, &kb);
  Flow f(1);
  f.src[0].assign(200000, 7);
  f.dst[0].assign(200000, 0);
  f.sends[0].data = f.src[0].data();
  f.sends[0].bytes = f.recvs[0].bytes = 200000;
  f.recvs[0].dst = f.dst[0].data();
  f.recvs[0].fn = nullptr;
  a.postSend(&f.sends[0]);
  b.postRecv(&f.recvs[0]);
  std::string err;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  try {
    while (!f.recvs[0].complete && std::chrono::steady_clock::now() < until) {
      a.progress();
      b.progress();
    }
  } catch (const RemoteError& e) {
    err = e.what();
  }
  EXPECT_NE(err.find("rank 0"), std::string::npos) << err;
  EXPECT_NE(err.find("failed authentication"), std::string::npos) << err;
  EXPECT_FALSE(f.recvs[0].complete);
  EXPECT_EQ(f.dst[0], std::vector<uint8_t>(200000, 0));
}

}  // namespace

namespace {

// A clear record injected where a sealed frame header must come: the
// receiver refuses it as malformed and delivers nothing.
TEST(SecurityPipe, AClearRecordOutsideAPreSealedPayloadIsRefused) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  std::vector<uint8_t> k1(32, 1), k2(32, 2);
  auto kb = keys(k2, k1);
  SocketEndpoint b(fds[1], 1, 0, &kb);
  std::vector<uint8_t> rec(4 + 64, 0x55);
  uint32_t len = 64 | transport::sock::kClearRecord;
  std::memcpy(rec.data(), &len, 4);
  ASSERT_EQ(write(fds[0], rec.data(), rec.size()), static_cast<ssize_t>(rec.size()));
  std::vector<uint8_t> dst(64, 0);
  transport::RecvOp r;
  r.dst = dst.data();
  r.bytes = 64;
  b.postRecv(&r);
  std::string err;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  try {
    while (!r.complete && std::chrono::steady_clock::now() < until) b.progress();
  } catch (const RemoteError& e) {
    err = e.what();
  }
  EXPECT_NE(err.find("malformed"), std::string::npos) << err;
  EXPECT_NE(err.find("clear record"), std::string::npos) << err;
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(dst, std::vector<uint8_t>(64, 0));
  close(fds[0]);
}

}  // namespace

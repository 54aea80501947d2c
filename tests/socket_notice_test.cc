// Notices beside the data on the socket transport (Endpoint::sendNotice):
// they arrive in order, between data frames, plain and encrypted, without
// being taken for data; a notice does not turn a clean close into an error;
// a notice frame of a bad length ends the connection. And the verbs
// endpoint's QP-down notice (transport/ib/qp_notice.h) decodes only itself.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "transport/socket/socket_endpoint.h"
#if GDR_HAVE_IB
#include "transport/ib/qp_notice.h"
#endif

namespace {

using namespace gdr;
using transport::sock::FrameHdr;
using transport::sock::SocketEndpoint;

struct Ends {
  security::SessionKeys a{}, b{};
  std::unique_ptr<SocketEndpoint> tx, rx;
  explicit Ends(bool encrypted) {
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    std::mt19937_64 rng{std::random_device{}()};
    for (size_t i = 0; i < sizeof(a.send); ++i) {
      a.send[i] = b.recv[i] = static_cast<uint8_t>(rng());
      a.recv[i] = b.send[i] = static_cast<uint8_t>(rng());
    }
    tx = std::make_unique<SocketEndpoint>(fds[0], 0, 1, encrypted ? &a : nullptr);
    rx = std::make_unique<SocketEndpoint>(fds[1], 1, 0, encrypted ? &b : nullptr);
  }
};

// Polls `ep` (checkPeer reads notices waiting) until `n` were taken or 5 s.
std::vector<std::string> takeNotices(transport::Endpoint& ep, size_t n) {
  std::vector<std::string> got;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::string s;
  while (got.size() < n && std::chrono::steady_clock::now() < until) {
    ep.checkPeer();
    while (ep.takeNotice(&s)) got.push_back(s);
  }
  return got;
}

TEST(SocketNotice, ArriveInOrderBetweenDataFrames) {
  for (int encrypted = 0; encrypted < 2; ++encrypted) {
    Ends e(encrypted != 0);
    std::vector<char> src(100000), dst(src.size(), 0);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<char>(i * 7);
    ASSERT_TRUE(e.tx->sendNotice("first", 5));
    transport::SendOp s;
    s.data = src.data();
    s.bytes = src.size();
    e.tx->postSend(&s);
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!s.complete && std::chrono::steady_clock::now() < until) {
      e.tx->progress();
      e.rx->checkPeer();  // reads the notice, then holds the data frame's header
    }
    ASSERT_TRUE(s.complete);
    ASSERT_TRUE(e.tx->sendNotice("second", 6));
    EXPECT_EQ(takeNotices(*e.rx, 1), std::vector<std::string>{"first"})
        << "encrypted " << encrypted;
    transport::RecvOp r;
    r.dst = dst.data();
    r.bytes = dst.size();
    e.rx->postRecv(&r);
    until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!r.complete && std::chrono::steady_clock::now() < until) e.rx->progress();
    ASSERT_TRUE(r.complete);
    EXPECT_EQ(dst, src);
    EXPECT_EQ(takeNotices(*e.rx, 1), std::vector<std::string>{"second"});
    std::string none;
    EXPECT_FALSE(e.rx->takeNotice(&none));
  }
}

TEST(SocketNotice, RefusesEmptyAndOversized) {
  Ends e(false);
  std::string big(transport::Endpoint::kMaxNotice + 1, 'x');
  EXPECT_FALSE(e.tx->sendNotice(big.data(), big.size()));
  EXPECT_FALSE(e.tx->sendNotice("", 0));
  EXPECT_TRUE(e.tx->sendNotice(big.data(), big.size() - 1));
  EXPECT_EQ(takeNotices(*e.rx, 1).at(0).size(), transport::Endpoint::kMaxNotice);
}

TEST(SocketNotice, ANoticeThenACloseIsStillACleanLeave) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  SocketEndpoint rx(fds[1], 1, 0);
  {
    SocketEndpoint tx(fds[0], 0, 1);
    ASSERT_TRUE(tx.sendNotice("bye", 3));
  }  // closes its end
  EXPECT_NO_THROW(rx.checkPeer());
  std::string s;
  EXPECT_TRUE(rx.takeNotice(&s));
  EXPECT_EQ(s, "bye");
  EXPECT_NO_THROW(rx.checkPeer());  // nothing owed: no error
}

TEST(SocketNotice, BadLengthEndsTheConnection) {
  for (uint64_t len : {uint64_t{0}, uint64_t{transport::Endpoint::kMaxNotice + 1}, ~uint64_t{0}}) {
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    SocketEndpoint rx(fds[1], 1, 0);
    FrameHdr h{transport::sock::kFrameMagic,
               transport::sock::kFrameVersion,
               transport::sock::kFrameNotice,
               {},
               len};
    ASSERT_EQ(write(fds[0], &h, sizeof(h)), static_cast<ssize_t>(sizeof(h)));
    try {
      rx.checkPeer();
      ADD_FAILURE() << "accepted a notice of " << len << " bytes";
    } catch (const RemoteError& err) {
      EXPECT_NE(std::string(err.what()).find("malformed frame"), std::string::npos) << err.what();
    }
    close(fds[0]);
  }
}

#if GDR_HAVE_IB
using transport::ib::decodeQpDown;
using transport::ib::encodeQpDown;
using transport::ib::QpDownNotice;

TEST(SocketNotice, QpDownRoundTripsAndRefusesOthers) {
  const std::string w = encodeQpDown({3, 12});
  QpDownNotice n;
  ASSERT_TRUE(decodeQpDown(w, 4, &n));
  EXPECT_EQ(n.qp, 3);
  EXPECT_EQ(n.status, 12);
  EXPECT_FALSE(decodeQpDown(w, 3, &n)) << "QP 3 of a connection of 3";
  EXPECT_FALSE(decodeQpDown(w.substr(1), 4, &n));
  EXPECT_FALSE(decodeQpDown(w + "x", 4, &n));
  for (size_t i = 0; i < 3; ++i) {  // tag and version
    std::string bad = w;
    bad[i] ^= 1;
    EXPECT_FALSE(decodeQpDown(bad, 4, &n)) << "byte " << i;
  }
  EXPECT_FALSE(decodeQpDown("first", 4, &n));
}
#endif

}  // namespace

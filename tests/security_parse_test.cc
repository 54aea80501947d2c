// Hardened parsing: every parser of bytes that arrive from a socket (the
// handshake messages, the bootstrap's hello and address table, the socket
// transport's frame and record headers) is fed random, truncated, oversized
// and mutated input: it must refuse garbage and never crash. Then the socket
// endpoint itself is fed garbage over a socketpair (plain and encrypted): the
// connection ends with an error naming the peer, nothing is delivered, and a
// flipped bit in an encrypted record is an authentication error.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "security/aead.h"
#include "security/bootstrap_wire.h"
#include "security/handshake_wire.h"
#include "transport/socket/socket_endpoint.h"

namespace {

using namespace gdr;
using namespace gdr::security;
using transport::sock::FrameHdr;

std::mt19937_64 rng{std::random_device{}()};

std::vector<uint8_t> randomBytes(size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

HsHello validHello() {
  HsHello h{};
  h.magic = kHsMagic;
  h.version = kProtocolVersion;
  h.type = kHsHello;
  h.channel = static_cast<uint16_t>(Channel::Socket);
  h.fromRank = 1;
  h.toRank = 2;
  return h;
}

RvHello validRv() {
  RvHello h{};
  h.magic = kRvMagic;
  h.version = kProtocolVersion;
  h.rank = 3;
  h.nranks = 4;
  h.addr.family = AF_INET;
  h.addr.port = 1234;
  return h;
}

// Every parser on one byte string: none may crash; returns how many accepted.
int parseAll(const uint8_t* p, size_t n) {
  HsHello a;
  HsReply b;
  HsFinish c;
  RvHello d;
  int ok = !parseHsHello(p, n, &a) + !parseHsReply(p, n, &b) + !parseHsFinish(p, n, &c) + !parseRvHello(p, n, &d);
  if (n >= sizeof(FrameHdr)) {
    FrameHdr f;
    std::memcpy(&f, p, sizeof(f));
    ok += !transport::sock::checkFrameHdr(f);
  }
  if (n >= kRecordHdrBytes) {
    uint32_t len;
    transport::sock::checkRecordLen(p, &len);
  }
  ok += !checkAddrTable(p, n, static_cast<int>(n / sizeof(net::PackedAddr)) + 1);
  return ok;
}

TEST(SecurityParse, RandomBytesOfEveryLengthAreRefused) {
  int accepted = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    auto v = randomBytes(rng() % 200);
    accepted += parseAll(v.data(), v.size());
  }
  // Random bytes pass a magic check with probability 2^-32 per try.
  EXPECT_EQ(accepted, 0);
  EXPECT_EQ(parseAll(nullptr, 0), 0);
}

template <typename T, typename Parse>
void truncatedAndOversizedAreRefused(const T& valid, Parse parse) {
  std::vector<uint8_t> buf(sizeof(T) + 64);
  std::memcpy(buf.data(), &valid, sizeof(T));
  T out;
  EXPECT_EQ(parse(buf.data(), sizeof(T), &out), nullptr);
  for (size_t n = 0; n < sizeof(T); ++n) EXPECT_NE(parse(buf.data(), n, &out), nullptr) << "truncated to " << n;
  for (size_t n = sizeof(T) + 1; n < buf.size(); ++n) EXPECT_NE(parse(buf.data(), n, &out), nullptr) << "size " << n;
}

TEST(SecurityParse, TruncatedAndOversizedMessagesAreRefused) {
  truncatedAndOversizedAreRefused(validHello(), parseHsHello);
  HsReply r{};
  r.magic = kHsMagic;
  r.version = kProtocolVersion;
  r.type = kHsReply;
  truncatedAndOversizedAreRefused(r, parseHsReply);
  HsFinish f{kHsMagic, kProtocolVersion, kHsFinish, {}};
  truncatedAndOversizedAreRefused(f, parseHsFinish);
  truncatedAndOversizedAreRefused(validRv(), parseRvHello);
}

TEST(SecurityParse, FieldsOutOfRangeAndOtherVersionsAreRefused) {
  HsHello h = validHello(), out;
  h.version = kProtocolVersion + 1;
  EXPECT_STREQ(parseHsHello(&h, sizeof(h), &out), "unsupported gdrcoll protocol version");
  h = validHello();
  h.channel = 99;
  EXPECT_NE(parseHsHello(&h, sizeof(h), &out), nullptr);
  h = validHello();
  h.fromRank = -5;
  EXPECT_NE(parseHsHello(&h, sizeof(h), &out), nullptr);
  h = validHello();
  h.type = kHsFinish;
  EXPECT_NE(parseHsHello(&h, sizeof(h), &out), nullptr);

  RvHello rv = validRv(), rvOut;
  rv.rank = 4;  // == nranks
  EXPECT_NE(parseRvHello(&rv, sizeof(rv), &rvOut), nullptr);
  rv = validRv();
  rv.nranks = kMaxRanks + 1;
  rv.rank = 0;
  EXPECT_NE(parseRvHello(&rv, sizeof(rv), &rvOut), nullptr);
  rv = validRv();
  rv.addr.family = 77;
  EXPECT_NE(parseRvHello(&rv, sizeof(rv), &rvOut), nullptr);

  FrameHdr f{transport::sock::kFrameMagic, transport::sock::kFrameVersion, transport::sock::kFrameAbort, {}, 1ull << 40};
  EXPECT_STREQ(transport::sock::checkFrameHdr(f), "abort notice of a bad length");
  f.bytes = 100;
  EXPECT_EQ(transport::sock::checkFrameHdr(f), nullptr);
  f.version = 2;
  EXPECT_STREQ(transport::sock::checkFrameHdr(f), "unsupported frame version");
  f.version = transport::sock::kFrameVersion;
  f.type = 7;
  EXPECT_NE(transport::sock::checkFrameHdr(f), nullptr);

  uint8_t rec[4];
  uint32_t len;
  uint32_t big = kMaxRecordBytes + 1, zero = 0, fine = 100;
  std::memcpy(rec, &big, 4);
  EXPECT_STREQ(transport::sock::checkRecordLen(rec, &len), "oversized encrypted record");
  std::memcpy(rec, &zero, 4);
  EXPECT_NE(transport::sock::checkRecordLen(rec, &len), nullptr);
  std::memcpy(rec, &fine, 4);
  EXPECT_EQ(transport::sock::checkRecordLen(rec, &len), nullptr);
  EXPECT_EQ(len, 100u);

  std::vector<net::PackedAddr> table(3, validRv().addr);
  EXPECT_EQ(checkAddrTable(table.data(), table.size() * sizeof(net::PackedAddr), 3), nullptr);
  EXPECT_NE(checkAddrTable(table.data(), table.size() * sizeof(net::PackedAddr) - 1, 3), nullptr);
  table[1].port = 0;
  EXPECT_NE(checkAddrTable(table.data(), table.size() * sizeof(net::PackedAddr), 3), nullptr);
}

TEST(SecurityParse, MutatedValidMessagesNeverCrash) {
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> v(sizeof(HsHello));
    HsHello h = validHello();
    std::memcpy(v.data(), &h, sizeof(h));
    int flips = 1 + rng() % 4;
    for (int i = 0; i < flips; ++i) v[rng() % v.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
    if (rng() % 4 == 0) v.resize(rng() % v.size());
    parseAll(v.data(), v.size());
  }
}

// ---- the endpoint over a socketpair ----

struct Pair {
  int fd[2] = {-1, -1};
  Pair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0); }
  ~Pair() {
    if (fd[1] >= 0) close(fd[1]);
  }
};

// Drives progress until it throws (returns the text) or stops moving.
std::string drive(transport::Endpoint& ep, transport::RecvOp& op) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  try {
    while (!op.complete && std::chrono::steady_clock::now() < until) ep.progress();
  } catch (const Error& e) {
    return e.what();
  }
  return op.complete ? "completed" : "stalled";
}

TEST(SecurityParse, SocketEndpointEndsTheConnectionOnGarbage) {
  for (int encrypted = 0; encrypted < 2; ++encrypted) {
    for (int iter = 0; iter < 200; ++iter) {
      Pair p;
      SessionKeys keys{};
      randomBytes(1);  // keep rng moving
      transport::sock::SocketEndpoint ep(p.fd[0], 0, 1, encrypted ? &keys : nullptr);
      std::vector<char> dst(64, 0x5a);
      transport::RecvOp op;
      op.dst = dst.data();
      op.bytes = dst.size();
      ep.postRecv(&op);
      auto junk = randomBytes(1 + rng() % 4096);
      ASSERT_EQ(write(p.fd[1], junk.data(), junk.size()), static_cast<ssize_t>(junk.size()));
      if (rng() % 2) {
        close(p.fd[1]);  // truncated: the peer goes away mid-message
        p.fd[1] = -1;
      }
      std::string how = drive(ep, op);
      EXPECT_NE(how, "completed");
      if (how != "stalled") {
        EXPECT_TRUE(how.find("rank 1") != std::string::npos) << how;
      }
      EXPECT_EQ(dst, std::vector<char>(64, 0x5a)) << "garbage reached the destination";
    }
  }
}

TEST(SecurityParse, OversizedAbortNoticeEndsTheConnectionWithoutAllocating) {
  Pair p;
  transport::sock::SocketEndpoint ep(p.fd[0], 0, 1);
  FrameHdr h{transport::sock::kFrameMagic, transport::sock::kFrameVersion, transport::sock::kFrameAbort, {},
             ~0ull};
  ASSERT_EQ(write(p.fd[1], &h, sizeof(h)), static_cast<ssize_t>(sizeof(h)));
  try {
    ep.checkPeer();
    FAIL() << "accepted an abort notice of 2^64 bytes";
  } catch (const RemoteError& e) {
    EXPECT_NE(std::string(e.what()).find("malformed frame"), std::string::npos) << e.what();
  }
}

void roundTrip(bool corrupt) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  SessionKeys a{}, b{};
  randomBytes(1);
  auto k1 = randomBytes(32), k2 = randomBytes(32);
  std::memcpy(a.send, k1.data(), 32);
  std::memcpy(a.recv, k2.data(), 32);
  std::memcpy(b.send, k2.data(), 32);
  std::memcpy(b.recv, k1.data(), 32);
  transport::sock::SocketEndpoint tx(fds[0], 0, 1, &a), rx(fds[1], 1, 0, &b);
  std::vector<uint8_t> src = randomBytes(300000 + rng() % 1000), dst(src.size(), 0);
  transport::SendOp s;
  s.data = src.data();
  s.bytes = src.size();
  transport::RecvOp r;
  r.dst = dst.data();
  r.bytes = dst.size();
  if (corrupt) security::testing::corruptNextRecord();
  tx.postSend(&s);
  rx.postRecv(&r);
  std::string err;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  try {
    while (!(s.complete && r.complete) && std::chrono::steady_clock::now() < until) {
      tx.progress();
      rx.progress();
    }
  } catch (const Error& e) {
    err = e.what();
  }
  if (corrupt) {
    EXPECT_NE(err.find("failed authentication"), std::string::npos) << err;
    EXPECT_FALSE(r.complete);
    // The first record (the tampered one) never reached the destination.
    EXPECT_EQ(std::vector<uint8_t>(dst.begin(), dst.begin() + 1000), std::vector<uint8_t>(1000, 0));
  } else {
    EXPECT_EQ(err, "");
    EXPECT_TRUE(r.complete);
    EXPECT_EQ(dst, src);
  }
}

TEST(SecurityParse, EncryptedFramesRoundTrip) { roundTrip(false); }
TEST(SecurityParse, FlippedBitInAnEncryptedRecordIsAnAuthenticationError) { roundTrip(true); }

}  // namespace

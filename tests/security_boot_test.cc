// The TCP bootstrap's messages after the handshake (security/boot_link.h):
// sealed both ways, plain (HMAC) and encrypted (AES-GCM). An altered, forged,
// replayed, reordered or reflected message is refused with an error naming
// the peer, and nothing of it reaches the caller's buffer. The envelope
// header parser is fed garbage too.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "security/boot_link.h"
#include "security/bootstrap_wire.h"

namespace {

using namespace gdr;
using namespace gdr::security;

std::mt19937_64 rng{std::random_device{}()};

std::vector<uint8_t> junk(size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

// Two ends of one connection: a's send key is b's receive key and back.
struct Ends {
  BootLink a, b;
  explicit Ends(bool encrypt) {
    SessionKeys ka{}, kb{};
    auto k1 = junk(kKeyBytes), k2 = junk(kKeyBytes);
    std::memcpy(ka.send, k1.data(), kKeyBytes);
    std::memcpy(ka.recv, k2.data(), kKeyBytes);
    std::memcpy(kb.send, k2.data(), kKeyBytes);
    std::memcpy(kb.recv, k1.data(), kKeyBytes);
    a = BootLink(ka, encrypt, "rank 1");  // named after its peer
    b = BootLink(kb, encrypt, "rank 0");
  }
};

std::vector<uint8_t> sealed(BootLink& l, const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> w(l.wireBytes(payload.size()));
  l.seal(payload.data(), payload.size(), w.data());
  return w;
}

// Opens `w`; returns the error text ("" if accepted). `out` must stay untouched on refusal.
std::string tryOpen(BootLink& l, const std::vector<uint8_t>& w, std::vector<uint8_t>& out) {
  try {
    l.open(w.data(), w.size(), out.data(), out.size());
    return "";
  } catch (const RemoteError& e) {
    return e.what();
  }
}

class SecurityBoot : public ::testing::TestWithParam<bool> {};

TEST_P(SecurityBoot, MessagesRoundTripInOrder) {
  Ends e(GetParam());
  for (size_t n : {size_t(0), size_t(1), size_t(40), size_t(4096), size_t(100000)}) {
    auto p = junk(n);
    auto w = sealed(e.a, p);
    if (GetParam() && n >= 40) {
      EXPECT_EQ(std::search(w.begin(), w.end(), p.begin(), p.begin() + 40), w.end())
          << "payload visible in clear under encryption";
    }
    std::vector<uint8_t> out(n, 0);
    EXPECT_EQ(tryOpen(e.b, w, out), "");
    EXPECT_EQ(out, p);
  }
}

TEST_P(SecurityBoot, EveryAlteredByteIsRefusedAndNothingIsDelivered) {
  Ends e(GetParam());
  auto p = junk(64);
  for (int trial = 0; trial < 200; ++trial) {
    auto w = sealed(e.a, p);
    size_t at = rng() % w.size();
    w[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
    std::vector<uint8_t> out(p.size(), 0xAB);
    std::string err = tryOpen(e.b, w, out);
    EXPECT_NE(err.find("bootstrap message from rank 0 refused"), std::string::npos) << "byte " << at << ": " << err;
    EXPECT_EQ(out, std::vector<uint8_t>(p.size(), 0xAB)) << "byte " << at;
    e = Ends(GetParam());  // sequence numbers moved on: a fresh pair per trial
  }
}

TEST_P(SecurityBoot, ReplayedReorderedAndReflectedMessagesAreRefused) {
  Ends e(GetParam());
  auto p0 = junk(100), p1 = junk(100);
  auto w0 = sealed(e.a, p0), w1 = sealed(e.a, p1);
  std::vector<uint8_t> out(100, 0);
  // Reordered: the second message first.
  std::string err = tryOpen(e.b, w1, out);
  EXPECT_NE(err.find("replayed or out of order"), std::string::npos) << err;
  EXPECT_EQ(tryOpen(e.b, w0, out), "");
  // Replayed: the first message again.
  err = tryOpen(e.b, w0, out);
  EXPECT_NE(err.find("replayed or out of order"), std::string::npos) << err;
  EXPECT_EQ(tryOpen(e.b, w1, out), "");
  EXPECT_EQ(out, p1);
  // Reflected: a's own message back to a (other direction, other key).
  auto w2 = sealed(e.a, p0);
  err = tryOpen(e.a, w2, out);
  EXPECT_NE(err.find("authentication failed"), std::string::npos) << err;
  // Forged: right header, made-up tag.
  auto w3 = sealed(e.a, p0);
  auto fake = junk(w3.size() - sizeof(BootMsgHdr));
  std::copy(fake.begin(), fake.end(), w3.begin() + sizeof(BootMsgHdr));
  err = tryOpen(e.b, w3, out);
  EXPECT_NE(err.find("authentication failed"), std::string::npos) << err;
}

TEST_P(SecurityBoot, ModeOrLengthMismatchIsRefused) {
  Ends e(GetParam()), other(!GetParam());
  auto w = sealed(other.a, junk(24));
  std::vector<uint8_t> out(24, 0);
  w.resize(e.b.wireBytes(24));  // the size this side expects
  EXPECT_NE(tryOpen(e.b, w, out), "");
  auto w2 = sealed(e.a, junk(25));
  w2.resize(e.b.wireBytes(24));
  EXPECT_NE(tryOpen(e.b, w2, out).find("unexpected length"), std::string::npos);
}

TEST_P(SecurityBoot, OverASocketAndWithAMiddleman) {
  Ends e(GetParam());
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  auto p = junk(333);
  e.a.send(fds[0], p.data(), p.size(), deadline);
  // The middleman captures it, delivers it, then delivers it again.
  std::vector<uint8_t> w(e.a.wireBytes(p.size()));
  ASSERT_EQ(read(fds[1], w.data(), w.size()), static_cast<ssize_t>(w.size()));
  ASSERT_EQ(write(fds[0], w.data(), w.size()), static_cast<ssize_t>(w.size()));
  ASSERT_EQ(write(fds[0], w.data(), w.size()), static_cast<ssize_t>(w.size()));
  std::vector<uint8_t> out(p.size());
  e.b.recv(fds[1], out.data(), out.size(), deadline);
  EXPECT_EQ(out, p);
  try {
    e.b.recv(fds[1], out.data(), out.size(), deadline);
    FAIL() << "a replayed bootstrap message was accepted";
  } catch (const RemoteError& ex) {
    EXPECT_NE(std::string(ex.what()).find("replayed or out of order"), std::string::npos) << ex.what();
  }
  close(fds[0]);
  close(fds[1]);
}

INSTANTIATE_TEST_SUITE_P(PlainAndEncrypted, SecurityBoot, ::testing::Bool(),
                         [](const auto& i) { return i.param ? "Encrypted" : "Hmac"; });

TEST(SecurityBootParse, GarbageHeadersAreRefused) {
  BootMsgHdr h;
  for (int trial = 0; trial < 20000; ++trial) {
    auto b = junk(rng() % 40);
    bool enc = rng() & 1;
    size_t expect = rng() % 100;
    const char* err = parseBootMsgHdr(b.data(), b.size(), enc, expect, &h);
    if (!err) {  // astronomically unlikely: a valid header by chance
      EXPECT_EQ(b.size(), sizeof(BootMsgHdr));
      EXPECT_EQ(h.magic, kBootMsgMagic);
    }
  }
  BootMsgHdr good{kBootMsgMagic, 1, 0, 7, 12, 0};
  EXPECT_EQ(parseBootMsgHdr(&good, sizeof(good), false, 12, &h), nullptr);
  EXPECT_NE(parseBootMsgHdr(&good, sizeof(good), true, 12, &h), nullptr);
  EXPECT_NE(parseBootMsgHdr(&good, sizeof(good), false, 13, &h), nullptr);
  EXPECT_NE(parseBootMsgHdr(&good, sizeof(good) - 1, false, 12, &h), nullptr);
  good.reserved = 1;
  EXPECT_NE(parseBootMsgHdr(&good, sizeof(good), false, 12, &h), nullptr);
}

}  // namespace

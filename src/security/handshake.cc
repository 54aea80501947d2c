#include "security/handshake.h"

#include <cstring>

#include "core/params.h"

namespace gdr::security {

namespace {

constexpr char kLabelAcceptor[16] = "gdrcoll v1 acc";
constexpr char kLabelInitiator[16] = "gdrcoll v1 ini";
constexpr char kInfoAuth[] = "gdrcoll v1 auth key";
constexpr char kInfoSession[] = "gdrcoll v1 session keys";

#pragma pack(push, 1)
struct Transcript {
  char label[16];
  uint8_t jobId[kJobIdBytes];
  uint16_t channel;
  uint16_t flags;
  int32_t fromRank;
  int32_t toRank;
  uint8_t nonceA[kHsNonceBytes];
  uint8_t nonceB[kHsNonceBytes];
};
struct SessionInfo {
  char label[sizeof(kInfoSession)];
  uint8_t jobId[kJobIdBytes];
  uint16_t channel;
  int32_t fromRank;
  int32_t toRank;
};
#pragma pack(pop)

void authKey(const JobSecret& s, uint8_t out[kKeyBytes]) {
  hkdfSha256(s.key, kKeyBytes, s.jobId, kJobIdBytes, kInfoAuth, sizeof(kInfoAuth), out, kKeyBytes);
}

// Initiator -> acceptor first, then acceptor -> initiator.
void sessionKeys(const JobSecret& s, const HsHello& m1, const uint8_t nonceB[kHsNonceBytes], uint8_t out[64]) {
  uint8_t salt[2 * kHsNonceBytes];
  std::memcpy(salt, m1.nonce, kHsNonceBytes);
  std::memcpy(salt + kHsNonceBytes, nonceB, kHsNonceBytes);
  SessionInfo info{};
  std::memcpy(info.label, kInfoSession, sizeof(kInfoSession));
  std::memcpy(info.jobId, s.jobId, kJobIdBytes);
  info.channel = m1.channel;
  info.fromRank = m1.fromRank;
  info.toRank = m1.toRank;
  hkdfSha256(s.key, kKeyBytes, salt, sizeof(salt), &info, sizeof(info), out, 64);
}

}  // namespace

void transcriptMac(const JobSecret& secret, bool fromAcceptor, const HsHello& m1,
                   const uint8_t nonceB[kHsNonceBytes], uint8_t out[kMacBytes]) {
  Transcript t{};
  std::memcpy(t.label, fromAcceptor ? kLabelAcceptor : kLabelInitiator, 16);
  std::memcpy(t.jobId, secret.jobId, kJobIdBytes);
  t.channel = m1.channel;
  t.flags = m1.flags;
  t.fromRank = m1.fromRank;
  t.toRank = m1.toRank;
  std::memcpy(t.nonceA, m1.nonce, kHsNonceBytes);
  std::memcpy(t.nonceB, nonceB, kHsNonceBytes);
  uint8_t k[kKeyBytes];
  authKey(secret, k);
  hmacSha256(k, &t, sizeof(t), out);
  wipe(k, sizeof(k));
}

net::Clock::time_point authDeadline(net::Clock::time_point cap) {
  auto d = net::Clock::now() + std::chrono::milliseconds(param::getInt("GDR_AUTH_TIMEOUT_MS"));
  return d < cap ? d : cap;
}

// ---- initiator ----

Initiator::Initiator(const JobSecret& secret, Channel channel, int myRank, int peerRank, bool encrypt)
    : secret_(secret) {
  hello_.magic = kHsMagic;
  hello_.version = kProtocolVersion;
  hello_.type = kHsHello;
  hello_.channel = static_cast<uint16_t>(channel);
  hello_.flags = encrypt ? kHsEncrypt : 0;
  hello_.fromRank = myRank;
  hello_.toRank = peerRank;
  randomBytes(hello_.nonce, sizeof(hello_.nonce));
}

Initiator::~Initiator() { wipe(&hello_, sizeof(hello_)); }

void Initiator::start(int fd, net::Clock::time_point deadline, const std::string& who) {
  net::sendAll(fd, &hello_, sizeof(hello_), deadline, who);
}

SessionKeys Initiator::finish(int fd, net::Clock::time_point deadline, const std::string& who) {
  uint8_t buf[sizeof(HsReply)];
  try {
    net::recvAll(fd, buf, sizeof(buf), deadline, who);
  } catch (const RemoteError& e) {
    throw RemoteError(std::string(e.what()) +
                      " during authentication: it refused this rank (a different job key, GDR_ENCRYPT set "
                      "differently, or not a rank of this job listening there?)");
  }
  HsReply r;
  if (const char* err = parseHsReply(buf, sizeof(buf), &r))
    throw RemoteError(strprintf("%s answered the handshake with garbage: %s", who.c_str(), err));
  if (r.rank != hello_.toRank)
    throw RemoteError(strprintf("%s answered as rank %d, not rank %d", who.c_str(), r.rank, hello_.toRank));
  if (r.flags != hello_.flags)
    throw InvalidUsage(strprintf("GDR_ENCRYPT is %d on this rank but %d on %s: set it the same on every rank",
                                 (hello_.flags & kHsEncrypt) ? 1 : 0, (r.flags & kHsEncrypt) ? 1 : 0,
                                 who.c_str()));
  uint8_t want[kMacBytes];
  transcriptMac(secret_, true, hello_, r.nonce, want);
  if (!equalConstTime(want, r.mac, kMacBytes))
    throw RemoteError(strprintf("%s failed authentication (it does not hold this job's key)", who.c_str()));
  HsFinish f{kHsMagic, kProtocolVersion, kHsFinish, {}};
  transcriptMac(secret_, false, hello_, r.nonce, f.mac);
  net::sendAll(fd, &f, sizeof(f), deadline, who);
  uint8_t keys[64];
  sessionKeys(secret_, hello_, r.nonce, keys);
  SessionKeys out;
  std::memcpy(out.send, keys, kKeyBytes);
  std::memcpy(out.recv, keys + kKeyBytes, kKeyBytes);
  wipe(keys, sizeof(keys));
  return out;
}

// ---- acceptor ----

Acceptor::Acceptor(const JobSecret& secret, Channel channel, int myRank, bool encrypt)
    : secret_(secret), channel_(channel), myRank_(myRank), flags_(encrypt ? kHsEncrypt : 0) {
  randomBytes(nonce_, sizeof(nonce_));
}

Acceptor::~Acceptor() { wipe(nonce_, sizeof(nonce_)); }

int Acceptor::start(int fd, const Admit& admit) {
  auto deadline = authDeadline(net::Clock::time_point::max());
  uint8_t buf[sizeof(HsHello)];
  try {
    net::recvAll(fd, buf, sizeof(buf), deadline, "a connecting peer");
  } catch (const Error& e) {
    throw AuthRefused(strprintf("no complete handshake: %s", e.what()));
  }
  if (const char* err = parseHsHello(buf, sizeof(buf), &hello_)) throw AuthRefused(err);
  if (hello_.channel != static_cast<uint16_t>(channel_))
    throw AuthRefused("handshake for another kind of connection");
  if (hello_.toRank != myRank_)
    throw AuthRefused(strprintf("it meant to reach rank %d, this is rank %d", hello_.toRank, myRank_));
  if (followFlag_) flags_ = hello_.flags;
  if (hello_.flags != flags_)
    throw AuthRefused(strprintf("GDR_ENCRYPT=%d there but %d here", (hello_.flags & kHsEncrypt) ? 1 : 0,
                                (flags_ & kHsEncrypt) ? 1 : 0));
  if (const char* why = admit(hello_.fromRank))
    throw AuthRefused(strprintf("it claims rank %d: %s", hello_.fromRank, why));
  HsReply r{};
  r.magic = kHsMagic;
  r.version = kProtocolVersion;
  r.type = kHsReply;
  r.rank = myRank_;
  r.flags = flags_;
  std::memcpy(r.nonce, nonce_, kHsNonceBytes);
  transcriptMac(secret_, true, hello_, nonce_, r.mac);
  try {
    net::sendAll(fd, &r, sizeof(r), deadline, "a connecting peer");
  } catch (const Error& e) {
    throw AuthRefused(strprintf("handshake reply not delivered: %s", e.what()));
  }
  return hello_.fromRank;
}

SessionKeys Acceptor::finish(int fd) {
  auto deadline = authDeadline(net::Clock::time_point::max());
  uint8_t buf[sizeof(HsFinish)];
  try {
    net::recvAll(fd, buf, sizeof(buf), deadline, "a connecting peer");
  } catch (const Error& e) {
    throw AuthRefused(strprintf("claimed rank %d but did not finish the handshake: %s", hello_.fromRank, e.what()));
  }
  HsFinish f;
  if (const char* err = parseHsFinish(buf, sizeof(buf), &f)) throw AuthRefused(err);
  uint8_t want[kMacBytes];
  transcriptMac(secret_, false, hello_, nonce_, want);
  if (!equalConstTime(want, f.mac, kMacBytes))
    throw AuthRefused(strprintf("claimed rank %d but failed authentication (wrong job key or a replay)",
                                hello_.fromRank));
  uint8_t keys[64];
  sessionKeys(secret_, hello_, nonce_, keys);
  SessionKeys out;
  std::memcpy(out.recv, keys, kKeyBytes);
  std::memcpy(out.send, keys + kKeyBytes, kKeyBytes);
  wipe(keys, sizeof(keys));
  return out;
}

}  // namespace gdr::security

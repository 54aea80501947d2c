// Mutual authentication of a TCP connection between two members of one job:
// an HMAC-SHA-256 challenge-response over fresh nonces from both sides that
// binds the job id, the channel, both ranks and the encryption flag (see
// handshake_wire.h for the messages). Nothing past the handshake is read
// from a connection until the acceptor has verified the initiator's MAC.
//
// Each side runs in two steps so a ring of ranks that are initiator toward
// one neighbour and acceptor toward the other never waits in a cycle: every
// rank sends M1 (Initiator::start), answers its M1 (Acceptor::start), then
// completes as initiator (Initiator::finish), then as acceptor
// (Acceptor::finish). Callers that are only one or the other run both steps
// back to back.
#pragma once

#include <functional>
#include <string>

#include "core/error.h"
#include "core/net.h"
#include "security/handshake_wire.h"
#include "security/job_secret.h"

namespace gdr::security {

// Per-connection, per-direction keys (HKDF of the job secret over both
// nonces): what the AEAD framing uses when GDR_ENCRYPT=1.
struct SessionKeys {
  uint8_t send[kKeyBytes];
  uint8_t recv[kKeyBytes];
};

// An acceptor's refusal of a connection. The caller logs it once, with the
// remote address, closes the connection and carries on.
struct AuthRefused : RemoteError {
  explicit AuthRefused(const std::string& w) : RemoteError(w) {}
};

class Initiator {
 public:
  Initiator(const JobSecret& secret, Channel channel, int myRank, int peerRank, bool encrypt);
  ~Initiator();
  void start(int fd, net::Clock::time_point deadline, const std::string& who);
  // Verifies the acceptor's proof and sends ours. Throws RemoteError (or
  // InvalidUsage when only GDR_ENCRYPT differs) when the peer is not of this job.
  SessionKeys finish(int fd, net::Clock::time_point deadline, const std::string& who);

 private:
  const JobSecret& secret_;
  HsHello hello_{};
};

class Acceptor {
 public:
  // Returns nullptr if `rank` may connect now, else why not.
  using Admit = std::function<const char*(int rank)>;
  Acceptor(const JobSecret& secret, Channel channel, int myRank, bool encrypt);
  ~Acceptor();
  // Take the initiator's encryption flag instead of requiring ours (the
  // rendezvous service, which has no GDR_ENCRYPT of its own); the flag is
  // bound into the MACs, so nobody on the path can change it.
  void followPeerEncryptFlag() { followFlag_ = true; }
  // After start: whether the connection is to be encrypted.
  bool encrypted() const { return (hello_.flags & kHsEncrypt) != 0; }
  // Reads M1 (nothing more), checks it and sends M2. Returns the rank the
  // peer claims (proved only by finish). Throws AuthRefused.
  int start(int fd, const Admit& admit);
  // Reads M3 and verifies it. Throws AuthRefused.
  SessionKeys finish(int fd);

 private:
  const JobSecret& secret_;
  Channel channel_;
  int myRank_;
  uint16_t flags_;
  bool followFlag_ = false;
  HsHello hello_{};
  uint8_t nonce_[kHsNonceBytes];
};

// GDR_AUTH_TIMEOUT_MS from now, but no later than `cap`.
net::Clock::time_point authDeadline(net::Clock::time_point cap);

// Test hooks: the MACs a transcript yields, so tests can forge or replay.
void transcriptMac(const JobSecret& secret, bool fromAcceptor, const HsHello& m1,
                   const uint8_t nonceB[kHsNonceBytes], uint8_t out[kMacBytes]);

}  // namespace gdr::security

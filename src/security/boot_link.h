// Integrity (and, under GDR_ENCRYPT=1, secrecy) for the TCP bootstrap's
// messages after the handshake: the addresses, QP numbers and rkeys that
// cross the rendezvous and the ring. Each message travels in an envelope
// (security/bootstrap_wire.h) sealed with a key per connection and direction
// (HKDF of the handshake's session keys) and numbered per direction, so an
// altered, forged, replayed, reordered or reflected message is refused with
// an error naming the peer before a byte of it is used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/net.h"
#include "security/handshake.h"

namespace gdr::security {

class BootLink {
 public:
  BootLink() = default;
  BootLink(const SessionKeys& keys, bool encrypt, std::string peer);
  ~BootLink();
  BootLink(BootLink&& o) noexcept;
  BootLink& operator=(BootLink&& o) noexcept;
  BootLink(const BootLink&) = delete;
  BootLink& operator=(const BootLink&) = delete;

  bool encrypted() const { return encrypt_; }
  size_t wireBytes(size_t len) const;
  // Seals the next outgoing message into `wire` (wireBytes(len) bytes).
  void seal(const void* payload, size_t len, uint8_t* wire);
  // Checks the next incoming message (wireBytes(len) bytes) and writes its
  // payload; throws RemoteError naming the peer if it is not the authentic
  // next message. Nothing is written to `payload` then.
  void open(const uint8_t* wire, size_t wireLen, void* payload, size_t len);
  // The above over a blocking socket.
  void send(int fd, const void* payload, size_t len, net::Clock::time_point deadline);
  // `waitingFor` names the peer in a timeout, when it should say more.
  void recv(int fd, void* payload, size_t len, net::Clock::time_point deadline, const char* waitingFor = nullptr);

 private:
  uint8_t sendKey_[kKeyBytes] = {};
  uint8_t recvKey_[kKeyBytes] = {};
  bool encrypt_ = false;
  uint64_t sendSeq_ = 0, recvSeq_ = 0;
  std::string peer_;
};

}  // namespace gdr::security

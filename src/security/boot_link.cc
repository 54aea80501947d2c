#include "security/boot_link.h"

#include <cstring>
#include <utility>

#include "core/error.h"
#include "security/aead.h"
#include "security/bootstrap_wire.h"

namespace gdr::security {

namespace {

constexpr char kInfoMac[] = "gdrcoll v1 bootstrap mac";
constexpr char kInfoAead[] = "gdrcoll v1 bootstrap aead";

void deriveKey(const uint8_t session[kKeyBytes], bool encrypt, uint8_t out[kKeyBytes]) {
  const char* info = encrypt ? kInfoAead : kInfoMac;
  size_t infoLen = encrypt ? sizeof(kInfoAead) : sizeof(kInfoMac);
  static const uint8_t kSalt[] = {'g', 'd', 'r', 'b', 'o', 'o', 't', '1'};
  hkdfSha256(session, kKeyBytes, kSalt, sizeof(kSalt), info, infoLen, out, kKeyBytes);
}

}  // namespace

BootLink::BootLink(const SessionKeys& keys, bool encrypt, std::string peer)
    : encrypt_(encrypt), peer_(std::move(peer)) {
  deriveKey(keys.send, encrypt, sendKey_);
  deriveKey(keys.recv, encrypt, recvKey_);
}

BootLink::~BootLink() {
  wipe(sendKey_, sizeof(sendKey_));
  wipe(recvKey_, sizeof(recvKey_));
}

BootLink::BootLink(BootLink&& o) noexcept { *this = std::move(o); }

BootLink& BootLink::operator=(BootLink&& o) noexcept {
  std::memcpy(sendKey_, o.sendKey_, kKeyBytes);
  std::memcpy(recvKey_, o.recvKey_, kKeyBytes);
  encrypt_ = o.encrypt_;
  sendSeq_ = o.sendSeq_;
  recvSeq_ = o.recvSeq_;
  peer_ = std::move(o.peer_);
  wipe(o.sendKey_, kKeyBytes);
  wipe(o.recvKey_, kKeyBytes);
  return *this;
}

size_t BootLink::wireBytes(size_t len) const { return bootWireBytes(len, encrypt_); }

void BootLink::seal(const void* payload, size_t len, uint8_t* wire) {
  if (len > kMaxBootMsgBytes) throw InternalError("bootstrap message too large");
  BootMsgHdr h{kBootMsgMagic, kProtocolVersion, static_cast<uint16_t>(encrypt_ ? kBootEncrypted : 0),
               takeCounter(sendSeq_), static_cast<uint32_t>(len), 0};
  std::memcpy(wire, &h, sizeof(h));
  uint8_t* body = wire + sizeof(h);
  if (encrypt_) {
    Piece p{payload, len};
    gcmSeal(sendKey_, h.seq, wire, sizeof(h), &p, 1, body, body + len);
  } else {
    if (len) std::memcpy(body, payload, len);
    hmacSha256(sendKey_, wire, sizeof(h) + len, body + len);
  }
}

void BootLink::open(const uint8_t* wire, size_t wireLen, void* payload, size_t len) {
  auto refuse = [&](const char* what) {
    return RemoteError(strprintf("bootstrap message from %s refused: %s", peer_.c_str(), what));
  };
  BootMsgHdr h;
  if (wireLen != wireBytes(len)) throw refuse("wrong size");
  if (const char* err = parseBootMsgHdr(wire, sizeof(h), encrypt_, len, &h)) throw refuse(err);
  const uint8_t* body = wire + sizeof(h);
  if (encrypt_) {
    std::vector<uint8_t> plain(body, body + len);
    if (!gcmOpen(recvKey_, h.seq, wire, sizeof(h), plain.data(), len, body + len))
      throw refuse("authentication failed (altered in transit, or not from this job)");
    if (h.seq != recvSeq_) throw refuse("replayed or out of order (unexpected sequence number)");
    if (len) std::memcpy(payload, plain.data(), len);
  } else {
    uint8_t mac[kBootMacBytes];
    hmacSha256(recvKey_, wire, sizeof(h) + len, mac);
    if (!equalConstTime(mac, body + len, kBootMacBytes))
      throw refuse("authentication failed (altered in transit, or not from this job)");
    if (h.seq != recvSeq_) throw refuse("replayed or out of order (unexpected sequence number)");
    if (len) std::memcpy(payload, body, len);
  }
  ++recvSeq_;
}

void BootLink::send(int fd, const void* payload, size_t len, net::Clock::time_point deadline) {
  std::vector<uint8_t> wire(wireBytes(len));
  seal(payload, len, wire.data());
  net::sendAll(fd, wire.data(), wire.size(), deadline, peer_);
}

void BootLink::recv(int fd, void* payload, size_t len, net::Clock::time_point deadline, const char* waitingFor) {
  std::vector<uint8_t> wire(wireBytes(len));
  net::recvAll(fd, wire.data(), wire.size(), deadline, waitingFor ? std::string(waitingFor) : peer_);
  open(wire.data(), wire.size(), payload, len);
}

}  // namespace gdr::security

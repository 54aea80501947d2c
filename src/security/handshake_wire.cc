#include "security/handshake_wire.h"

#include <cstring>

namespace gdr::security {

namespace {

struct Prefix {
  uint32_t magic;
  uint16_t version;
  uint16_t type;
};

template <typename T>
const char* parseFixed(const void* buf, size_t len, uint16_t type, T* out) {
  if (!buf || len < sizeof(Prefix)) return "truncated handshake message";
  Prefix p;
  std::memcpy(&p, buf, sizeof(p));
  if (p.magic != kHsMagic) return "not a gdrcoll handshake (bad magic)";
  if (p.version != kProtocolVersion) return "unsupported gdrcoll protocol version";
  if (p.type != type) return "unexpected handshake message type";
  if (len != sizeof(T)) return len < sizeof(T) ? "truncated handshake message" : "oversized handshake message";
  std::memcpy(out, buf, sizeof(T));
  return nullptr;
}

}  // namespace

const char* parseHsHello(const void* buf, size_t len, HsHello* out) {
  if (const char* e = parseFixed(buf, len, kHsHello, out)) return e;
  if (out->channel < static_cast<uint16_t>(Channel::Rendezvous) ||
      out->channel > static_cast<uint16_t>(Channel::Recovery))
    return "unknown handshake channel";
  if (out->flags & ~kHsEncrypt) return "unknown handshake flags";
  if (out->fromRank < 0 || out->toRank < kServiceRank || out->reserved != 0) return "bad ranks in handshake";
  return nullptr;
}

const char* parseHsReply(const void* buf, size_t len, HsReply* out) {
  if (const char* e = parseFixed(buf, len, kHsReply, out)) return e;
  if (out->flags & ~kHsEncrypt) return "unknown handshake flags";
  if (out->rank < kServiceRank || out->reserved != 0) return "bad rank in handshake reply";
  return nullptr;
}

const char* parseHsFinish(const void* buf, size_t len, HsFinish* out) {
  return parseFixed(buf, len, kHsFinish, out);
}

}  // namespace gdr::security

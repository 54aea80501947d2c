#include "security/bootstrap_wire.h"

#include <sys/socket.h>

#include <cstring>

#include "gdrcoll.h"
#include "security/handshake_wire.h"

namespace gdr::security {

const char* checkPackedAddr(const net::PackedAddr& a) {
  if (a.family != AF_INET && a.family != AF_INET6) return "address of an unknown family";
  if (a.port == 0) return "address without a port";
  return nullptr;
}

const char* parseRvHello(const void* buf, size_t len, RvHello* out) {
  if (!buf || len < sizeof(RvHello)) return "truncated rendezvous hello";
  if (len > sizeof(RvHello)) return "oversized rendezvous hello";
  std::memcpy(out, buf, sizeof(RvHello));
  if (out->magic != kRvMagic) return "not a rendezvous hello (bad magic)";
  if (out->version != kProtocolVersion) return "unsupported gdrcoll protocol version";
  if (out->reserved != 0) return "malformed rendezvous hello";
  if (out->nranks < 1 || out->nranks > kMaxRanks) return "rank count out of range";
  if (out->rank < 0 || out->rank >= out->nranks) return "rank out of range";
  return checkPackedAddr(out->addr);
}

const char* parseRvVerdict(const void* buf, size_t len, RvVerdict* out) {
  if (!buf || len != sizeof(RvVerdict)) return "rendezvous verdict of the wrong size";
  std::memcpy(out, buf, sizeof(RvVerdict));
  if (out->magic != kRvVerdictMagic) return "not a rendezvous verdict (bad magic)";
  if (out->code < 0 || out->code >= gdrNumResults) return "unknown result code in the rendezvous verdict";
  if (!std::memchr(out->reason, '\0', sizeof(out->reason))) return "unterminated reason in the rendezvous verdict";
  return nullptr;
}

const char* checkAddrTable(const void* buf, size_t len, int nranks) {
  if (!buf || nranks < 1 || nranks > kMaxRanks) return "bad rank count";
  if (len != static_cast<size_t>(nranks) * sizeof(net::PackedAddr)) return "address table of the wrong size";
  for (int r = 0; r < nranks; ++r) {
    net::PackedAddr a;
    std::memcpy(&a, static_cast<const char*>(buf) + static_cast<size_t>(r) * sizeof(a), sizeof(a));
    if (const char* e = checkPackedAddr(a)) return e;
  }
  return nullptr;
}

size_t bootWireBytes(size_t len, bool encrypted) {
  return sizeof(BootMsgHdr) + len + (encrypted ? kBootGcmTagBytes : kBootMacBytes);
}

const char* parseBootMsgHdr(const void* buf, size_t len, bool encrypted, size_t expectLen, BootMsgHdr* out) {
  if (!buf || len < sizeof(BootMsgHdr)) return "truncated bootstrap message";
  if (len > sizeof(BootMsgHdr)) return "oversized bootstrap message header";
  std::memcpy(out, buf, sizeof(BootMsgHdr));
  if (out->magic != kBootMsgMagic) return "not a gdrcoll bootstrap message (bad magic)";
  if (out->version != kProtocolVersion) return "unsupported gdrcoll protocol version";
  if (out->flags & ~kBootEncrypted) return "unknown bootstrap message flags";
  if (((out->flags & kBootEncrypted) != 0) != encrypted)
    return encrypted ? "a plain bootstrap message where an encrypted one was due"
                     : "an encrypted bootstrap message where a plain one was due";
  if (out->reserved != 0) return "malformed bootstrap message header";
  if (out->len > kMaxBootMsgBytes || out->len != expectLen) return "bootstrap message of an unexpected length";
  return nullptr;
}

}  // namespace gdr::security

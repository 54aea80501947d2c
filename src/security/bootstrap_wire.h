// What the TCP bootstrap sends after a connection is authenticated, and the
// checks every received copy passes before use (pure functions, testable
// without sockets): the rendezvous hello, the address table, and the header
// of the authenticated envelope every bootstrap message travels in
// (security/boot_link.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/net.h"

namespace gdr::security {

constexpr uint32_t kRvMagic = 0x56524447;  // "GDRV" in memory
constexpr int32_t kMaxRanks = 1 << 20;

struct RvHello {
  uint32_t magic;
  uint16_t version;
  uint16_t reserved;
  int32_t rank;
  int32_t nranks;
  net::PackedAddr addr;
};
static_assert(sizeof(RvHello) == 40, "rendezvous hello layout");

// The rendezvous service's answer to a rank's hello, before the address
// table: accepted, or refused with the reason (wrong rank count, a rank
// that already checked in, ranks that never came), so the rank can say why.
constexpr uint32_t kRvVerdictMagic = 0x44564447;  // "GDVD" in memory
struct RvVerdict {
  uint32_t magic;
  int32_t code;  // gdrSuccess: the table follows; else the gdrResult_t of the refusal
  char reason[248];
};
static_assert(sizeof(RvVerdict) == 256, "rendezvous verdict layout");
// nullptr when well formed (a known code, a terminated reason), else what is wrong.
const char* parseRvVerdict(const void* buf, size_t len, RvVerdict* out);

// The envelope: [BootMsgHdr][payload, encrypted when kBootEncrypted][tag].
// The tag is HMAC-SHA-256 over header and payload (32 bytes), or, encrypted,
// the AES-256-GCM tag (16 bytes) with the header as additional data; `seq`
// counts the messages of one direction of one connection from 0.
constexpr uint32_t kBootMsgMagic = 0x4d524447;  // "GDRM" in memory
enum BootMsgFlags : uint16_t { kBootEncrypted = 1 };
struct BootMsgHdr {
  uint32_t magic;
  uint16_t version;
  uint16_t flags;
  uint64_t seq;
  uint32_t len;
  uint32_t reserved;
};
static_assert(sizeof(BootMsgHdr) == 24, "bootstrap envelope layout");
constexpr size_t kBootMacBytes = 32;
constexpr size_t kBootGcmTagBytes = 16;
constexpr size_t kMaxBootMsgBytes = size_t(1) << 30;

// Bytes on the wire for a payload of `len` bytes.
size_t bootWireBytes(size_t len, bool encrypted);
// Checks a received header against what this side expects: the mode and the
// exact payload length (every bootstrap message has a length both sides know).
const char* parseBootMsgHdr(const void* buf, size_t len, bool encrypted, size_t expectLen, BootMsgHdr* out);

// nullptr when well formed, else what is wrong.
const char* parseRvHello(const void* buf, size_t len, RvHello* out);
// An address that net::unpack accepts (IPv4 or IPv6, a port).
const char* checkPackedAddr(const net::PackedAddr& a);
// `len` bytes holding exactly `nranks` valid addresses.
const char* checkAddrTable(const void* buf, size_t len, int nranks);

}  // namespace gdr::security

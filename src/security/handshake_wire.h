// The three messages of the connection handshake, and their parsers. Parsers
// are pure functions over bytes (no sockets) so they can be fed anything in
// tests: they return nullptr when the bytes are a well-formed message of this
// protocol version, else a short text saying what is wrong.
//
//   M1 initiator -> acceptor: version, channel, flags, claimed rank, the rank
//      it means to reach, nonce A.
//   M2 acceptor -> initiator: its rank, nonce B, HMAC(K, "acceptor" transcript).
//   M3 initiator -> acceptor: HMAC(K, "initiator" transcript).
//
// The transcript is (job id, channel, flags, initiator rank, acceptor rank,
// nonce A, nonce B); K is derived from the job secret. Fields are in host
// byte order: every rank of a job runs the same build on the same architecture.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gdr::security {

constexpr uint32_t kHsMagic = 0x48524447;  // "GDRH" in memory
constexpr uint16_t kProtocolVersion = 1;
constexpr size_t kHsNonceBytes = 32;

enum class Channel : uint16_t {
  Rendezvous = 1,  // a rank checking in with the TCP bootstrap's rendezvous service
  BootRing = 2,    // the TCP bootstrap's ring
  Socket = 3,      // the socket transport (and the verbs side channel built on it)
  Recovery = 4,    // survivors agreeing on a shrunk communicator (comm/shrink.h)
};
constexpr int kServiceRank = -1;  // the rendezvous service has no rank

enum HsFlags : uint16_t { kHsEncrypt = 1 };

enum HsType : uint16_t { kHsHello = 1, kHsReply = 2, kHsFinish = 3 };

struct HsHello {
  uint32_t magic;
  uint16_t version;
  uint16_t type;
  uint16_t channel;
  uint16_t flags;
  int32_t fromRank;
  int32_t toRank;
  uint32_t reserved;
  uint8_t nonce[kHsNonceBytes];
};
static_assert(sizeof(HsHello) == 56, "M1 layout");

struct HsReply {
  uint32_t magic;
  uint16_t version;
  uint16_t type;
  int32_t rank;
  uint16_t flags;
  uint16_t reserved;
  uint8_t nonce[kHsNonceBytes];
  uint8_t mac[32];
};
static_assert(sizeof(HsReply) == 80, "M2 layout");

struct HsFinish {
  uint32_t magic;
  uint16_t version;
  uint16_t type;
  uint8_t mac[32];
};
static_assert(sizeof(HsFinish) == 40, "M3 layout");

// Checks the common prefix (magic, version, type) and the exact length.
const char* parseHsHello(const void* buf, size_t len, HsHello* out);
const char* parseHsReply(const void* buf, size_t len, HsReply* out);
const char* parseHsFinish(const void* buf, size_t len, HsFinish* out);

}  // namespace gdr::security

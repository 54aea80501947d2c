// What a verbs endpoint's work-request ids say (the kind in the low three
// bits, a sequence or operation id above), and how it spreads writes over
// its QPs. Shared by ib_endpoint.cc and ib_zcopy.cc; nothing of it crosses
// the wire.
#pragma once

#include <cstdint>

namespace gdr::transport::ib {

enum WrKind : uint64_t { kWrData = 0, kWrCredit = 1, kWrRecv = 2, kWrZData = 3, kWrCts = 4 };
inline uint64_t wrId(WrKind k, uint64_t v) { return (v << 3) | k; }
inline WrKind wrKind(uint64_t id) { return static_cast<WrKind>(id & 7); }
inline uint64_t wrValue(uint64_t id) { return id >> 3; }

// splitmix64's finaliser: where a peer's chunks start going round its QPs,
// and where a failed QP's chunks go (qp_lanes.h).
inline uint64_t spreadHash(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace gdr::transport::ib

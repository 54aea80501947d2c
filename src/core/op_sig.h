// The signature every message carries: which operation it belongs to, so a
// receiver whose posted signature differs reports mismatched collectives
// instead of mixing data of two operations. Only the layers above the
// transports read the kind; transports compare and print signatures.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gdr {

// What operation a message belongs to. Ranks must agree on it.
struct OpSig {
  uint8_t kind = 0;   // CollKind (core/call.h), or kP2PKind for send/recv
  uint8_t dtype = 0;  // gdrDataType_t
  uint8_t op = 0;     // gdrRedOp_t (0 when not a reduction)
  uint8_t flags = 0;
  int32_t root = 0;
  uint64_t count = 0;  // 0 where counts legitimately differ (alltoallv)
  uint64_t seq = 0;    // collective sequence number on the communicator
};
constexpr uint8_t kP2PKind = 0xF0;
// OpSig::flags bits.
// The payload is already AES-GCM sealed end to end (device buffers sealed on
// the GPU under GDR_ENCRYPT=1, paths/staged/seal.h): a transport that
// encrypts still authenticates the message's header but sends the payload as
// it is, instead of encrypting it a second time on the CPU.
constexpr uint8_t kSigPreSealed = 1u << 0;
inline bool operator==(const OpSig& a, const OpSig& b) {
  return a.kind == b.kind && a.dtype == b.dtype && a.op == b.op && a.flags == b.flags &&
         a.root == b.root && a.count == b.count && a.seq == b.seq;
}
inline bool operator!=(const OpSig& a, const OpSig& b) { return !(a == b); }
std::string describe(const OpSig& s);

// From what size a message goes single-copy where a back end can (shm: the
// receiver reads the sender's buffer): send/recv's, and the default of an
// operation that names none. A collective's own is CollTraits::singleCopyFrom.
// A send/recv message waits for its receiver either way, and one copy (shared
// by both ranks from 128 KiB) beats the FIFO's two from 64 KiB: a ping-pong
// at 64 KiB 0.51-0.61x Open MPI through the FIFO, 0.98-0.99x single-copy
// (bench/results/host-2core.md, session 12).
constexpr size_t kSingleCopyFrom = 64 * 1024;

}  // namespace gdr

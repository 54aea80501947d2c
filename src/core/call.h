// What a call asks for, as every layer above the transports sees it: the
// collective kind, one collective call, one send or receive, and a traits
// table per kind (what the kind reduces, whether it has a root, how its
// buffers are laid out). Transports never see these types: they get
// messages, sizes and peers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/op_sig.h"
#include "gdrcoll.h"

namespace gdr {

enum class CollKind : uint8_t {
  AllReduce,
  Broadcast,
  Reduce,
  AllGather,
  ReduceScatter,
  AllToAll,
  AllToAllv,
  Barrier,
};
constexpr int kNumCollKinds = 8;

// How a kind's buffers are laid out (elements of the call's count).
enum class Layout : uint8_t {
  Whole,         // one buffer of `count` elements (all-reduce, broadcast, reduce)
  GatherOut,     // count in, nranks * count out (all-gather)
  ScatterIn,     // nranks * count in, count out (reduce-scatter)
  BlockPerPeer,  // nranks * count in and out (all-to-all)
  Vectors,       // per-peer counts and displacements (all-to-all-v)
  None,          // no data (barrier)
};

struct CollTraits {
  const char* name;    // as GDR_ALGO and the tuning file spell it
  bool reduces;        // applies the call's op (avg divides at the end)
  bool rooted;         // the call's root matters
  bool rankOrderFree;  // the data layout does not depend on rank numbers, so
                       // the schedule may run on the topology's ring order
  Layout layout;
  size_t singleCopyFrom;  // from what size its messages go single-copy (call.cc)
  bool sharedCopy;        // a single-copy message's sender copies part of it (call.cc)
  // The same where every rank of the host has a core of its own, where it
  // differs (call.cc); 0: singleCopyFrom. singleCopyFromOf() picks.
  size_t singleCopyFromOwnCores;
};

// Indexed by CollKind (call.cc).
extern const CollTraits kCollTraits[kNumCollKinds];
extern const CollTraits kUnknownTraits;
inline const CollTraits& traitsOf(CollKind k) {
  const auto i = static_cast<unsigned>(k);
  return i < kNumCollKinds ? kCollTraits[i] : kUnknownTraits;
}
inline const char* collName(CollKind k) { return traitsOf(k).name; }
// From what size a message of `k` goes single-copy, given whether every rank
// of its host has a core of its own. Both ends of a shm message are ranks of
// one host, so they agree.
inline size_t singleCopyFromOf(CollKind k, bool ownCores) {
  const CollTraits& t = traitsOf(k);
  return ownCores && t.singleCopyFromOwnCores ? t.singleCopyFromOwnCores : t.singleCopyFrom;
}

// A PreMulSum (gdrRedOpCreatePreMulSum): the call sums each rank's input
// multiplied by a scalar. A call names it by its op, a value from gdrNumOps
// up (see isPreMulSum); the router resolves it on the communicator
// (comm/pre_mul_ops.h) and scales the input into scratch that lives as long
// as the call (paths/pre_mul.h), so every path carries it and runs a plain
// sum. CollCall holds no more for it: a built-in op costs nothing extra.
struct PreMul {
  // The scalar is in device memory at `pointer`, read stream-ordered when
  // the call runs; otherwise `value` holds its bytes (one element of the
  // call's type).
  bool onDevice = false;
  const void* pointer = nullptr;
  unsigned char value[8] = {};
};

struct CollCall {
  CollKind kind;
  const void* sendbuf = nullptr;  // GDR_IN_PLACE already resolved: see inPlace
  void* recvbuf = nullptr;
  size_t count = 0;
  gdrDataType_t type = gdrUint8;
  gdrRedOp_t op = gdrSum;
  int root = 0;
  bool inPlace = false;
  // An all-gather given sendbuf == recvbuf: this rank's block is the first
  // `count` elements of recvbuf. It moves to its own slot and the call runs
  // in place (inPlace is set too).
  bool blockAtStart = false;
  // The buffers hold rows the GPU sealed (staged path, GDR_ENCRYPT=1):
  // transports send them without encrypting again (transport::kSigPreSealed).
  bool preSealed = false;
  const size_t* sendCounts = nullptr;
  const size_t* sendDispls = nullptr;
  const size_t* recvCounts = nullptr;
  const size_t* recvDispls = nullptr;
};

// What every rank's messages of this call carry, so that ranks running
// different calls find out (op_sig.h): the call's kind, type, op, root and
// count as they matter to it, and the communicator's sequence number.
inline OpSig sigOf(const CollCall& call, uint64_t seq) {
  const CollTraits& traits = traitsOf(call.kind);
  OpSig sig;
  sig.kind = static_cast<uint8_t>(call.kind);
  sig.dtype = static_cast<uint8_t>(call.type);
  sig.op = traits.reduces ? static_cast<uint8_t>(call.op) : 0;
  sig.root = traits.rooted ? call.root : 0;
  const bool counted = traits.layout != Layout::Vectors && traits.layout != Layout::None;
  sig.count = counted ? call.count : 0;
  sig.seq = seq;
  if (call.preSealed) sig.flags |= kSigPreSealed;
  return sig;
}

// Whether a call's op names a PreMulSum (a value from gdrNumOps up; its bits
// are read as an int).
inline bool isPreMulSum(const CollCall& c) {
  static_assert(sizeof(c.op) == sizeof(int), "an op's value is an int");
  int v;
  __builtin_memcpy(&v, &c.op, sizeof(v));
  return v >= gdrNumOps;
}

// One send or receive (host or device buffers).
struct P2PCall {
  bool isSend = false;
  const void* sendBuf = nullptr;
  void* recvBuf = nullptr;
  size_t count = 0;
  gdrDataType_t type = gdrUint8;
  int peer = 0;
  gdrStream_t stream = nullptr;
  bool preSealed = false;  // sealed by the GPU (see CollCall::preSealed)
};

}  // namespace gdr

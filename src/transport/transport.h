// The transport interface: one Endpoint per peer, carrying ordered messages.
//
// Roles (after gloo's pair / UCX's iface): a back end builds Endpoints at
// communicator set-up from connection info exchanged by the bootstrap; the
// communicator posts sends and receives on them and calls progress() until
// the operations it waits on are complete. Nothing here blocks: waiting, with
// its deadline, belongs to the caller (comm/progress_wait.h).
//
// Every message carries the operation's signature (OpSig, core/op_sig.h); a
// receiver whose posted signature differs reports mismatched collectives
// instead of mixing data of two operations. An endpoint never knows which
// collective a message serves: what depends on it (the single-copy
// threshold) comes with the operation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/op_sig.h"
#include "gdrcoll.h"

namespace gdr::transport {

using gdr::describe;
using gdr::kP2PKind;
using gdr::kSigPreSealed;
using gdr::kSingleCopyFrom;
using gdr::OpSig;

// dst[i] = op(a[i], incoming[i]) over `n` elements; dst may alias a.
using ReduceFn = void (*)(void* dst, const void* a, const void* incoming, size_t n);

struct SendOp {
  const void* data = nullptr;
  size_t bytes = 0;
  OpSig sig;
  size_t singleCopyFrom = kSingleCopyFrom;  // the same on both ends of a message
  bool complete = false;  // set by the transport; data may be reused after
  // transport-private progress state
  size_t sent = 0;
  uint64_t lastSlot = 0;
  uint8_t lane = 0;
};

struct RecvOp {
  void* dst = nullptr;
  size_t bytes = 0;
  OpSig sig;
  // For a receive-reduce: dst = fn(reduceSrc, incoming). reduceSrc may equal dst.
  const void* reduceSrc = nullptr;
  ReduceFn fn = nullptr;
  size_t elemBytes = 1;
  size_t singleCopyFrom = kSingleCopyFrom;  // the same on both ends of a message
  // A single-copy receive may take the sender's help (shm, cma_copy.h): its
  // collective's CollTraits::sharedCopy; point-to-point receives say yes, and
  // a sender that has receives of its own from this peer declines.
  bool shareCopy = true;
  bool complete = false;
  // transport-private progress state
  size_t received = 0;
  uint8_t lane = 0;
};

// Capabilities a caller may ask about instead of catching "not implemented".
enum Capability : uint32_t {
  kCapSingleCopy = 1u << 0,  // large messages move with one copy (CMA, RDMA)
  kCapDeviceMemory = 1u << 1,
};

class Endpoint {
 public:
  virtual ~Endpoint() = default;
  virtual const char* name() const = 0;
  virtual int peer() const = 0;
  virtual uint32_t capabilities() const = 0;
  // Queue operations; they complete in posting order per direction. The op
  // object must outlive its completion.
  virtual void postSend(SendOp* op) = 0;
  virtual void postRecv(RecvOp* op) = 0;
  // Moves bytes; returns true if anything moved. Throws gdr::Error when the
  // peer failed, vanished, reported an abort, or sent a mismatched message.
  virtual bool progress() = 0;
  // Liveness check for slow waits (cheap enough to call every few ms); throws
  // RemoteError if the peer is known dead or aborted.
  virtual void checkPeer() = 0;
  // Best effort: tell the peer this rank failed, with the error's code and
  // text. Never throws.
  virtual void sendAbort(gdrResult_t code, const std::string& reason) noexcept = 0;
  // Drops queued operations after a failure (the ops are not completed).
  virtual void reset() noexcept = 0;
  // A file descriptor a waiter may poll() on while idle (-1: none), and
  // whether the endpoint has sends waiting for buffer space.
  virtual int pollFd() const { return -1; }
  virtual bool wantsWrite() const { return false; }
  // The immediate path of a back end that has one (shm: a message in one
  // slot, small lane or main lane, not single-copy): the
  // message is published, or the peer's next message consumed, within the
  // call, when nothing is queued before it and (for a receive) it has
  // arrived and matches. True: done, as if posted and completed. False:
  // nothing happened; post the op as usual (which reports a mismatch).
  virtual bool sendNow(SendOp&) { return false; }
  virtual bool recvNow(RecvOp&) { return false; }
  // Notices: a few bytes one end tells the other beside the data, in order,
  // best effort (what an endpoint of one transport says through another's:
  // the verbs endpoint's "QP down" over its side connection). sendNotice
  // does not wait on queued data sends; false when the notice did not go
  // (none is carried by default). A notice received is kept until taken, in
  // arrival order; received ones are read by progress() and checkPeer().
  // The verbs endpoint's largest is an answer about up to 4096 zero-copy
  // chunks, 17 bytes each (transport/ib/zcopy_notice.h).
  static constexpr size_t kMaxNotice = 17 * 4096 + 64;
  virtual bool sendNotice(const void* /*data*/, size_t /*bytes*/) noexcept { return false; }
  virtual bool takeNotice(std::string* /*out*/) { return false; }
};

}  // namespace gdr::transport

// Shared-memory endpoint between two ranks of one host. Messages of at most
// kSmallBytes go whole through the receiver's small lane (many compact
// slots, so a sender of tiny messages runs far ahead of its receiver);
// medium ones through the main lane in slot-sized pieces (the receiver
// copies or reduces straight out of the slot); large ones, where the kernel
// allows cross-memory attach, go with one copy: the sender publishes its
// buffer's address and the receiver reads it with process_vm_readv.
#pragma once

#include <sys/types.h>

#include <deque>
#include <vector>

#include "transport/shm/cma_copy.h"
#include "transport/shm/shm_layout.h"
#include "transport/transport.h"

namespace gdr::transport::shm {

struct ShmEndpointConfig {
  int myRank = 0;
  int peerRank = 0;
  pid_t peerPid = 0;
  SegView mine;           // my segment: the peer's messages arrive in mine.inbox(inFromPeer)
  uint32_t inFromPeer = 0;
  SegView theirs;         // the peer's segment: I write into theirs.inbox(outToPeer)
  uint32_t outToPeer = 0;
  bool cma = false;       // single-copy reads of the peer's memory work
  // Messages at least this large are read by the receiver with one
  // process_vm_readv (GDR_SHM_CMA_THRESHOLD); negative: what each operation
  // asks for (SendOp/RecvOp::singleCopyFrom).
  int64_t cmaThreshold = -1;
  // Plain single-copy receives are copied by both ranks (cma_copy.h;
  // GDR_SHM_CMA_SHARE). The receiver decides: the sender only helps once it
  // has published its destination.
  bool shareCopy = true;
  // After a small-lane message, the sender asks for the next slot's lines
  // in exclusive state (PREFETCHW; GDR_SHM_PREFETCHW), unless messages
  // also come back from the peer.
  bool prefetchNext = true;
};

// The size from which a message goes single-copy: `forced` when it is >= 0
// (GDR_SHM_CMA_THRESHOLD), else what its operation asks for (`wanted`).
inline size_t singleCopyFrom(size_t wanted, int64_t forced) {
  return forced >= 0 ? static_cast<size_t>(forced) : wanted;
}

// The lane a message of `bytes` takes: the small one when it fits and does
// not go single-copy. Both ends decide alike from what they both know (the
// size, the operation's threshold, GDR_SHM_CMA_THRESHOLD), never from what
// one end's kernel allows.
inline LaneId laneFor(size_t bytes, size_t wanted, int64_t forcedCma) {
  return bytes <= kSmallBytes && bytes < singleCopyFrom(wanted, forcedCma) ? kSmallLane : kMainLane;
}

class ShmEndpoint final : public Endpoint {
 public:
  explicit ShmEndpoint(const ShmEndpointConfig& cfg);
  const char* name() const override { return "shm"; }
  int peer() const override { return cfg_.peerRank; }
  uint32_t capabilities() const override { return cfg_.cma ? uint32_t{kCapSingleCopy} : 0u; }
  // A small message with nothing queued before it is published at once: the
  // sender's wait then ends at its first check, without a pass over the
  // endpoints. (Receives stay in progress(), inside the wait that names the
  // step when a message does not match.)
  void postSend(SendOp* op) override {
    op->lane = laneFor(op->bytes, op->singleCopyFrom, cfg_.cmaThreshold);
    sends_.push_back(op);
    if (op->lane == kSmallLane && sends_.size() == 1) progressSends();
  }
  void postRecv(RecvOp* op) override {
    op->lane = laneFor(op->bytes, op->singleCopyFrom, cfg_.cmaThreshold);
    recvs_.push_back(op);
  }
  bool sendNow(SendOp& op) override;
  bool recvNow(RecvOp& op) override;
  bool progress() override;
  void checkPeer() override;
  void sendAbort(gdrResult_t code, const std::string& reason) noexcept override;
  void reset() noexcept override;

 private:
  // The slot at the head of lane `id` to the peer; null while the peer has
  // not consumed enough of the lane.
  SlotHdr* freeSlot(LaneId id);
  // The payload into the slot: inline in its header line where it fits.
  static void fillPayload(SlotHdr* slot, const void* src, size_t len);
  // Makes the head slot visible to the peer and moves the head on.
  void publishSlot(LaneId id, SlotHdr* slot);
  bool oneSlot(LaneId id, size_t bytes, size_t wanted, size_t slotBytes) const;
  bool progressSends();
  bool progressRecvs();
  void checkMatches(const RecvOp* op, const SlotHdr* slot) const;
  void checkOtherLane(const RecvOp* op, LaneId waitingOn) const;
  void consume(RecvOp* op, const SlotHdr* slot);
  void readRemote(RecvOp* op, uint64_t addr);
  bool canShare(const RecvOp* op) const;
  bool shareCopy(RecvOp* op, SlotHdr* slot, uint64_t addr);
  bool helpCopy(const SendOp& op);
  static CopyShare* shareOf(SlotHdr* slot) {
    return reinterpret_cast<CopyShare*>(reinterpret_cast<char*>(slot) + sizeof(SlotHdr));
  }
  void retire(LaneId id, const SlotHdr* slot, bool single);
  // Each store of a lane's tail takes its cache line away from a sender that
  // polls it for room, and the sender's next read brings it back: once per
  // message when the tail goes back with every slot. In batches of 32 of the
  // small lane's 256 slots it costs that once per batch. What a receiver holds
  // back it has consumed already, and it hands it back as soon as it waits for
  // this sender's next message or waits on anything else inside a call, so a
  // sender waiting for room never waits on a receiver that waits too; between
  // calls at most a batch of room is held back, as if the lane were that much
  // shorter.
  static uint64_t tailBatch(const Lane& lane) { return lane.nSlots >= 128 ? 32 : 1; }
  void publishTails();

  ShmEndpointConfig cfg_;
  std::deque<SendOp*> sends_;     // not yet fully published
  std::deque<SendOp*> inflight_;  // published, waiting for the receiver (CMA)
  std::deque<RecvOp*> recvs_;
  // Per lane (LaneId): where I write to the peer and where it writes to me.
  Lane out_[2], in_[2];
  size_t outSlotBytes_ = 0;                 // the peer's main-lane slot payload
  uint64_t head_[2] = {};                   // slots I published to the peer
  uint64_t cachedTail_[2] = {};             // the peer's consumption, as last read
  uint64_t rtail_[2] = {};                  // slots I consumed from the peer
  uint64_t publishedTail_[2] = {};          // rtail_ as the peer can see it
  bool tailsHeld_ = false;                  // publishedTail_ lags rtail_ on some lane
  bool consumedSincePublish_ = false;       // a message came from the peer since our last one
  uint16_t sendMsgNo_ = 0, recvMsgNo_ = 0;  // messages done each way (SlotHdr::msgNo)
  uint32_t idlePolls_ = 0;                  // empty polls of the current receive
  bool sharing_ = false;                    // the front receive has published its destination
  std::vector<char> bounce_;  // CMA receive-reduce staging
};

// Reads the abort notice in this rank's own segment, throwing if one is set.
void throwIfAborted(const SegView& mine);

}  // namespace gdr::transport::shm

#include "transport/shm/shm_endpoint.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "core/log.h"
#include "transport/peer_liveness.h"
#include "transport/shm/cache_hint.h"
#include "transport/shm/cma_copy.h"
#include "transport/shm/shm_segment.h"

namespace gdr::transport::shm {

ShmEndpoint::ShmEndpoint(const ShmEndpointConfig& cfg) : cfg_(cfg) {
  for (LaneId id : {kMainLane, kSmallLane}) {
    out_[id] = cfg_.theirs.lane(cfg_.outToPeer, id);
    in_[id] = cfg_.mine.lane(cfg_.inFromPeer, id);
  }
  outSlotBytes_ = cfg_.theirs.hdr()->slotBytes;
  prefault(cfg_.theirs.inbox(cfg_.outToPeer), inboxBytes(cfg_.theirs.hdr()->nSlots, outSlotBytes_));
  prefault(cfg_.mine.inbox(cfg_.inFromPeer),
           inboxBytes(cfg_.mine.hdr()->nSlots, cfg_.mine.hdr()->slotBytes));
}

bool ShmEndpoint::progress() {
  bool moved = false;
  if (!sends_.empty() || !inflight_.empty()) moved |= progressSends();
  if (!recvs_.empty()) moved |= progressRecvs();
  else if (tailsHeld_) publishTails();  // this rank waits on something else: hold nothing back
  return moved;
}

SlotHdr* ShmEndpoint::freeSlot(LaneId id) {
  const Lane& lane = out_[id];
  const uint64_t head = head_[id];
  if (head - cachedTail_[id] >= lane.nSlots) {
    cachedTail_[id] = lane.ctl->tail.load(std::memory_order_acquire);
    if (head - cachedTail_[id] >= lane.nSlots) return nullptr;
  }
  return lane.at(head);
}

void ShmEndpoint::fillPayload(SlotHdr* slot, const void* src, size_t len) {
  slot->len = static_cast<uint32_t>(len);
  const bool inl = len <= kInlineBytes;
  slot->flags = inl ? uint16_t{kSlotInline} : uint16_t{0};
  if (len) std::memcpy(inl ? slot->inl : reinterpret_cast<char*>(slot) + sizeof(SlotHdr), src, len);
}

// The lines prefetched below never leave the small slot.
static_assert(sizeof(SlotHdr) + (kSmallBytes + 63) / 64 * 64 <= kSmallStride,
              "prefetch stays in the slot");

void ShmEndpoint::publishSlot(LaneId id, SlotHdr* slot) {
  slot->seq.store(head_[id] + 1, std::memory_order_release);
  demoteLine(slot);  // the receiver reads it next
  ++head_[id];
  // The next message likely has this one's size: ask for the lines it will
  // write now, while the caller returns and makes its next call (the
  // stores then find them owned instead of waiting on the receiver's copy).
  // Small lane only: a main-lane piece's copy outlasts that wait anyway.
  // Not where messages also come back from this peer since the last one
  // (an exchange, as an np 2 all-reduce step): there taking the next slot's
  // lines made each call 1.3-1.5x slower; one-way flows (broadcast, reduce)
  // gain 1.5-3x from it.
  const bool exchange = consumedSincePublish_;
  consumedSincePublish_ = false;
  if (cfg_.prefetchNext && !exchange && id == kSmallLane && head_[id] - cachedTail_[id] < out_[id].nSlots) {
    const char* next = reinterpret_cast<const char*>(out_[id].at(head_[id]));
    const size_t payload = (slot->flags & kSlotInline) ? 0 : slot->len;
    for (size_t i = 0, lines = 1 + (payload + 63) / 64; i < lines; ++i)
      prefetchForWrite(next + 64 * i);
  }
}

bool ShmEndpoint::progressSends() {
  bool moved = false;
  while (!sends_.empty()) {
    SendOp* op = sends_.front();
    const LaneId id = static_cast<LaneId>(op->lane);
    SlotHdr* slot = freeSlot(id);
    if (!slot) break;
    slot->sig = op->sig;
    slot->msgBytes = op->bytes;
    slot->msgNo = sendMsgNo_;
    bool done;
    if (id == kMainLane && cfg_.cma &&
        op->bytes >= singleCopyFrom(op->singleCopyFrom, cfg_.cmaThreshold)) {
      slot->flags = kSlotCma;
      const uint64_t addr = reinterpret_cast<uintptr_t>(op->data);
      std::memcpy(slot->inl, &addr, sizeof(addr));
      slot->len = 0;
      if (outSlotBytes_ >= sizeof(CopyShare)) initShare(shareOf(slot), op->bytes);
      op->sent = op->bytes;
      done = false;  // complete once the receiver has read it
    } else {
      size_t len =
          std::min(id == kSmallLane ? size_t{kSmallBytes} : outSlotBytes_, op->bytes - op->sent);
      fillPayload(slot, static_cast<const char*>(op->data) + op->sent, len);
      op->sent += len;
      done = op->sent == op->bytes;
    }
    op->lastSlot = head_[id];
    publishSlot(id, slot);
    moved = true;
    if (op->sent == op->bytes) {
      sends_.pop_front();
      ++sendMsgNo_;
      if (done) op->complete = true;
      else inflight_.push_back(op);
    }
  }
  if (!inflight_.empty()) {  // single-copy sends: always on the main lane
    uint64_t& tail = cachedTail_[kMainLane];
    tail = out_[kMainLane].ctl->tail.load(std::memory_order_acquire);
    while (!inflight_.empty() && tail > inflight_.front()->lastSlot) {
      inflight_.front()->complete = true;
      inflight_.pop_front();
      moved = true;
    }
    if (!inflight_.empty()) moved |= helpCopy(*inflight_.front());
  }
  return moved;
}

// The oldest single-copy send waits for its receiver: copy pieces of it into
// the receiver's destination once the receiver has published it.
bool ShmEndpoint::helpCopy(const SendOp& op) {
  // Receives of its own from this peer: this rank has copying to do (an
  // exchange), and its stores into the peer's buffer would only slow the
  // peer's reads.
  if (outSlotBytes_ < sizeof(CopyShare) || !recvs_.empty()) return false;
  CopyShare* share = shareOf(out_[kMainLane].at(op.lastSlot));
  const uint64_t dst = share->dst.load(std::memory_order_acquire);
  if (!dst) return false;
  return copyPieces(share, true, cfg_.peerPid, cfg_.peerRank,
                    const_cast<char*>(static_cast<const char*>(op.data)), dst, op.bytes) > 0;
}

void ShmEndpoint::checkMatches(const RecvOp* op, const SlotHdr* slot) const {
  if (slot->sig != op->sig)
    throw InvalidUsage(strprintf("mismatched operations: rank %d sent %s but this rank expects %s",
                                 cfg_.peerRank, describe(slot->sig).c_str(),
                                 describe(op->sig).c_str()));
  if (slot->msgBytes != op->bytes)
    throw InvalidUsage(strprintf(
        "mismatched message size: rank %d sent %llu bytes for %s, this rank expects %zu",
        cfg_.peerRank, (unsigned long long)slot->msgBytes, describe(op->sig).c_str(), op->bytes));
}

// The message this rank waits for may sit at the head of the other lane: the
// sender disagrees on its size (or on GDR_SHM_CMA_THRESHOLD). Either way it
// is a mismatch to report, not a wait until the deadline.
void ShmEndpoint::checkOtherLane(const RecvOp* op, LaneId waitingOn) const {
  const LaneId other = waitingOn == kMainLane ? kSmallLane : kMainLane;
  const SlotHdr* slot = in_[other].at(rtail_[other]);
  if (slot->seq.load(std::memory_order_acquire) != rtail_[other] + 1 || slot->msgNo != recvMsgNo_)
    return;
  checkMatches(op, slot);
  throw InvalidUsage(
      strprintf("mismatched shared-memory lane: rank %d sent %s through the other lane "
                "(is GDR_SHM_CMA_THRESHOLD the same on every rank?)",
                cfg_.peerRank, describe(op->sig).c_str()));
}

bool ShmEndpoint::progressRecvs() {
  bool moved = false;
  while (!recvs_.empty()) {
    RecvOp* op = recvs_.front();
    const LaneId id = static_cast<LaneId>(op->lane);
    const Lane& lane = in_[id];
    uint64_t& tail = rtail_[id];
    const SlotHdr* slot = lane.at(tail);
    if (slot->seq.load(std::memory_order_acquire) != tail + 1) {
      // Nothing to read: hand back what was consumed, so the sender (who may
      // wait for room) never waits on a receiver that waits too.
      if (tailsHeld_) publishTails();
      // While waiting, keep asking for the first payload line: the sender
      // writes it before the header, so it is usually here by the time the
      // sequence word flips and a small message costs one miss, not two.
      __builtin_prefetch(reinterpret_cast<const char*>(slot) + sizeof(SlotHdr));
      // The other lane only now and then: a mismatch is rare, a poll is hot.
      if (op->received == 0 && (++idlePolls_ & 63) == 0) checkOtherLane(op, id);
      break;
    }
    idlePolls_ = 0;
    if (slot->msgNo != recvMsgNo_) {
      // A later message arrived here first: the expected one took the other
      // lane (it is published already, as the sender publishes in order).
      checkOtherLane(op, id);
      throw InvalidUsage(
          strprintf("mismatched messages: rank %d's message %u arrived where this rank expects "
                    "message %u (%s)",
                    cfg_.peerRank, slot->msgNo, recvMsgNo_, describe(op->sig).c_str()));
    }
    checkMatches(op, slot);
    const bool cma = slot->flags & kSlotCma;
    if (cma) {
      uint64_t addr;
      std::memcpy(&addr, slot->inl, sizeof(addr));
      if (canShare(op)) {
        if (!shareCopy(op, const_cast<SlotHdr*>(slot), addr)) break;  // the sender still copies
      } else {
        readRemote(op, addr);
      }
      op->received = op->bytes;
    } else {
      consume(op, slot);
      op->received += slot->len;
    }
    retire(id, slot, cma);
    moved = true;
    if (op->received == op->bytes) {
      op->complete = true;
      recvs_.pop_front();
      ++recvMsgNo_;
    }
  }
  return moved;
}

// The slot at the head of lane `id` is consumed: hand it back. The tail
// goes back in batches (see publishTails); a single-copy send completes only
// when its slot is handed back, so that one goes at once.
void ShmEndpoint::retire(LaneId id, const SlotHdr* slot, bool single) {
  demoteLine(slot);  // the sender writes it next
  const uint64_t tail = ++rtail_[id];
  if (single || tail - publishedTail_[id] >= tailBatch(in_[id])) {
    in_[id].ctl->tail.store(tail, std::memory_order_release);
    publishedTail_[id] = tail;
  } else {
    tailsHeld_ = true;
  }
}

// Whole in one slot and through the FIFO: a message the sender can publish
// and be done with, and the receiver take in one look.
bool ShmEndpoint::oneSlot(LaneId id, size_t bytes, size_t wanted, size_t slotBytes) const {
  return id == kSmallLane ||
         (bytes <= slotBytes && !(cfg_.cma && bytes >= singleCopyFrom(wanted, cfg_.cmaThreshold)));
}

bool ShmEndpoint::sendNow(SendOp& op) {
  const LaneId id = laneFor(op.bytes, op.singleCopyFrom, cfg_.cmaThreshold);
  if (!sends_.empty() || !oneSlot(id, op.bytes, op.singleCopyFrom, outSlotBytes_)) return false;
  SlotHdr* slot = freeSlot(id);
  if (!slot) return false;
  slot->sig = op.sig;
  slot->msgBytes = op.bytes;
  slot->msgNo = sendMsgNo_++;
  fillPayload(slot, op.data, op.bytes);
  publishSlot(id, slot);
  op.sent = op.bytes;
  op.complete = true;
  return true;
}

bool ShmEndpoint::recvNow(RecvOp& op) {
  const LaneId id = laneFor(op.bytes, op.singleCopyFrom, cfg_.cmaThreshold);
  if (!recvs_.empty() || !oneSlot(id, op.bytes, op.singleCopyFrom, cfg_.mine.hdr()->slotBytes))
    return false;
  const SlotHdr* slot = in_[id].at(rtail_[id]);
  if (slot->seq.load(std::memory_order_acquire) != rtail_[id] + 1 || slot->msgNo != recvMsgNo_ ||
      slot->sig != op.sig || slot->msgBytes != op.bytes || slot->len != op.bytes || (slot->flags & kSlotCma))
    return false;
  consume(&op, slot);
  op.received = op.bytes;
  retire(id, slot, false);
  ++recvMsgNo_;
  op.complete = true;
  return true;
}

void ShmEndpoint::publishTails() {
  for (LaneId id : {kMainLane, kSmallLane})
    if (publishedTail_[id] != rtail_[id]) {
      in_[id].ctl->tail.store(rtail_[id], std::memory_order_release);
      publishedTail_[id] = rtail_[id];
    }
  tailsHeld_ = false;
}

void ShmEndpoint::consume(RecvOp* op, const SlotHdr* slot) {
  consumedSincePublish_ = true;
  const char* payload =
      (slot->flags & kSlotInline) ? slot->inl : reinterpret_cast<const char*>(slot) + sizeof(SlotHdr);
  char* dst = static_cast<char*>(op->dst) + op->received;
  if (op->fn) {
    const char* a = static_cast<const char*>(op->reduceSrc) + op->received;
    // Element sizes are powers of two: a shift, not a division, per message.
    op->fn(dst, a, payload, slot->len >> __builtin_ctz(static_cast<unsigned>(op->elemBytes)));
  } else if (slot->len) {
    std::memcpy(dst, payload, slot->len);
  }
}

bool ShmEndpoint::canShare(const RecvOp* op) const {
  return cfg_.shareCopy && op->shareCopy && !op->fn && cfg_.mine.hdr()->slotBytes >= sizeof(CopyShare);
}

// A plain single-copy receive, shared with the sender (cma_copy.h): publish
// the destination, copy pieces until none is left, then wait (returning
// false) until the sender's pieces are done too.
bool ShmEndpoint::shareCopy(RecvOp* op, SlotHdr* slot, uint64_t addr) {
  CopyShare* share = shareOf(slot);
  if (!sharing_) {
    share->dst.store(reinterpret_cast<uintptr_t>(op->dst), std::memory_order_release);
    sharing_ = true;
  }
  copyPieces(share, false, cfg_.peerPid, cfg_.peerRank, static_cast<char*>(op->dst), addr, op->bytes);
  if (share->done.load(std::memory_order_acquire) != share->pieces) return false;
  sharing_ = false;
  return true;
}

void ShmEndpoint::readRemote(RecvOp* op, uint64_t addr) {
  // Plain receives land directly in place; reductions go through a bounded
  // staging buffer so a large message never needs one of its own size.
  const size_t piece = op->fn ? 256 * 1024 : op->bytes;
  if (op->fn && bounce_.size() < piece) bounce_.resize(piece);
  for (size_t off = 0; off < op->bytes;) {
    const size_t len = std::min(piece, op->bytes - off);
    char* dst = op->fn ? bounce_.data() : static_cast<char*>(op->dst) + off;
    cmaCopy(false, cfg_.peerPid, cfg_.peerRank, dst, addr + off, len);
    if (op->fn)
      op->fn(static_cast<char*>(op->dst) + off, static_cast<const char*>(op->reduceSrc) + off, dst,
             len / op->elemBytes);
    off += len;
  }
}

void throwIfAborted(const SegView& mine) {
  SegHeader* h = mine.hdr();
  if (h->abortReady.load(std::memory_order_acquire)) {
    int from = h->abortFrom.load(std::memory_order_relaxed) - 1;
    gdrResult_t code = static_cast<gdrResult_t>(h->abortCode);
    if (code != gdrInvalidUsage) code = gdrRemoteError;
    throw Error(code, strprintf("rank %d failed: %.*s", from, (int)sizeof(h->abortReason),
                                h->abortReason));
  }
}

void ShmEndpoint::checkPeer() {
  throwIfAborted(cfg_.mine);
  // A peer that exited after finishing is no error unless something is owed.
  if (sends_.empty() && inflight_.empty() && recvs_.empty()) return;
  if (!processAlive(cfg_.peerPid))
    throw RemoteError(strprintf("rank %d (pid %d on this host) died", cfg_.peerRank, (int)cfg_.peerPid));
}

void ShmEndpoint::sendAbort(gdrResult_t code, const std::string& reason) noexcept {
  SegHeader* h = cfg_.theirs.hdr();
  int32_t expected = 0;
  if (!h->abortFrom.compare_exchange_strong(expected, cfg_.myRank + 1)) return;
  h->abortCode = code;
  std::snprintf(h->abortReason, sizeof(h->abortReason), "%s", reason.c_str());
  h->abortReady.store(1, std::memory_order_release);
}

void ShmEndpoint::reset() noexcept {
  sends_.clear();
  inflight_.clear();
  recvs_.clear();
  sharing_ = false;
}

}  // namespace gdr::transport::shm

#include "transport/shm/shm_endpoint.h"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "collectives/schedule.h"
#include "core/error.h"
#include "core/log.h"
#include "transport/peer_liveness.h"

namespace gdr::transport::shm {

// From what size a message goes single-copy (the receiver reads the sender's
// buffer: one copy instead of two, but the sender's send completes only once
// it has been read). Measured on the 2-core machine against the FIFO path
// (bench/results/host-2core.md, session 4):
// - all-gather, all-to-all(v), reduce-scatter: every rank sends and receives
//   as much at once, so finishing a send early gains nothing: from 64 KiB;
// - reduce: the receiver adds what arrives; through the FIFO the sender's
//   copy runs beside the receiver's reduction, and the non-root is otherwise
//   idle: from 1 MiB;
// - all-reduce, broadcast, send/recv, barrier: from 256 KiB.
size_t cmaThresholdFor(const OpSig& sig, int64_t forced) {
  if (forced >= 0) return static_cast<size_t>(forced);
  using coll::CollKind;
  if (sig.kind == kP2PKind) return 256 * 1024;
  switch (static_cast<CollKind>(sig.kind)) {
    case CollKind::AllGather:
    case CollKind::AllToAll:
    case CollKind::AllToAllv:
    case CollKind::ReduceScatter:
      return 64 * 1024;
    case CollKind::Reduce:
      return 1024 * 1024;
    default:
      return 256 * 1024;
  }
}

ShmEndpoint::ShmEndpoint(const ShmEndpointConfig& cfg) : cfg_(cfg) {}

bool ShmEndpoint::progress() {
  bool moved = false;
  if (!sends_.empty() || !inflight_.empty()) moved |= progressSends();
  if (!recvs_.empty()) moved |= progressRecvs();
  return moved;
}

bool ShmEndpoint::progressSends() {
  bool moved = false;
  InboxCtl* ctl = cfg_.theirs.inbox(cfg_.outToPeer);
  const uint32_t nSlots = cfg_.theirs.hdr()->nSlots;
  const size_t slotBytes = cfg_.theirs.hdr()->slotBytes;
  while (!sends_.empty()) {
    SendOp* op = sends_.front();
    if (head_ - cachedTail_ >= nSlots) {
      cachedTail_ = ctl->tail.load(std::memory_order_acquire);
      if (head_ - cachedTail_ >= nSlots) break;
    }
    SlotHdr* slot = cfg_.theirs.slot(cfg_.outToPeer, head_);
    slot->sig = op->sig;
    slot->msgBytes = op->bytes;
    bool done;
    if (cfg_.cma && op->bytes >= cmaThresholdFor(op->sig, cfg_.cmaThreshold)) {
      slot->flags = kSlotCma;
      const uint64_t addr = reinterpret_cast<uintptr_t>(op->data);
      std::memcpy(slot->inl, &addr, sizeof(addr));
      slot->len = 0;
      op->sent = op->bytes;
      done = false;  // complete once the receiver has read it
    } else {
      size_t len = std::min(slotBytes, op->bytes - op->sent);
      slot->len = static_cast<uint32_t>(len);
      slot->flags = len <= kInlineBytes ? uint32_t{kSlotInline} : 0u;
      char* dst = len <= kInlineBytes ? slot->inl : reinterpret_cast<char*>(slot) + sizeof(SlotHdr);
      if (len) std::memcpy(dst, static_cast<const char*>(op->data) + op->sent, len);
      op->sent += len;
      done = op->sent == op->bytes;
    }
    op->lastSlot = head_;
    slot->seq.store(head_ + 1, std::memory_order_release);
    ++head_;
    moved = true;
    if (op->sent == op->bytes) {
      sends_.pop_front();
      if (done) op->complete = true;
      else inflight_.push_back(op);
    }
  }
  if (!inflight_.empty()) {
    cachedTail_ = ctl->tail.load(std::memory_order_acquire);
    while (!inflight_.empty() && cachedTail_ > inflight_.front()->lastSlot) {
      inflight_.front()->complete = true;
      inflight_.pop_front();
      moved = true;
    }
  }
  return moved;
}

bool ShmEndpoint::progressRecvs() {
  bool moved = false;
  InboxCtl* ctl = cfg_.mine.inbox(cfg_.inFromPeer);
  while (!recvs_.empty()) {
    RecvOp* op = recvs_.front();
    const SlotHdr* slot = cfg_.mine.slot(cfg_.inFromPeer, rtail_);
    if (slot->seq.load(std::memory_order_acquire) != rtail_ + 1) {
      // While waiting, keep asking for the first payload line: the sender
      // writes it before the header, so it is usually here by the time the
      // sequence word flips and a small message costs one miss, not two.
      __builtin_prefetch(reinterpret_cast<const char*>(slot) + sizeof(SlotHdr));
      break;
    }
    if (slot->sig != op->sig)
      throw InvalidUsage(strprintf("mismatched operations: rank %d sent %s but this rank expects %s",
                                   cfg_.peerRank, describe(slot->sig).c_str(),
                                   describe(op->sig).c_str()));
    if (slot->msgBytes != op->bytes)
      throw InvalidUsage(strprintf(
          "mismatched message size: rank %d sent %llu bytes for %s, this rank expects %zu",
          cfg_.peerRank, (unsigned long long)slot->msgBytes, describe(op->sig).c_str(), op->bytes));
    if (slot->flags & kSlotCma) {
      uint64_t addr;
      std::memcpy(&addr, slot->inl, sizeof(addr));
      readRemote(op, addr);
      op->received = op->bytes;
    } else {
      consume(op, slot);
      op->received += slot->len;
    }
    ++rtail_;
    ctl->tail.store(rtail_, std::memory_order_release);
    moved = true;
    if (op->received == op->bytes) {
      op->complete = true;
      recvs_.pop_front();
    }
  }
  return moved;
}

void ShmEndpoint::consume(RecvOp* op, const SlotHdr* slot) {
  const char* payload =
      (slot->flags & kSlotInline) ? slot->inl : reinterpret_cast<const char*>(slot) + sizeof(SlotHdr);
  char* dst = static_cast<char*>(op->dst) + op->received;
  if (op->fn) {
    const char* a = static_cast<const char*>(op->reduceSrc) + op->received;
    op->fn(dst, a, payload, slot->len / op->elemBytes);
  } else if (slot->len) {
    std::memcpy(dst, payload, slot->len);
  }
}

void ShmEndpoint::readRemote(RecvOp* op, uint64_t addr) {
  // Plain receives land directly in place; reductions go through a bounded
  // staging buffer so a large message never needs one of its own size.
  const size_t piece = op->fn ? 256 * 1024 : op->bytes;
  if (op->fn && bounce_.size() < piece) bounce_.resize(piece);
  for (size_t off = 0; off < op->bytes;) {
    size_t len = std::min(piece, op->bytes - off);
    char* dst = op->fn ? bounce_.data() : static_cast<char*>(op->dst) + off;
    struct iovec local = {dst, len};
    struct iovec remote = {reinterpret_cast<void*>(addr + off), len};
    ssize_t n = process_vm_readv(cfg_.peerPid, &local, 1, &remote, 1, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      // ESRCH: the peer exited (or is exiting) while its message was posted.
      // That is a peer failure, whatever the OS call that saw it first.
      if (errno == ESRCH || !processAlive(cfg_.peerPid))
        throw RemoteError(strprintf("rank %d (pid %d) exited while this rank read its message", cfg_.peerRank,
                                    (int)cfg_.peerPid));
      throw SystemError(strprintf("process_vm_readv of %zu bytes from rank %d (pid %d)", len,
                                  cfg_.peerRank, (int)cfg_.peerPid),
                        errno);
    }
    if (n == 0) throw RemoteError(strprintf("rank %d's buffer vanished during a read", cfg_.peerRank));
    if (op->fn) {
      size_t elems = static_cast<size_t>(n) / op->elemBytes;
      op->fn(static_cast<char*>(op->dst) + off, static_cast<const char*>(op->reduceSrc) + off, dst,
             elems);
      n = static_cast<ssize_t>(elems * op->elemBytes);
    }
    off += static_cast<size_t>(n);
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
}

}  // namespace gdr::transport::shm

// Rendezvous failover of a verbs connection (ib_failover.cc moves the eager
// chunks). A zero-copy write lands in the receiver's own buffer, and the
// receiver completes the receive once every chunk's immediate is in; a write
// that completed in error may still have landed (only its ACK was lost), so
// writing it again blindly could land a second copy after the receive
// completed and the caller reused the buffer. So the two ends settle it over
// the side connection (zcopy_notice.h has the frames):
//
// 1. The sender keeps each zero-copy write that failed with its QP q (the
//    message and the chunk: its work-request id says both).
// 2. Once every request of q has completed or flushed, it asks the peer
//    which of those chunks landed, unless the peer's credit word says their
//    receive is complete already (then they all did).
// 3. The receiver takes its end of q out of service first (the error state:
//    nothing more can land through it), reads its completion queue (the
//    chunks that landed before), and answers from its landed bits. Each
//    chunk it answers "not landed" is owed: the receive waits for it, even
//    if the first write's completion turns up after all (a copy then: the
//    same bytes into the same place, ignored by the bits).
// 4. The sender writes again exactly the chunks answered "not landed", on
//    the QPs left; the others count as done.
//
// A clear-to-send whose write failed goes again as a copy over the side
// connection; the sender takes its end of that QP out of service before it
// reads the copy (so the first write cannot land later, over a reused
// mailbox slot) and ignores whichever of the two comes second.
//
// Under GDR_ENCRYPT the eager chunks of a failed QP go the same way (asked
// about by sequence, written again from the sealing ring only if they did
// not land): the receiver opens each chunk in place in its slot, so a
// second copy landing over one being opened would be delivered unverified.
#include <algorithm>

#include "core/error.h"
#include "core/log.h"
#include "transport/ib/ib_endpoint.h"
#include "transport/ib/ib_wr_id.h"

namespace gdr::transport::ib {

void IbEndpoint::sendSide(const std::string& frame, const char* what) {
  if (!side_->sendNotice(frame.data(), frame.size()))
    throw RemoteError(strprintf(
        "rank %d: %s for rank %d could not go over the side connection (is the peer gone?)",
        cfg_.myRank, what, cfg_.peerRank));
}

// Sender: zero-copy write v (message id << kZChunkBits | chunk) failed on q.
void IbEndpoint::zcopyLost(int q, uint64_t v) {
  const uint64_t pid = v >> kZChunkBits;
  const uint32_t idx = static_cast<uint32_t>(v & kImmZChunkMask);
  if (pend_.empty() || pid - pend_.front().id >= pend_.size())
    throw InternalError(strprintf("failed zero-copy write of unknown message %llu to rank %d",
                                  (unsigned long long)pid, cfg_.peerRank));
  zLost_.push_back(ZLost{q, false, pid, pend_[pid - pend_.front().id].ticket, idx});
}

// Sender, GDR_ENCRYPT: eager chunk seq failed on q. A copy of a chunk that
// landed after all would land over it while the receiver opens it in its
// slot, so it is asked about like a zero-copy chunk.
void IbEndpoint::eagerLost(int q, uint64_t seq) { zLost_.push_back(ZLost{q, false, 0, seq, kEagerChunk}); }

// Receiver: the clear-to-send for ticket t failed on q.
void IbEndpoint::ctsLost(int q, uint64_t t) {
  if (t < rDone_) return;  // its receive completed, so the sender had read it
  const ZcopyCts& c = cts_[kCtsSlots + t % kCtsSlots];
  if (c.ticket != t)
    throw InternalError(strprintf("clear-to-send %llu to rank %d: its source holds %llu",
                                  (unsigned long long)t, cfg_.peerRank,
                                  (unsigned long long)c.ticket));
  sendSide(encodeCtsCopy(CtsCopy{q, c}), "a clear-to-send");
  ++stats_.ctsResent;
}

bool IbEndpoint::zRecover() {
  bool moved = false;
  if (!pend_.empty()) {
    // Their receive complete: they landed (asked or not: a receiver that
    // completed may not read the question until it next waits on this
    // connection; its answer then finds nothing to settle).
    // Eager chunks the peer consumed landed too.
    const uint64_t done = peerDone(), consumed = peerConsumed();
    for (size_t i = 0; i < zLost_.size();) {
      const ZLost z = zLost_[i];
      const bool eager = z.idx == kEagerChunk;
      if (z.ticket >= (eager ? consumed : done)) {
        ++i;
        continue;
      }
      zLost_.erase(zLost_.begin() + static_cast<long>(i));
      settleLanded(z);
      moved = true;
    }
  }
  // Ask about a QP's chunks once nothing of it is in flight any more.
  for (int q = 0; q < cfg_.nQps; ++q) {
    if (sqUsed_[q] != 0) continue;
    ZQuery ask{q, {}};
    for (ZLost& z : zLost_)
      if (z.q == q && !z.asked && ask.chunks.size() < kMaxZQuery) {
        ask.chunks.push_back(ZChunkRef{z.ticket, z.idx});
        z.asked = true;
      }
    if (ask.chunks.empty()) continue;
    sendSide(encodeZQuery(ask), "a question about zero-copy writes");
    ++stats_.zcopyQueries;
    GDR_INFO(kNet, "rank %d: asked rank %d which of %zu zero-copy chunk(s) of QP %d landed",
             cfg_.myRank, cfg_.peerRank, ask.chunks.size(), q + 1);
    moved = true;
  }
  // Write again those that did not, on the QPs left.
  while (!zResend_.empty()) {
    const ZLost z = zResend_.front();
    const int q = pickQp(z.ticket << kZChunkBits | z.idx);
    if (q < 0 || sqUsed_[q] >= sqCap_ || dataInFlight_ >= cfg_.maxWr) break;
    postZcopyWrite(q, pend_[z.pid - pend_.front().id], z.idx,
                   "ibv_post_send (zero-copy RDMA WRITE WITH IMM, again)");
    ++stats_.zcopyResent;
    zResend_.pop_front();
    moved = true;
  }
  return moved;
}

// A failed write that landed after all: done, as if it had completed.
void IbEndpoint::settleLanded(const ZLost& z) {
  ++stats_.zcopyLandedAnyway;
  if (z.idx == kEagerChunk)
    chunkDone(z.ticket);
  else
    --pend_[z.pid - pend_.front().id].wrsLeft;
}

bool IbEndpoint::takeRendezvousNotice(const std::string& bytes) {
  ZQuery q;
  ZAnswer a;
  CtsCopy c;
  if (decodeZQuery(bytes, cfg_.nQps, &q))
    onZQuery(q.qp, q.chunks);
  else if (decodeZAnswer(bytes, cfg_.nQps, &a))
    onZAnswer(a.qp, a.chunks, a.landed);
  else if (decodeCtsCopy(bytes, cfg_.nQps, &c))
    onCtsCopy(c.qp, c.cts);
  else
    return false;
  return true;
}

// Receiver: which of these chunks, written on QP q, landed?
void IbEndpoint::onZQuery(int q, const std::vector<ZChunkRef>& chunks) {
  takeDown(q, IBV_WC_WR_FLUSH_ERR, "the peer asked about its zero-copy writes");
  pollCq();  // the chunks that landed before this end stopped
  ZAnswer a{q, chunks, std::vector<uint8_t>(chunks.size(), 0)};
  for (size_t i = 0; i < chunks.size(); ++i) {
    const ZChunkRef& r = chunks[i];
    if (r.idx == kEagerChunk) {  // consumed, or in its slot
      a.landed[i] = r.ticket < rseq_ || arrived_[r.ticket % cfg_.nSlots];
      if (!a.landed[i]) eOwed_.insert(r.ticket);
      continue;
    }
    if (r.ticket < rDone_) {  // a completed receive: every chunk of it landed
      a.landed[i] = 1;
      continue;
    }
    auto z = std::find_if(zrecvs_.begin(), zrecvs_.end(),
                          [&](const ZRecv& x) { return x.ticket == r.ticket && x.direct; });
    if (z == zrecvs_.end() || r.idx >= z->chunks)
      throw RemoteError(strprintf(
          "rank %d asked about zero-copy chunk %u of message %llu, which this rank never asked for",
          cfg_.peerRank, r.idx, (unsigned long long)r.ticket));
    a.landed[i] = landedBits(r.ticket)[r.idx / 64] >> (r.idx % 64) & 1;
    if (!a.landed[i] && std::find(z->owed.begin(), z->owed.end(), r.idx) == z->owed.end())
      z->owed.push_back(r.idx);
  }
  sendSide(encodeZAnswer(a), "an answer about zero-copy writes");
  ++stats_.zcopyAnswers;
}

// Sender: the answer about chunks of QP q. One settled meanwhile (its
// receive completed) is not there any more.
void IbEndpoint::onZAnswer(int q, const std::vector<ZChunkRef>& chunks,
                           const std::vector<uint8_t>& landed) {
  size_t resend = 0;
  for (size_t n = 0; n < chunks.size(); ++n) {
    auto z = std::find_if(zLost_.begin(), zLost_.end(), [&](const ZLost& x) {
      return x.q == q && x.asked && x.ticket == chunks[n].ticket && x.idx == chunks[n].idx;
    });
    if (z == zLost_.end()) continue;
    const ZLost lost = *z;
    zLost_.erase(z);
    if (landed[n]) {
      settleLanded(lost);
    } else if (lost.idx == kEagerChunk) {
      resend_.failed(lost.ticket);  // resendChunks writes its sealed entry again
      ++resend;
    } else {
      zResend_.push_back(lost);
      ++resend;
    }
  }
  GDR_INFO(kNet, "rank %d: rank %d says %zu of %zu zero-copy chunk(s) of QP %d did not land",
           cfg_.myRank, cfg_.peerRank, resend, chunks.size(), q + 1);
}

// Sender: a clear-to-send whose write on QP q failed.
void IbEndpoint::onCtsCopy(int q, const ZcopyCts& c) {
  takeDown(q, IBV_WC_WR_FLUSH_ERR, "the peer's clear-to-send on it failed");
  if (ctsSeen_.has(c.ticket)) {  // the first write landed after all
    ++stats_.zcopyDuplicates;
    return;
  }
  if (c.ticket - ctsSeen_.seen() >= kCtsSlots)
    throw RemoteError(strprintf("rank %d sent a copy of clear-to-send %llu, expected %llu..%llu",
                                cfg_.peerRank, (unsigned long long)c.ticket,
                                (unsigned long long)ctsSeen_.seen(),
                                (unsigned long long)(ctsSeen_.seen() + kCtsSlots - 1)));
  cts_[c.ticket % kCtsSlots] = c;
  ctsSeen_.mark(c.ticket);
}

}  // namespace gdr::transport::ib

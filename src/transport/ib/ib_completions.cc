// The verbs endpoint's completions (ib_endpoint.cc has the rest): what the
// completion queue reports for sends, receives of immediates and credit
// writes, and the in-order retirement of completed chunks.
#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "core/log.h"
#include "transport/ib/ib_endpoint.h"
#include "transport/ib/ib_wr_id.h"

namespace gdr::transport::ib {

bool IbEndpoint::pollCq() {
  bool moved = false;
  for (size_t d = 0; d < devs_.size(); ++d) moved |= pollCqOf(static_cast<int>(d));
  while (!pend_.empty() && pend_.front().allPosted && pend_.front().wrsLeft == 0) {
    releaseRegs(pend_.front().reg, false);
    pend_.front().op->complete = true;
    pend_.pop_front();
  }
  return moved;
}

// The completions of device d's queue (its QPs' sends and receives).
bool IbEndpoint::pollCqOf(int d) {
  ibv_wc wcs[32];
  bool moved = false;
  for (;;) {
    int n = ibv_poll_cq(devs_[d].cq, 32, wcs);
    if (n < 0)
      throw RemoteError(strprintf("ibv_poll_cq for rank %d failed on %s", cfg_.peerRank,
                                  devs_[d].dev->name().c_str()));
    if (n == 0) break;
    moved = true;
    for (int i = 0; i < n; ++i) {
      const ibv_wc& wc = wcs[i];
      if (wc.status != IBV_WC_SUCCESS) {
        if (failover(wc, d)) continue;
        // Report the cause, not the flushes it triggered on other requests.
        for (int j = i; j < n; ++j)
          if (wcs[j].status != IBV_WC_SUCCESS && wcs[j].status != IBV_WC_WR_FLUSH_ERR)
            failWc(wcs[j], d);
        failWc(wc, d);
      }
      const uint64_t kind = wrKind(wc.wr_id), v = wrValue(wc.wr_id);
      if (kind == kWrRecv) {
        uint32_t imm = ntohl(wc.imm_data);
        if (imm & kImmZcopy) {
          if ((imm & kImmKindMask) == kImmCts)
            onCts(imm);
          else
            onZcopyLanded(imm, wc.qp_num);
          postRecvWr(static_cast<int>(v));
          continue;
        }
        // The chunk's full sequence: the one within nSlots of rseq_ whose low 31 bits match.
        const ImmSeq m = classifyImm(imm, rseq_, cfg_.nSlots);
        if (m.kind == ImmSeq::kStale) {  // a resend of a chunk consumed already
          ++stats_.staleChunks;
          postRecvWr(static_cast<int>(v));
          continue;
        }
        const uint64_t seq = m.seq;
        if (!eOwed_.empty() && eOwed_.count(seq)) {
          // GDR_ENCRYPT: answered "not landed" (ib_zfailover.cc). Only its
          // copy on a live QP is taken: a late first write from the dead QP
          // would have its copy land over it while it is being opened.
          const int q = qpIndex(wc.qp_num, d);
          if (q >= 0 && !lanes_.live(q)) {
            ++stats_.staleChunks;
            continue;
          }
          eOwed_.erase(seq);
        }
        if (m.kind == ImmSeq::kOutside)
          throw RemoteError(strprintf(
              "rank %d wrote chunk %u outside the credit window (expected %llu..%llu) on QP %u",
              cfg_.peerRank, imm, (unsigned long long)rseq_,
              (unsigned long long)(rseq_ + cfg_.nSlots - 1), wc.qp_num));
        const uint32_t slot = static_cast<uint32_t>(seq % cfg_.nSlots);
        arrived_[slot] = 1;
        if (cipher_) cipher_->openAhead(seq, slot, slots_ + slot * slotStride_);
        postRecvWr(static_cast<int>(v));
        continue;
      }
      int q = qpIndex(wc.qp_num, d);
      if (q >= 0) --sqUsed_[q];
      if (kind == kWrCredit) {
        --creditsInFlight_;
        continue;
      }
      if (kind == kWrCts) continue;
      if (kind == kWrZData) {  // v: the message's PendingSend id and the chunk's index
        --dataInFlight_;
        const uint64_t pid = v >> kZChunkBits;
        if (!pend_.empty() && pid - pend_.front().id < pend_.size())
          --pend_[pid - pend_.front().id].wrsLeft;
        continue;
      }
      --dataInFlight_;
      resend_.completed(v);
      chunkDone(v);
    }
  }
  return moved;
}

void IbEndpoint::chunkDone(uint64_t seq) {
  auto it = track_.find(seq);
  if (it == track_.end())
    throw InternalError(strprintf("completion for unknown chunk %llu to rank %d",
                                  (unsigned long long)seq, cfg_.peerRank));
  const ChunkTrack t = it->second;
  track_.erase(it);
  if (cipher_) cipher_->sent(seq);
  const double now = nowUs();
  const size_t before = policy_.chunk();
  policy_.onComplete(t.bytes, now, t.occupancy);
  if (policy_.chunk() != before)
    GDR_TRACE(kNet,
              "rank %d -> rank %d: hill-climb chunk %zu -> %zu at %.0f us (%.2f MB/s over the last "
              "%d chunks)",
              cfg_.myRank, cfg_.peerRank, before, policy_.chunk(), now, policy_.lastRate(),
              ChunkPolicy::kWindow);
  cc_->completed(t.dev, t.bytes, t.sentUs, now);
  if (!pend_.empty()) {
    uint64_t idx = t.pendingId - pend_.front().id;
    if (idx < pend_.size()) --pend_[idx].wrsLeft;
  }
}

}  // namespace gdr::transport::ib

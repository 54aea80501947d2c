#include "transport/ib/qp_lanes.h"

#include "transport/ib/ib_wire.h"
#include "transport/ib/ib_wr_id.h"

namespace gdr::transport::ib {

QpLanes::QpLanes(int nQps, int nPorts)
    : live_(static_cast<size_t>(nQps), 1),
      portDown_(static_cast<size_t>(nPorts < 1 ? 1 : nPorts), 0),
      nLive_(nQps) {
  for (int q = 0; q < nQps; ++q) port_.push_back(q % static_cast<int>(portDown_.size()));
}

int QpLanes::pick(uint64_t peer, uint64_t seq) const {
  if (nLive_ == 0) return -1;
  // Consecutive chunks go round the QPs (so round the ports), from a place
  // the peer's hash gives: every lane carries an equal share of any run of
  // chunks, which a window of a few chunks needs to keep both ports busy
  // (a hash per chunk leaves one port idle while the other has a backlog).
  const uint64_t n = port_.size();
  const int q = static_cast<int>((spreadHash(peer) + seq) % n);
  if (live_[q]) return q;
  // The k-th live QP, k from a hash of the chunk: the failed share spreads
  // evenly over the survivors.
  uint64_t k = spreadHash((peer << 40) ^ seq) % static_cast<uint64_t>(nLive_);
  for (size_t i = 0; i < n; ++i)
    if (live_[i] && k-- == 0) return static_cast<int>(i);
  return -1;
}

int QpLanes::control() const {
  for (size_t i = 0; i < live_.size(); ++i)
    if (live_[i]) return static_cast<int>(i);
  return -1;
}

bool QpLanes::markDown(int q) {
  if (!live_[q]) return false;
  live_[q] = 0;
  --nLive_;
  const bool first = !portDown_[port_[q]];
  portDown_[port_[q]] = 1;
  return first;
}

ImmSeq classifyImm(uint32_t imm, uint64_t rseq, uint32_t nSlots) {
  const uint32_t ahead = (imm - static_cast<uint32_t>(rseq)) & kImmSeqMask;
  if (ahead < nSlots) return {ImmSeq::kFresh, rseq + ahead};
  // Behind: a resent chunk whose first copy was consumed. The sender resends
  // only chunks it has not seen consumed and holds new ones meanwhile, so a
  // stale copy is at most two windows behind.
  const uint32_t behind = (static_cast<uint32_t>(rseq) - imm) & kImmSeqMask;
  if (behind >= 1 && behind <= 2 * nSlots && behind <= rseq) return {ImmSeq::kStale, 0};
  return {ImmSeq::kOutside, 0};
}

void ResendQueue::resent(uint64_t seq) {
  todo_.erase(seq);
  inFlight_.insert(seq);
  ++resends_;
}

}  // namespace gdr::transport::ib

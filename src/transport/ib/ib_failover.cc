// Port failover of a verbs connection: a QP that fails on the path (its
// port went down, or the peer's port stopped answering: retries exceeded,
// its queue flushed, a remote invalid request, or a local QP operation error
// with its port down) while other QPs of the
// connection live and the peer itself is alive hands its work to them. Its eager chunks not yet
// completed go again, same sequence and slot, on the QPs the placement now
// names (qp_lanes.h says why order and slots stay right); a credit write it
// lost is written again on a live QP. Logged once per port and process.
//
// The peer is told (qp_notice.h), so its end of the QP fails over too
// instead of waiting out its retries; a notice from the peer does the same
// here (takePeerNotices, from checkPeer: a stalled wait reads it within a
// few milliseconds).
//
// Zero-copy writes and clear-to-sends of the failed QP move too, and under
// GDR_ENCRYPT the eager chunks (opened in place, where a second copy could
// land on a chunk being opened), with the peer's help over the side
// connection (ib_zfailover.cc); without a side connection they fail as
// before, naming the QP.
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "core/error.h"
#include "core/log.h"
#include "transport/ib/ib_endpoint.h"
#include "transport/ib/ib_wr_id.h"
#include "transport/ib/qp_notice.h"

namespace gdr::transport::ib {

namespace {

// True the first time (device, port) is reported in this process.
bool firstReport(const std::string& dev, int port) {
  static std::mutex mu;
  static std::set<std::pair<std::string, int>> seen;
  std::lock_guard<std::mutex> g(mu);
  return seen.emplace(dev, port).second;
}

}  // namespace

bool IbEndpoint::failover(const ibv_wc& wc, int d) {
  const int q = qpIndex(wc.qp_num, d);
  if (q < 0) return false;
  if (lanes_.live(q)) {
    // A local QP operation error is a path failure only while the QP's port
    // is down: rxe completes the write in flight that way when its link goes
    // down (otherwise it is this side's own fault, and not moved). A remote
    // invalid request is the responder refusing a packet of this QP, which
    // puts both ends of it in error: rxe 6.1 did so in the shaped bursts
    // scenario while spurious retransmissions flooded it (an ACK timeout
    // below the queue's delay: bench/results/congestion.md 5b-5d). The
    // eager chunks go again on the others as for a port; a request this
    // side built wrong would be refused on every QP, so the last one still
    // fails the connection.
    const bool path = wc.status == IBV_WC_RETRY_EXC_ERR || wc.status == IBV_WC_WR_FLUSH_ERR ||
                      wc.status == IBV_WC_REM_INV_REQ_ERR ||
                      (wc.status == IBV_WC_LOC_QP_OP_ERR && portGoing(q));
    // Encrypted chunks move only with the peer's help (ib_zfailover.cc).
    if (!cfg_.failover || !path || (cipher_ && !side_) || lanes_.liveCount() < 2) return false;
    // A peer that died is its own failure, reported as such, not a port's.
    if (side_) side_->checkPeer();
    // Nothing pending: also what a peer that destroyed its communicator and
    // left does to this QP's last credit write, so not worth a warning.
    qpDown(q, wc, sends_.empty() && pend_.empty() && recvs_.empty() && resend_.empty());
    // Its port is down: so are the port's other QPs, whatever they have not
    // reported yet. rxe left writes on such a QP neither completed nor
    // failed for a minute once its link had gone down mid-transfer
    // (session 17), so they are taken out now and their work flushes.
    if (!portActive(q)) takePortDown(q, wc.status, "its port went down");
  }
  // From here on every completion of q is its queue being flushed.
  const WrKind kind = wrKind(wc.wr_id);
  if (kind == kWrRecv) return true;  // a landing receive, gone with the QP
  --sqUsed_[q];
  switch (kind) {
    case kWrCredit:
      --creditsInFlight_;
      creditPosted_ = ~0ull;  // write the count again, on a live QP
      return true;
    case kWrData:
      --dataInFlight_;
      resend_.completed(wrValue(wc.wr_id));  // a resend that failed too goes again
      if (cipher_)  // a second copy must not land over a chunk being opened: ask first
        eagerLost(q, wrValue(wc.wr_id));
      else
        resend_.failed(wrValue(wc.wr_id));
      return true;
    case kWrZData:
      if (!side_) break;
      --dataInFlight_;
      zcopyLost(q, wrValue(wc.wr_id));
      return true;
    case kWrCts:
      if (!side_) break;
      ctsLost(q, wrValue(wc.wr_id));
      return true;
    default:
      break;
  }
  // No side connection to settle a rendezvous write with the peer.
  throw RemoteError(strprintf(
      "QP %u (%d of %d, %s port %u) to rank %d failed (%s) with a %s in flight, which cannot "
      "move to another QP without a side connection",
      wc.qp_num, q + 1, cfg_.nQps, deviceOf(q).name().c_str(), portOf(q).num, cfg_.peerRank,
      api_->wc_status_str(wc.status), kind == kWrCts ? "clear-to-send" : "zero-copy write"));
}

bool IbEndpoint::portActive(int q) const {
  ibv_port_attr pa{};
  return api_->queryPort(deviceOf(q).ctx(), portOf(q).num, &pa) == 0 && pa.state == IBV_PORT_ACTIVE;
}

// rxe completes the write in flight with a local QP operation error as its
// link goes down, and can report the port still active for a few
// milliseconds after (its port event lags the completion: session 17, a
// link taken down mid-collective). So the port is asked again for up to
// 100 ms; an error path only.
bool IbEndpoint::portGoing(int q) const {
  for (int i = 0; i < 20; ++i) {
    if (!portActive(q)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// A port that went down with no completion to say so: rxe (6.1) can leave
// the writes in flight on its QPs neither completed nor failed once the
// link is down (a zero-copy step with the link taken down 70 ms into a
// collective hung until GDR_TIMEOUT_MS in 1 of 4 boots, session 19, with
// no failed completion on either side). A wait that owes the peer
// something asks the live QPs' ports every kPortCheck; one found down
// takes its QPs out of service (their work flushes and moves, as after a
// failed completion) and tells the peer, whose end of them then fails over
// instead of waiting out its retries.
void IbEndpoint::checkPorts() {
  constexpr std::chrono::milliseconds kPortCheck{50};
  if (!cfg_.failover || !side_ || lanes_.liveCount() < 2) return;
  const auto now = std::chrono::steady_clock::now();
  if (now < nextPortCheck_) return;
  nextPortCheck_ = now + kPortCheck;
  for (int q = 0; q < cfg_.nQps && lanes_.liveCount() > 1; ++q) {
    if (!lanes_.live(q) || portActive(q)) continue;  // one query per port: the rest leave with q
    const std::string& dev = deviceOf(q).name();
    if (firstReport(dev, static_cast<int>(portOf(q).num)))
      GDR_WARN(kNet,
               "rank %d: %s port %u to rank %d is down with no failed completion: its QPs leave "
               "service and their chunks go over the QP(s) left",
               cfg_.myRank, dev.c_str(), portOf(q).num, cfg_.peerRank);
    takePortDown(q, IBV_WC_WR_FLUSH_ERR, "its port is down");
  }
}

// Every live QP on q's port out of service, the peer told of each; the
// last live QP of the connection stays (its own completions decide).
void IbEndpoint::takePortDown(int q, int status, const char* why) {
  for (int o = 0; o < cfg_.nQps; ++o)
    if (lanes_.live(o) && lanes_.port(o) == lanes_.port(q) && lanes_.liveCount() > 1) {
      takeDown(o, status, why);
      tellDown(o, status);
    }
}

void IbEndpoint::qpDown(int q, const ibv_wc& wc, bool idle) {
  const unsigned port = portOf(q).num;
  const std::string& dev = deviceOf(q).name();
  const bool firstOfPort = lanes_.markDown(q);
  ++stats_.qpsDown;
  if (firstOfPort && !idle && firstReport(dev, static_cast<int>(port)))
    GDR_WARN(kNet,
             "rank %d: verbs QP %u on %s port %u to rank %d failed (%s): its chunks go over the "
             "%d QP(s) left; later failures on this port are logged at INFO",
             cfg_.myRank, wc.qp_num, dev.c_str(), port, cfg_.peerRank,
             api_->wc_status_str(wc.status), lanes_.liveCount());
  else
    GDR_INFO(kNet, "rank %d: verbs QP %u on %s port %u to rank %d failed (%s), %d QP(s) left",
             cfg_.myRank, wc.qp_num, dev.c_str(), port, cfg_.peerRank,
             api_->wc_status_str(wc.status), lanes_.liveCount());
  tellDown(q, wc.status);
}

void IbEndpoint::tellDown(int q, int status) {
  if (!side_) return;
  const std::string notice = encodeQpDown({q, status});
  if (side_->sendNotice(notice.data(), notice.size())) ++stats_.noticesSent;
}

void IbEndpoint::takePeerNotices() {
  std::string bytes;
  while (side_->takeNotice(&bytes)) {
    if (takeRendezvousNotice(bytes)) continue;
    QpDownNotice n;
    if (!decodeQpDown(bytes, cfg_.nQps, &n)) {
      GDR_INFO(kNet, "rank %d: a notice of %zu bytes from rank %d is not a QP-down notice; ignored",
               cfg_.myRank, bytes.size(), cfg_.peerRank);
      continue;
    }
    // Already down here (both ends saw it), or the last QP: nothing to move
    // it to, so its own completions fail the connection as without failover.
    if (!cfg_.failover || !lanes_.live(n.qp) || lanes_.liveCount() < 2) continue;
    ++stats_.noticesTaken;
    takeDown(n.qp, n.status, "the peer took its end down");
  }
}

void IbEndpoint::takeDown(int q, int status, const char* why) {
  if (lanes_.live(q)) {
    lanes_.markDown(q);
    ++stats_.qpsDown;
    GDR_INFO(kNet,
             "rank %d: verbs QP %u (%d of %d) to rank %d out of service: %s (%s); this end (%s "
             "port %u) flushes and its chunks go over the %d QP(s) left",
             cfg_.myRank, qps_[q]->qp_num, q + 1, cfg_.nQps, cfg_.peerRank, why,
             api_->wc_status_str(static_cast<ibv_wc_status>(status)), deviceOf(q).name().c_str(),
             portOf(q).num, lanes_.liveCount());
  }
  // Also when already down here: a QP taken out by its own failed
  // completions is in the error state already, and this is then a no-op.
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_ERR;
  if (int e = api_->modify_qp(qps_[q], &a, IBV_QP_STATE))
    GDR_WARN(kNet,
             "rank %d: ibv_modify_qp(ERR) of QP %u to rank %d failed (%s): its writes fail over "
             "only after their retries",
             cfg_.myRank, qps_[q]->qp_num, cfg_.peerRank, std::strerror(e));
}

// Chunks of failed QPs, oldest first: one the peer consumed already is done
// (only its completion was lost); the others go again from the header still
// in their slot's place and the payload still in the caller's buffer (the
// send is not complete, and no newer chunk took the slot: see qp_lanes.h).
bool IbEndpoint::resendChunks(uint64_t consumed) {
  bool moved = false;
  while (!resend_.empty()) {
    const uint64_t seq = resend_.front();
    if (seq < consumed) {
      resend_.dropped(seq);
      chunkDone(seq);
      moved = true;
      continue;
    }
    const int q = pickQp(seq);
    if (sqUsed_[q] >= sqCap_ || dataInFlight_ >= cfg_.maxWr) break;
    auto it = track_.find(seq);
    if (it == track_.end() || pend_.empty())
      throw InternalError(strprintf("resend of unknown chunk %llu to rank %d",
                                    (unsigned long long)seq, cfg_.peerRank));
    const PendingSend& p = pend_[it->second.pendingId - pend_.front().id];
    ibv_sge sge[2];
    int nsge = 1;
    const ChunkHdr* h = &slotHdr(seq);
    bool payloadFromUser = true;
    if (cipher_) {  // the sealed entry, still in the ring until the chunk completes
      h = cipher_->sealed(seq);
      if (!h)
        throw InternalError(strprintf("resend of chunk %llu to rank %d: its sealed entry is gone",
                                      (unsigned long long)seq, cfg_.peerRank));
      payloadFromUser = h->flags == kChunkAuthOnly;
      sge[0] = {reinterpret_cast<uintptr_t>(h),
                static_cast<uint32_t>(sizeof(ChunkHdr) + (payloadFromUser ? 0 : h->len)),
                sideOf(q).ringMr->lkey};
    } else {
      sge[0] = {reinterpret_cast<uintptr_t>(h), sizeof(ChunkHdr), sideOf(q).ctrlMr->lkey};
    }
    if (it->second.bytes && payloadFromUser)
      sge[nsge++] = {reinterpret_cast<uintptr_t>(p.op->data) + h->offset,
                     static_cast<uint32_t>(it->second.bytes), p.reg[devOf(q)]->reg.lkey};
    writeSlot(q, sge, nsge, seq);
    // In flight on q's device now, timed from this write.
    cc_->moved(it->second.dev, devOf(q), it->second.bytes);
    it->second.dev = devOf(q);
    it->second.sentUs = nowUs();
    resend_.resent(seq);
    ++stats_.chunksResent;
    moved = true;
  }
  return moved;
}

}  // namespace gdr::transport::ib

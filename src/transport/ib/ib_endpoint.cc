#include "transport/ib/ib_endpoint.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <random>
#include <utility>

#include "core/error.h"
#include "core/log.h"
#include "core/memory_kind.h"
#include "transport/ib/gpu_copy.h"
#include "transport/ib/ib_wr_id.h"

namespace gdr::transport::ib {

namespace {

constexpr int kCreditSources = 16;
constexpr int kMaxCreditsInFlight = 4;

void* pageAlloc(size_t bytes) {
  void* p = nullptr;
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (posix_memalign(&p, page, (bytes + page - 1) / page * page) != 0) throw std::bad_alloc();
  std::memset(p, 0, bytes);
  return p;
}

void fillHdr(ChunkHdr& h, const SendOp& op, size_t offset, size_t len) {
  h.magic = kChunkMagic;
  h.version = kChunkVersion;
  h.flags = 0;
  h.len = static_cast<uint32_t>(len);
  h.sig = op.sig;
  h.msgBytes = op.bytes;
  h.offset = offset;
}

const char* wcOpName(const ibv_wc& wc) {
  switch (wrKind(wc.wr_id)) {
    case kWrData:
      return "RDMA WRITE WITH IMM (data chunk)";
    case kWrCredit:
      return "RDMA WRITE (credit)";
    case kWrZData:
      return "RDMA WRITE WITH IMM (zero-copy chunk into the peer's buffer)";
    case kWrCts:
      return "RDMA WRITE WITH IMM (clear-to-send)";
    default:
      return "RECV (write-with-imm landing)";
  }
}

}  // namespace

struct IbEndpoint::Ctrl {
  alignas(64) volatile uint64_t credit;  // chunks the peer has consumed (peer writes it)
  volatile uint64_t zcredit;             // zero-copy chunks landed at the peer (same write)
  volatile uint64_t zdone;               // rendezvous receives the peer completed (same write)
  alignas(64) uint64_t creditSrc[kCreditSources][3];
  ChunkHdr hdrs[1];  // nSlots of them (allocated beyond the struct)
};

size_t IbEndpoint::ctrlBytes() const { return sizeof(Ctrl) + sizeof(ChunkHdr) * cfg_.nSlots; }

IbEndpoint::IbEndpoint(std::vector<std::shared_ptr<IbDevice>> devs, const IbEndpointConfig& cfg,
                       const security::SessionKeys* keys)
    : api_(devs.empty() ? nullptr : &devs[0]->api()),
      cfg_(cfg),
      rails_(railsOf(devs)),
      lanes_(std::clamp(cfg.nQps, 1, kMaxQpsPerPeer), static_cast<int>(rails_.size())),
      policy_(cfg.chunkFixed),
      t0_(std::chrono::steady_clock::now()) {
  for (auto& d : devs) {
    devNames_ += (devNames_.empty() ? "" : "+") + d->name();
    devs_.emplace_back();
    devs_.back().dev = std::move(d);
  }
  if (cfg_.nQps < 1 || cfg_.nQps > kMaxQpsPerPeer)
    throw InvalidArgument(
        strprintf("GDR_IB_QPS_PER_PEER=%d must be in [1, %d]", cfg_.nQps, kMaxQpsPerPeer));
  if (cfg_.nSlots < 2 || (cfg_.nSlots & (cfg_.nSlots - 1)))
    throw InvalidArgument(strprintf("GDR_IB_SLOTS=%u must be a power of two >= 2", cfg_.nSlots));
  zBytes_ = keys ? 0 : cfg_.zcopyBytes;  // the CPU seals every encrypted byte: no zero-copy
  slotStride_ = sizeof(ChunkHdr) + std::max(ChunkPolicy::kMax, policy_.chunk());
  CcConfig cc = cfg_.cc;
  cc.maxWindow = cfg_.nSlots * (slotStride_ - sizeof(ChunkHdr));
  cc_ = std::make_unique<PeerCc>(cc, ccPaths(), cfg_.myRank, cfg_.peerRank);
  slots_ = static_cast<char*>(pageAlloc(slotStride_ * cfg_.nSlots));
  ctrl_ = static_cast<Ctrl*>(pageAlloc(ctrlBytes()));
  cts_ = static_cast<ZcopyCts*>(pageAlloc(2 * kCtsSlots * sizeof(ZcopyCts)));
  if (keys)
    // Twice the receive window: chunks sealed ahead while a window's worth
    // waits for its send completions.
    cipher_ = std::make_unique<ChunkCipher>(*keys, 2 * cfg_.nSlots, slotStride_, cfg_.nSlots,
                                            slotStride_ - sizeof(ChunkHdr));
  sqCap_ = cfg_.qpDepth;
  for (const DevSide& d : devs_)
    if (d.dev->maxQpWr() > 0) sqCap_ = std::min(sqCap_, d.dev->maxQpWr());
  for (DevSide& d : devs_) openDevSide(d, keys);

  std::random_device rd;
  for (int q = 0; q < cfg_.nQps; ++q) {
    qps_.push_back(createQp(q));
    psn_.push_back(rd() & 0xffffff);
  }
  sqUsed_.assign(cfg_.nQps, 0);
  arrived_.assign(cfg_.nSlots, 0);
  stats_.chunksPerQp.assign(cfg_.nQps, 0);
}

IbEndpoint::~IbEndpoint() {
  const IbvApi& api = *api_;
  if (cipher_) cipher_->quiesce();  // its workers may be reading user buffers or slots
  for (ibv_qp* qp : qps_) api.destroy_qp(qp);
  pend_.clear();
  dropRendezvous();
  for (DevSide& d : devs_) closeDevSide(d);
  cipher_.reset();
  std::free(cts_);
  std::free(slots_);
  std::free(ctrl_);
}

IbConnInfo IbEndpoint::localInfo() const {
  IbConnInfo c{};
  const IbDevice& first = *devs_[0].dev;
  std::memcpy(c.gid, first.gid().raw, sizeof(c.gid));
  c.lid = first.lid();
  c.mtu = static_cast<uint8_t>(first.mtu());
  c.nQps = static_cast<uint8_t>(cfg_.nQps);
  c.nSlots = cfg_.nSlots;
  c.slotStride = slotStride_;
  c.slotsAddr = reinterpret_cast<uintptr_t>(slots_);
  c.creditAddr = reinterpret_cast<uintptr_t>(&ctrl_->credit);
  c.ctsAddr = reinterpret_cast<uintptr_t>(cts_);
  c.zcopyBytes = static_cast<uint32_t>(zBytes_);
  for (int q = 0; q < cfg_.nQps; ++q) {
    const IbDevice::Port& p = portOf(q);
    const DevSide& d = devs_[devOf(q)];
    c.qpn[q] = qps_[q]->qp_num;
    c.psn[q] = psn_[q];
    std::memcpy(c.qpGid[q], p.gid.raw, sizeof(c.qpGid[q]));
    c.qpLid[q] = p.lid;
    c.mtu = std::min(c.mtu, static_cast<uint8_t>(p.mtu));
    c.qpSlotsRkey[q] = d.slotsMr->rkey;
    c.qpCreditRkey[q] = d.ctrlMr->rkey;
    c.qpCtsRkey[q] = d.ctsMr->rkey;
    c.qpDev[q] = static_cast<uint8_t>(devOf(q));
  }
  return c;
}

void IbEndpoint::connect(const IbConnInfo& r, std::unique_ptr<Endpoint> side) {
  const IbvApi& api = *api_;
  if (r.nQps != cfg_.nQps || r.nSlots != cfg_.nSlots || r.slotStride != slotStride_)
    throw InvalidUsage(strprintf(
        "rank %d set up its verbs connection differently (%d QPs, %u slots of %llu bytes; "
        "this rank: %d, %u, %zu): use the same GDR_IB_* settings on every rank",
        cfg_.peerRank, r.nQps, r.nSlots, (unsigned long long)r.slotStride, cfg_.nQps, cfg_.nSlots,
        slotStride_));
  if (r.zcopyBytes != zBytes_)
    throw InvalidUsage(strprintf(
        "rank %d sends zero-copy from %u bytes, this rank from %zu (0: never): use the same "
        "GDR_IB_ZCOPY_BYTES and GDR_ENCRYPT on every rank",
        cfg_.peerRank, r.zcopyBytes, zBytes_));
  for (int q = 0; q < cfg_.nQps; ++q)
    if (r.qpDev[q] >= kMaxIbDevices)
      throw RemoteError(strprintf("rank %d's QP %d is on device %u of at most %d", cfg_.peerRank,
                                  q + 1, r.qpDev[q], kMaxIbDevices));
  remote_ = r;
  side_ = std::move(side);
  for (int q = 0; q < cfg_.nQps; ++q) {
    const IbDevice& dev = deviceOf(q);
    const IbDevice::Port& port = portOf(q);
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = std::min(port.mtu, static_cast<ibv_mtu>(r.mtu));
    a.dest_qp_num = r.qpn[q];
    a.rq_psn = r.psn[q];
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 12;
    a.ah_attr.port_num = port.num;
    a.ah_attr.sl = static_cast<uint8_t>(cfg_.serviceLevel);
    if (dev.roce()) {
      a.ah_attr.is_global = 1;
      std::memcpy(a.ah_attr.grh.dgid.raw, r.qpGid[q], 16);
      a.ah_attr.grh.sgid_index = static_cast<uint8_t>(port.gidIndex);
      a.ah_attr.grh.hop_limit = 255;
      a.ah_attr.grh.traffic_class = static_cast<uint8_t>(cfg_.trafficClass);
    } else {
      a.ah_attr.dlid = r.qpLid[q];
    }
    if (int e = api.modify_qp(qps_[q], &a,
                              IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
      throw SystemError(strprintf("ibv_modify_qp(RTR) of QP %u to rank %d (remote QP %u) on %s",
                                  qps_[q]->qp_num, cfg_.peerRank, r.qpn[q], dev.name().c_str()),
                        e);
    ibv_qp_attr s{};
    s.qp_state = IBV_QPS_RTS;
    s.sq_psn = psn_[q];
    s.timeout = static_cast<uint8_t>(cfg_.timeout);
    s.retry_cnt = static_cast<uint8_t>(cfg_.retryCnt);
    s.rnr_retry = 7;
    s.max_rd_atomic = 1;
    if (int e = api.modify_qp(qps_[q], &s,
                              IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
      throw SystemError(
          strprintf("ibv_modify_qp(RTS) of QP %u to rank %d", qps_[q]->qp_num, cfg_.peerRank), e);
    // Enough landing receives for every slot, every zero-copy chunk in
    // flight and every clear-to-send on any one QP, plus slack.
    for (uint32_t i = 0; i < cfg_.nSlots + 2 + kZWindow + kCtsSlots; ++i) postRecvWr(q);
  }
  connected_ = true;
  GDR_INFO(
      kNet,
      "rank %d -> rank %d: ib on %s, %d QP(s) over %zu port(s) (first %u -> %u), %u slots of %zu "
      "bytes, chunk %s %zu%s, zero-copy %s, cc %s",
      cfg_.myRank, cfg_.peerRank, devNames_.c_str(), cfg_.nQps,
      std::min(rails_.size(), static_cast<size_t>(cfg_.nQps)), qps_[0]->qp_num, r.qpn[0],
      cfg_.nSlots, slotStride_ - sizeof(ChunkHdr), policy_.adaptive() ? "adaptive from" : "fixed",
      policy_.chunk(), cipher_ ? ", AES-256-GCM" : "",
      zBytes_ ? strprintf("from %zu bytes", zBytes_).c_str() : "off", ccModeName(cfg_.cc.mode));
}

void IbEndpoint::postRecvWr(int q) {
  ibv_recv_wr wr{};
  ibv_recv_wr* bad = nullptr;
  wr.wr_id = wrId(kWrRecv, static_cast<uint64_t>(q));
  wr.num_sge = 0;  // write-with-imm lands in the slot; the receive carries only the immediate
  if (int e = ibv_post_recv(qps_[q], &wr, &bad)) failPost("ibv_post_recv", q, e);
}

int IbEndpoint::qpIndex(uint32_t qpn, int d) const {
  for (size_t q = 0; q < qps_.size(); ++q)
    if (qps_[q]->qp_num == qpn && devOf(static_cast<int>(q)) == d) return static_cast<int>(q);
  return -1;
}

double IbEndpoint::nowUs() const {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0_).count();
}

void IbEndpoint::failPost(const char* what, int q, int err) {
  throw RemoteError(strprintf("%s on QP %u (%d of %d) to rank %d failed on %s: %s", what,
                              qps_[q]->qp_num, q + 1, cfg_.nQps, cfg_.peerRank,
                              deviceOf(q).name().c_str(), std::strerror(err)));
}

void IbEndpoint::failWc(const ibv_wc& wc, int d) {
  int q = qpIndex(wc.qp_num, d);
  const IbDevice& dev = *devs_[d].dev;
  // Another process's or QP's events may be drained here too: fine, this is
  // the failure path and the text is only more complete for it.
  std::string events = dev.drainAsyncEvents();
  throw RemoteError(strprintf(
      "RDMA to rank %d failed: %s on QP %u (%d of %d, device %s) completed with status %s (%d, "
      "vendor error %#x)%s%s%s",
      cfg_.peerRank, wcOpName(wc), wc.qp_num, q + 1, cfg_.nQps, dev.name().c_str(),
      api_->wc_status_str(wc.status), static_cast<int>(wc.status), wc.vendor_err,
      wc.status == IBV_WC_RETRY_EXC_ERR ? ": the peer stopped answering (did it exit or die?)"
      : wc.status == IBV_WC_WR_FLUSH_ERR
          ? ": the QP was already in error (a failure of the peer's side of it, "
            "or a transport error such as a rejected retransmission)"
          : "",
      events.empty() ? "" : "; device events: ", events.c_str()));
}

bool IbEndpoint::dstOnDevice(const RecvOp* op) {
  if (op != kindOp_ || op->dst != kindDst_) {
    kindOp_ = op;
    kindDst_ = op->dst;
    kindDev_ = gpuSendsDirect() && memoryKind(op->dst) == MemKind::Device;
  }
  return kindDev_;
}

void IbEndpoint::postSend(SendOp* op) {
  // Under GDR_ENCRYPT the CPU seals the payload, which it cannot read in
  // device memory: such a send is refused like one without GPUDirect, and
  // the caller stages it. A payload the GPU sealed already goes as it is.
  if (cipher_ && op->bytes && !(op->sig.flags & kSigPreSealed) &&
      memoryKind(op->data) == MemKind::Device)
    throw NotSupported(strprintf(
        "GDR_ENCRYPT=1: a device send buffer to rank %d is sealed on the CPU, so it must be "
        "staged through host memory (only pre-sealed payloads go from the GPU directly)",
        cfg_.peerRank));
  sends_.push_back(op);
}

bool IbEndpoint::progress() {
  if (!connected_) return false;
  bool moved = pollCq();
  if (zBytes_ && scanned_ < recvs_.size()) moved |= issueCts();
  if (!recvs_.empty()) moved |= consumeChunks();
  if (!sends_.empty() || !resend_.empty()) moved |= postChunks();
  if (!zLost_.empty() || !zResend_.empty()) moved |= zRecover();
  if (creditPosted_ != rseq_ || zCreditPosted_ != zLanded_ || zDoneCredited_ != rDone_) postCredit();
  return moved;
}

// GDR_ENCRYPT: hands out the chunks of the queued sends, in sequence order,
// to be sealed while the ring has room; postChunks() posts them once sealed.
void IbEndpoint::sealAhead() {
  while (sealIdx_ < sends_.size() && cipher_->canSeal(sealSeq_)) {
    const SendOp& op = *sends_[sealIdx_];
    const size_t len = std::min(cc_->chunk(policy_, ccPathOf(sealSeq_)), op.bytes - sealOff_);
    ChunkHdr h{};
    fillHdr(h, op, sealOff_, len);
    cipher_->seal(sealSeq_++, h, static_cast<const char*>(op.data) + sealOff_,
                  op.sig.flags & kSigPreSealed);
    sealOff_ += len;
    if (sealOff_ == op.bytes) {
      ++sealIdx_;
      sealOff_ = 0;
    }
  }
}

// Placement is free for eager chunks (the receiver consumes slots by the
// sequence in the immediate, whichever QP brought it), so with several
// devices a chunk whose turn falls on a device with a full window goes on
// another device's QP. Encrypted chunks keep their turn: they were sized for
// it when sealed.
int IbEndpoint::placeChunk(const SendOp& op) {
  const int q0 = pickQp(sseq_);
  if (devs_.size() < 2 || cipher_) return q0;
  const int q = lanes_.pickWithRoom(static_cast<uint64_t>(cfg_.peerRank), sseq_, [&](int c) {
    const size_t len = std::min(cc_->chunk(policy_, devOf(c)), op.bytes - op.sent);
    return sqUsed_[c] < sqCap_ && cc_->mayPost(devOf(c), len);
  });
  if (q != q0) ++stats_.chunksPlacedByRoom;
  return q;
}

bool IbEndpoint::postChunks() {
  bool moved = false;
  if (cipher_) sealAhead();
  const uint64_t consumed = ctrl_->credit;  // written by the peer's credit RDMA writes
  std::atomic_thread_fence(std::memory_order_acquire);
  if (!resend_.empty()) moved |= resendChunks(consumed);
  while (!sends_.empty() && !resend_.holdsNew()) {
    SendOp* op = sends_.front();
    if (op->sent == 0 && (pend_.empty() || pend_.back().op != op)) {
      PendingSend p{op, nextPendId_++};
      // Encrypted payloads leave from the sealing ring, pre-sealed ones from
      // the caller's buffer.
      if (op->bytes && (!cipher_ || (op->sig.flags & kSigPreSealed))) acquireSendRegs(p);
      p.rndv = zBytes_ && op->bytes >= zBytes_;
      pend_.push_back(p);
    }
    PendingSend& p = pend_.back();
    if (p.rndv && !p.viaSlots) {
      const Rndv r = sendRendezvous(p, consumed);
      if (r == Rndv::Wait) break;
      moved = true;
      if (r == Rndv::Done) continue;
    }
    const uint64_t inWindow = sseq_ - consumed;
    if (inWindow >= cfg_.nSlots || dataInFlight_ >= cfg_.maxWr) break;  // wait for credits
    const int q = placeChunk(*op);
    if (sqUsed_[q] >= sqCap_) break;
    const uint32_t slot = static_cast<uint32_t>(sseq_ % cfg_.nSlots);
    ibv_sge sge[2];
    int nsge = 1;
    size_t len;
    bool payloadFromUser = true;
    if (!cipher_) {
      len = std::min(cc_->chunk(policy_, devOf(q)), op->bytes - op->sent);
      ChunkHdr& h = ctrl_->hdrs[slot];
      fillHdr(h, *op, op->sent, len);
      sge[0] = {reinterpret_cast<uintptr_t>(&h), sizeof(ChunkHdr), sideOf(q).ctrlMr->lkey};
    } else {
      ChunkHdr* h = sseq_ < sealSeq_ ? cipher_->sealed(sseq_) : nullptr;
      if (!h) break;  // not handed out (ring full) or still being sealed
      len = h->len;
      payloadFromUser = h->flags == kChunkAuthOnly;
      sge[0] = {reinterpret_cast<uintptr_t>(h),
                static_cast<uint32_t>(sizeof(ChunkHdr) + (payloadFromUser ? 0 : len)),
                sideOf(q).ringMr->lkey};
    }
    if (!cc_->mayPost(devOf(q), len)) break;  // the congestion window of q's device is full
    if (len && payloadFromUser)
      sge[nsge++] = {reinterpret_cast<uintptr_t>(op->data) + op->sent, static_cast<uint32_t>(len),
                     p.reg[devOf(q)]->reg.lkey};
    postSlotWrite(q, sge, nsge, len, p, inWindow);
    op->sent += len;
    moved = true;
    if (op->sent == op->bytes) {
      p.allPosted = true;
      sends_.pop_front();
      if (cipher_) --sealIdx_;
    }
  }
  return moved;
}

// One chunk (header in sge[0], payload after it) into the peer's next slot.
void IbEndpoint::postSlotWrite(int q, ibv_sge* sge, int nsge, size_t len, PendingSend& p,
                               uint64_t inWindow) {
  writeSlot(q, sge, nsge, sseq_);
  const int d = devOf(q);
  track_[sseq_] =
      ChunkTrack{p.id, len, static_cast<double>(inWindow + 1) / cfg_.nSlots, nowUs(), d};
  cc_->sent(d, len);
  cc_->noteChunk(d, len);
  ++stats_.chunksSent;
  ++p.wrsLeft;
  ++sseq_;
}

void IbEndpoint::writeSlot(int q, ibv_sge* sge, int nsge, uint64_t seq) {
  const uint32_t slot = static_cast<uint32_t>(seq % cfg_.nSlots);
  ibv_send_wr wr{};
  ibv_send_wr* bad = nullptr;
  wr.wr_id = wrId(kWrData, seq);
  wr.sg_list = sge;
  wr.num_sge = nsge;
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.imm_data = htonl(static_cast<uint32_t>(seq) & kImmSeqMask);
  wr.wr.rdma.remote_addr = remote_.slotsAddr + slot * remote_.slotStride;
  wr.wr.rdma.rkey = remote_.qpSlotsRkey[q];
  if (int e = ibv_post_send(qps_[q], &wr, &bad))
    failPost("ibv_post_send (RDMA WRITE WITH IMM)", q, e);
  ++sqUsed_[q];
  ++dataInFlight_;
  ++stats_.chunksPerQp[q];
}

ChunkHdr& IbEndpoint::slotHdr(uint64_t seq) { return ctrl_->hdrs[seq % cfg_.nSlots]; }

uint64_t IbEndpoint::peerLanded() const { return ctrl_->zcredit; }
uint64_t IbEndpoint::peerDone() const { return ctrl_->zdone; }
uint64_t IbEndpoint::peerConsumed() const { return ctrl_->credit; }

void IbEndpoint::postCredit() {
  const int q = lanes_.control();
  if (creditsInFlight_ >= kMaxCreditsInFlight || sqUsed_[q] >= sqCap_) return;
  // Each in-flight credit write reads its own source word, so a later update
  // never changes the bytes of one still being sent.
  uint64_t* src = ctrl_->creditSrc[creditSlot_++ % kCreditSources];
  src[0] = rseq_;
  src[1] = zLanded_;
  src[2] = rDone_;
  ibv_sge sge{reinterpret_cast<uintptr_t>(src), 3 * sizeof(uint64_t), sideOf(q).ctrlMr->lkey};
  ibv_send_wr wr{};
  ibv_send_wr* bad = nullptr;
  wr.wr_id = wrId(kWrCredit, rseq_);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = remote_.creditAddr;
  wr.wr.rdma.rkey = remote_.qpCreditRkey[q];
  if (int e = ibv_post_send(qps_[q], &wr, &bad))
    failPost("ibv_post_send (credit RDMA WRITE)", q, e);
  ++sqUsed_[q];
  ++creditsInFlight_;
  ++stats_.creditWrites;
  creditPosted_ = rseq_;
  zCreditPosted_ = zLanded_;
  zDoneCredited_ = rDone_;
}

void IbEndpoint::checkPeer() {
  if (connected_) pollCq();  // surfaces error completions even while nothing is posted
  // The side channel closing means the peer's process is gone, which fails
  // only operations that involve it: a peer that finished and destroyed its
  // communicator must not fail this rank's wait on a third rank (destroy is
  // not collective). Its abort notices still reach every rank through the
  // ranks that were waiting on it.
  const bool owed = !sends_.empty() || !recvs_.empty() || !pend_.empty();
  if (!side_) return;
  if (owed) {
    if (sideError_) std::rethrow_exception(std::exchange(sideError_, nullptr));
    side_->checkPeer();  // an abort notice waiting there says why
    takePeerNotices();
    checkPorts();
  } else if (!sideError_) {
    // Nothing owed, but the peer may still be waiting on this side: a
    // question about zero-copy writes of a receive completed here, or a QP
    // it took down that this side's credit writes still use. What the side
    // connection says of the peer's end (an abort, a close) waits for a
    // wait that involves the peer.
    try {
      side_->checkPeer();
    } catch (const Error&) {
      sideError_ = std::current_exception();
    }
    takePeerNotices();
  }
  // A killed peer's NIC side says nothing (a real NIC tells only a sender,
  // after GDR_IB_TIMEOUT x GDR_IB_RETRY_CNT); its closed connection does.
  if (liveness_.gone(side_->pollFd(), owed, std::chrono::steady_clock::now()))
    throw RemoteError(strprintf("rank %d closed its connection (did it exit or die?)", cfg_.peerRank));
}

void IbEndpoint::sendAbort(gdrResult_t code, const std::string& reason) noexcept {
  if (side_) side_->sendAbort(code, reason);
}

void IbEndpoint::reset() noexcept {
  if (cipher_) {
    cipher_->dropFrom(sseq_);  // waits for the sealing jobs still reading the sends' buffers
    cipher_->quiesce();
    sealSeq_ = sseq_;
    sealIdx_ = sealOff_ = 0;
  }
  sends_.clear();
  recvs_.clear();
  for (auto& p : pend_) releaseRegs(p.reg, false);
  pend_.clear();
  track_.clear();
  resend_.clear();
  zLost_.clear();
  zResend_.clear();
  eOwed_.clear();
  dropRendezvous();
  cc_->dropInFlight();
  if (side_) side_->reset();
}

IbStats IbEndpoint::stats() const {
  IbStats s = stats_;
  s.chunkBytes = cc_->chunk(policy_, ccPathOf(sseq_));
  s.chunkChanges = policy_.changes();
  // Every device's cache sees the same acquires: the first one's counts are
  // per buffer, as with one device.
  s.reg = devs_[0].regs->stats();
  if (devs_[0].rregs) s.recvReg = devs_[0].rregs->stats();
  return s;
}

}  // namespace gdr::transport::ib

// The rendezvous half of the verbs endpoint (ib_endpoint.h says how the
// protocol goes): clear-to-sends out of the receiver, announces and
// zero-copy writes out of the sender, and the receiver's bookkeeping of
// landed chunks.
#include <arpa/inet.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <iterator>

#include "core/error.h"
#include "core/log.h"
#include "transport/ib/ib_endpoint.h"
#include "transport/ib/ib_wr_id.h"

namespace gdr::transport::ib {

// Receiver: a clear-to-send for every posted receive at or above the
// threshold, in posting order, at most kCtsSlots of them unfinished (the
// sender's mailbox slot of one is free again once its message landed).
bool IbEndpoint::issueCts() {
  bool moved = false;
  while (scanned_ < recvs_.size()) {
    RecvOp* op = recvs_[scanned_];
    if (op->bytes < zBytes_) {
      ++scanned_;
      continue;
    }
    const int q = lanes_.control();
    if (rTicket_ - rDone_ >= kCtsSlots || sqUsed_[q] >= sqCap_) break;
    ZRecv z{op, rTicket_};
    z.direct = op->fn == nullptr;
    if (z.direct) {
      try {
        // On every device: the writes of its chunks go over all of them.
        for (size_t d = 0; d < devs_.size(); ++d)
          z.reg[d] = devs_[d].rregs->acquire(op->dst, op->bytes);
      } catch (const NotSupported& e) {  // device memory without GPUDirect: through the slots
        releaseRegs(z.reg, true);
        std::fill(std::begin(z.reg), std::end(z.reg), nullptr);
        GDR_INFO(kNet, "rank %d: receive of %zu bytes from rank %d goes through the slots: %s",
                 cfg_.myRank, op->bytes, cfg_.peerRank, e.what());
        z.direct = false;
      }
    }
    ZcopyCts& c = cts_[kCtsSlots + rTicket_ % kCtsSlots];  // this side's source copy
    c = ZcopyCts{};
    c.ticket = rTicket_;
    c.bytes = op->bytes;
    c.sig = op->sig;
    c.direct = z.direct;
    if (z.direct) {
      // At most 2^kZChunkBits chunks: the immediate names each one.
      size_t chunk = cfg_.zcopyChunk;
      const size_t least = (op->bytes >> kZChunkBits) + 1;
      if (chunk < least) chunk = (least + 4095) / 4096 * 4096;
      c.addr = reinterpret_cast<uintptr_t>(op->dst);
      for (size_t d = 0; d < devs_.size(); ++d) c.rkey[d] = z.reg[d]->reg.rkey;
      c.chunk = static_cast<uint32_t>(chunk);
      z.chunks = (op->bytes + chunk - 1) / chunk;
      landedBits(rTicket_).assign((z.chunks + 63) / 64, 0);
    }
    ibv_sge sge{reinterpret_cast<uintptr_t>(&c), sizeof(ZcopyCts), sideOf(q).ctsMr->lkey};
    ibv_send_wr wr{};
    ibv_send_wr* bad = nullptr;
    wr.wr_id = wrId(kWrCts, rTicket_);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(kImmCts | (static_cast<uint32_t>(rTicket_) & ~kImmKindMask));
    wr.wr.rdma.remote_addr = remote_.ctsAddr + (rTicket_ % kCtsSlots) * sizeof(ZcopyCts);
    wr.wr.rdma.rkey = remote_.qpCtsRkey[q] ^ keyXor_;
    if (int e = ibv_post_send(qps_[q], &wr, &bad)) {
      releaseRegs(z.reg, true);
      failPost("ibv_post_send (clear-to-send RDMA WRITE WITH IMM)", q, e);
    }
    ++sqUsed_[q];
    ++stats_.ctsWrites;
    zrecvs_.push_back(z);
    ++rTicket_;
    ++scanned_;
    moved = true;
  }
  return moved;
}

// Sender: the clear-to-send for the ticket in the immediate is in its
// mailbox slot. In order over the control QP; one whose write failed comes
// again over the side connection (onCtsCopy), so a later one can come
// first, and the first write can still have landed (a copy: ignored).
void IbEndpoint::onCts(uint32_t imm) {
  const uint64_t t = ctsSeen_.widen(imm & ~kImmKindMask, 30);
  switch (ctsSeen_.mark(t)) {
    case CtsSeen::kNew:
      return;
    case CtsSeen::kAgain:
      ++stats_.zcopyDuplicates;
      return;
    case CtsSeen::kOutside:
      throw RemoteError(strprintf("rank %d sent clear-to-send %llu, expected %llu..%llu",
                                  cfg_.peerRank, (unsigned long long)t,
                                  (unsigned long long)ctsSeen_.seen(),
                                  (unsigned long long)(ctsSeen_.seen() + kCtsSlots - 1)));
  }
}

// Receiver: one zero-copy chunk landed in the buffer of the receive whose
// ticket the immediate names.
void IbEndpoint::onZcopyLanded(uint32_t imm, uint32_t qpn) {
  const uint32_t t = (imm >> kZChunkBits) & kImmZTicketMask;
  const uint32_t idx = imm & kImmZChunkMask;
  for (ZRecv& z : zrecvs_) {
    if ((z.ticket & kImmZTicketMask) != t || !z.direct) continue;
    if (idx >= z.chunks)
      throw RemoteError(strprintf(
          "rank %d wrote zero-copy chunk %u of a %llu-chunk message (ticket %llu) on QP %u",
          cfg_.peerRank, idx, (unsigned long long)z.chunks, (unsigned long long)z.ticket, qpn));
    // A copy owed after a failure (ib_zfailover.cc) is in: the receive no
    // longer waits for it, whether or not the first write landed too.
    auto owed = std::find(z.owed.begin(), z.owed.end(), idx);
    if (owed != z.owed.end()) z.owed.erase(owed);
    uint64_t& word = landedBits(z.ticket)[idx / 64];
    const uint64_t bit = 1ull << (idx % 64);
    if (word & bit) {  // landed before: the same bytes again
      ++stats_.zcopyDuplicates;
      return;
    }
    word |= bit;
    ++z.landed;
    ++zLanded_;
    return;
  }
  throw RemoteError(strprintf(
      "rank %d wrote a zero-copy chunk (ticket %u, chunk %u) on QP %u for no receive of this rank",
      cfg_.peerRank, t, idx, qpn));
}

// Sender, the head of sends_ at or above the threshold: announce it, wait
// for its clear-to-send, then write it out. Slots: go on like an eager
// message (the receiver asked for it).
IbEndpoint::Rndv IbEndpoint::sendRendezvous(PendingSend& p, uint64_t consumed) {
  SendOp* op = p.op;
  if (!p.announced) {
    const uint64_t inWindow = sseq_ - consumed;
    if (inWindow >= cfg_.nSlots || dataInFlight_ >= cfg_.maxWr) return Rndv::Wait;
    const int q = pickQp(sseq_);
    if (sqUsed_[q] >= sqCap_) return Rndv::Wait;
    ChunkHdr& h = slotHdr(sseq_);
    h = ChunkHdr{};
    h.magic = kChunkMagic;
    h.version = kChunkVersion;
    h.flags = kChunkRendezvous;
    h.sig = op->sig;
    h.msgBytes = op->bytes;
    ibv_sge sge{reinterpret_cast<uintptr_t>(&h), sizeof(ChunkHdr), sideOf(q).ctrlMr->lkey};
    postSlotWrite(q, &sge, 1, 0, p, inWindow);
    p.announced = true;
    p.ticket = sTicket_++;
  }
  if (p.cts.bytes == 0) {  // not read yet (a clear-to-send is never for 0 bytes)
    if (!ctsSeen_.has(p.ticket)) return Rndv::Wait;
    std::atomic_thread_fence(std::memory_order_acquire);
    p.cts = cts_[p.ticket % kCtsSlots];
    const ZcopyCts& c = p.cts;
    if (c.ticket != p.ticket)
      throw RemoteError(strprintf("rank %d's clear-to-send is for message %llu, expected %llu",
                                  cfg_.peerRank, (unsigned long long)c.ticket,
                                  (unsigned long long)p.ticket));
    if (c.sig != op->sig)
      throw InvalidUsage(
          strprintf("mismatched operations: rank %d expects %s but this rank sends %s",
                    cfg_.peerRank, describe(c.sig).c_str(), describe(op->sig).c_str()));
    if (c.bytes != op->bytes || (c.direct && c.chunk == 0))
      throw InvalidUsage(strprintf(
          "mismatched message size: rank %d expects %llu bytes for %s, this rank sends %zu",
          cfg_.peerRank, (unsigned long long)c.bytes, describe(op->sig).c_str(), op->bytes));
    if (!c.direct) {
      p.viaSlots = true;
      return Rndv::Slots;
    }
  }
  const ZcopyCts& c = p.cts;
  const uint64_t landed = peerLanded();  // the peer's count, written with its credit word
  std::atomic_thread_fence(std::memory_order_acquire);
  while (op->sent < op->bytes) {
    if (zPosted_ - landed >= kZWindow || dataInFlight_ >= cfg_.maxWr) return Rndv::Wait;
    const int q = pickQp(zPosted_ | 1ull << 63);
    if (sqUsed_[q] >= sqCap_) return Rndv::Wait;
    const uint32_t idx = static_cast<uint32_t>(op->sent / c.chunk);
    op->sent += postZcopyWrite(q, p, idx, "ibv_post_send (zero-copy RDMA WRITE WITH IMM)");
    ++stats_.zcopyWrites;
    ++p.wrsLeft;
    ++zPosted_;
  }
  p.allPosted = true;
  ++stats_.zcopySent;
  sends_.pop_front();
  return Rndv::Done;
}

// Chunk idx of p's message into the receiver's buffer, on QP q: its bytes.
size_t IbEndpoint::postZcopyWrite(int q, PendingSend& p, uint32_t idx, const char* what) {
  const ZcopyCts& c = p.cts;
  const size_t off = static_cast<size_t>(idx) * c.chunk;
  const size_t len = std::min<size_t>(c.chunk, p.op->bytes - off);
  ibv_sge sge{reinterpret_cast<uintptr_t>(p.op->data) + off, static_cast<uint32_t>(len),
              p.reg[devOf(q)]->reg.lkey};
  ibv_send_wr wr{};
  ibv_send_wr* bad = nullptr;
  wr.wr_id = wrId(kWrZData, p.id << kZChunkBits | idx);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.imm_data =
      htonl(kImmZcopy | (static_cast<uint32_t>(p.ticket & kImmZTicketMask) << kZChunkBits) | idx);
  wr.wr.rdma.remote_addr = c.addr + off;
  // The key of the receiver's device that this QP's peer end is on.
  wr.wr.rdma.rkey = c.rkey[remote_.qpDev[q]] ^ keyXor_;
  if (int e = ibv_post_send(qps_[q], &wr, &bad)) failPost(what, q, e);
  ++sqUsed_[q];
  ++dataInFlight_;
  ++stats_.chunksPerQp[q];
  return len;
}

// Receiver, the head of recvs_ at or above the threshold: consume its
// announce (checking the operation and size), then complete it once every
// chunk landed. Slots: its payload follows through the slots.
IbEndpoint::Rndv IbEndpoint::recvRendezvous(RecvOp* op) {
  if (zrecvs_.empty() || zrecvs_.front().op != op) return Rndv::Wait;  // no clear-to-send yet
  ZRecv& z = zrecvs_.front();
  if (!z.announced) {
    const uint32_t slot = static_cast<uint32_t>(rseq_ % cfg_.nSlots);
    if (!arrived_[slot]) return Rndv::Wait;
    const ChunkHdr* h = reinterpret_cast<const ChunkHdr*>(slots_ + slot * slotStride_);
    checkChunk(h, op, slot);
    if (!(h->flags & kChunkRendezvous) || h->len)
      throw RemoteError(strprintf(
          "rank %d sent %s (%zu bytes) eagerly; this rank expected it by rendezvous (from %zu "
          "bytes on)",
          cfg_.peerRank, describe(op->sig).c_str(), op->bytes, zBytes_));
    arrived_[slot] = 0;
    ++rseq_;
    ++stats_.chunksReceived;
    z.announced = true;
  }
  if (!z.direct) return Rndv::Slots;
  if (z.landed < z.chunks || !z.owed.empty()) return Rndv::Wait;
  // Every chunk's immediate arrived, and each came after its data.
  std::atomic_thread_fence(std::memory_order_acquire);
  releaseRegs(z.reg, true);
  op->received = op->bytes;
  op->complete = true;
  zrecvs_.pop_front();
  ++rDone_;
  ++stats_.zcopyReceived;
  popRecv();
  return Rndv::Done;
}

void IbEndpoint::dropRendezvous() noexcept {
  for (ZRecv& z : zrecvs_) releaseRegs(z.reg, true);
  zrecvs_.clear();
  rDone_ = rTicket_;  // their mailbox slots are not waited for again
  scanned_ = 0;
}

}  // namespace gdr::transport::ib

// The verbs endpoint's receive side (ib_endpoint.cc has the rest): the
// chunks the peer wrote into this rank's slots are checked against the
// receive they belong to, then copied, reduced or opened out of the slot.
#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "core/log.h"
#include "transport/ib/gpu_copy.h"
#include "transport/ib/ib_endpoint.h"

namespace gdr::transport::ib {

void IbEndpoint::checkChunk(const ChunkHdr* h, const RecvOp* op, uint32_t slot) const {
  if (h->magic != kChunkMagic || h->version != kChunkVersion ||
      h->len > slotStride_ - sizeof(ChunkHdr))
    throw RemoteError(strprintf(
        "rank %d wrote a malformed chunk header (magic %#x, version %u, %u bytes) into slot %u",
        cfg_.peerRank, h->magic, h->version, h->len, slot));
  if (h->sig != op->sig)
    throw InvalidUsage(strprintf("mismatched operations: rank %d sent %s but this rank expects %s",
                                 cfg_.peerRank, describe(h->sig).c_str(),
                                 describe(op->sig).c_str()));
  if (h->msgBytes != op->bytes || h->offset != op->received || h->len > op->bytes - op->received)
    throw InvalidUsage(strprintf(
        "mismatched message size: rank %d sent %llu bytes for %s, this rank expects %zu",
        cfg_.peerRank, (unsigned long long)h->msgBytes, describe(op->sig).c_str(), op->bytes));
}

void IbEndpoint::popRecv() {
  recvs_.pop_front();
  if (scanned_) --scanned_;
}

bool IbEndpoint::consumeChunks() {
  bool moved = false;
  while (!recvs_.empty()) {
    uint32_t slot = static_cast<uint32_t>(rseq_ % cfg_.nSlots);
    RecvOp* op = recvs_.front();
    const bool rndv = zBytes_ && op->bytes >= zBytes_;
    if (!rndv && !arrived_[slot]) break;
    std::atomic_thread_fence(std::memory_order_acquire);
    if (rndv) {
      const uint64_t before = rseq_;
      const Rndv r = recvRendezvous(op);
      moved |= rseq_ != before || r == Rndv::Done;
      if (r == Rndv::Wait) break;
      if (r == Rndv::Done) continue;
      slot = static_cast<uint32_t>(rseq_ % cfg_.nSlots);  // the payload follows through the slots
      if (!arrived_[slot]) break;
      std::atomic_thread_fence(std::memory_order_acquire);
    }
    const char* base = slots_ + slot * slotStride_;
    const ChunkHdr* h = reinterpret_cast<const ChunkHdr*>(base);
    checkChunk(h, op, slot);
    // Nothing of a chunk is believed or delivered before it verified.
    if (cipher_) {
      const ChunkCipher::Opened o = cipher_->open(rseq_, slot, slots_ + slot * slotStride_);
      if (o == ChunkCipher::kOpenBusy) break;
      if (o == ChunkCipher::kOpenFailed) failAuth(rseq_);
    }
    const char* payload = base + sizeof(ChunkHdr);
    char* dst = static_cast<char*>(op->dst) + op->received;
    if (op->fn) {
      if (h->len % op->elemBytes)
        throw InternalError(
            strprintf("chunk of %u bytes from rank %d splits an element of %zu bytes", h->len,
                      cfg_.peerRank, op->elemBytes));
      op->fn(dst, static_cast<const char*>(op->reduceSrc) + op->received, payload,
             h->len / op->elemBytes);
    } else if (h->len && dstOnDevice(op)) {
      gpuCopy(dst, payload, h->len, "an eager chunk into a device receive buffer");
      stats_.deviceCopyBytes += h->len;
    } else if (h->len) {
      std::memcpy(dst, payload, h->len);
      stats_.cpuCopyBytes += h->len;
    }
    op->received += h->len;
    arrived_[slot] = 0;
    ++rseq_;
    ++stats_.chunksReceived;
    moved = true;
    if (op->received == op->bytes) {
      if (!zrecvs_.empty() && zrecvs_.front().op == op) {  // a reduction's rendezvous, via slots
        zrecvs_.pop_front();
        ++rDone_;
        ++stats_.zcopyReceived;
      }
      op->complete = true;
      popRecv();
    }
  }
  return moved;
}

void IbEndpoint::failAuth(uint64_t seq) {
  GDR_WARN(kNet, "rank %d: verbs chunk %llu from rank %d failed authentication", cfg_.myRank,
           (unsigned long long)seq, cfg_.peerRank);
  throw RemoteError(strprintf(
      "data from rank %d (verbs, received on %s) failed authentication (AES-GCM tag mismatch on "
      "chunk %llu: altered or corrupted in transit); it was not delivered",
      cfg_.peerRank, devNames_.c_str(), (unsigned long long)seq));
}

}  // namespace gdr::transport::ib

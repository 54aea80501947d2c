// Layout of a rank's shared-memory segment: a header, then one inbox FIFO per
// rank of the same host (the slot for the owner itself is unused). The sender
// writes a slot's header and payload, then publishes it by storing its
// sequence number last (release); the receiver polls that one word (acquire),
// consumes the payload, and returns the slot by advancing `tail`.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "transport/transport.h"

namespace gdr::transport::shm {

constexpr uint64_t kSegMagic = 0x6764725f73686d31ull;  // "gdr_shm1"

struct alignas(64) SegHeader {
  uint64_t magic;
  int32_t pid;
  int32_t rank;
  uint32_t nInbox;
  uint32_t nSlots;
  uint64_t slotBytes;
  uint64_t cmaProbe;  // a known value peers read with process_vm_readv to test CMA
  // Abort notices written by peers (first writer wins).
  std::atomic<int32_t> abortFrom;   // rank + 1 of the first rank that reported, 0: none
  std::atomic<int32_t> abortReady;  // 1 once abortCode/abortReason are written
  int32_t abortCode;
  char abortReason[512];
};

enum SlotFlags : uint32_t {
  kSlotCma = 1u << 0,     // `inl` holds the sender's address of the whole message
  kSlotInline = 1u << 1,  // the payload (at most kInlineBytes) sits in `inl`
};
constexpr uint32_t kInlineBytes = 16;

// One cache line: a message of up to 16 bytes travels inside it, so the
// receiver's one miss on the sequence word brings the data too. Pieces of a
// message arrive in order; the receiver counts offsets itself.
struct alignas(64) SlotHdr {
  std::atomic<uint64_t> seq;  // slot index + 1 once published
  OpSig sig;
  uint64_t msgBytes;  // whole message
  uint32_t len;       // payload bytes in this slot
  uint32_t flags;
  char inl[kInlineBytes];
};
static_assert(sizeof(SlotHdr) == 64, "slot header is one cache line");

// 128-byte alignment keeps a slot's header line and its first payload line
// in one adjacent-line-prefetch pair: a small message then costs the
// receiver one miss, not two.
struct alignas(128) InboxCtl {
  std::atomic<uint64_t> tail;  // slots consumed by the receiver
};

inline size_t slotStride(size_t slotBytes) { return (sizeof(SlotHdr) + slotBytes + 127) & ~size_t(127); }
inline size_t inboxBytes(size_t nSlots, size_t slotBytes) {
  return sizeof(InboxCtl) + nSlots * slotStride(slotBytes);
}
inline size_t segmentBytes(size_t nInbox, size_t nSlots, size_t slotBytes) {
  return ((sizeof(SegHeader) + 4095) & ~size_t(4095)) + nInbox * inboxBytes(nSlots, slotBytes);
}

// Accessors over a mapped segment (nSlots is a power of two).
struct SegView {
  char* base = nullptr;
  SegHeader* hdr() const { return reinterpret_cast<SegHeader*>(base); }
  InboxCtl* inbox(uint32_t i) const {
    size_t off = ((sizeof(SegHeader) + 4095) & ~size_t(4095)) +
                 i * inboxBytes(hdr()->nSlots, hdr()->slotBytes);
    return reinterpret_cast<InboxCtl*>(base + off);
  }
  SlotHdr* slot(uint32_t i, uint64_t idx) const {
    char* first = reinterpret_cast<char*>(inbox(i)) + sizeof(InboxCtl);
    return reinterpret_cast<SlotHdr*>(first + (idx & (hdr()->nSlots - 1)) * slotStride(hdr()->slotBytes));
  }
};

}  // namespace gdr::transport::shm

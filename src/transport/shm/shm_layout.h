// Layout of a rank's shared-memory segment: a header, then one inbox per rank
// of the same host (the one for the owner itself is unused). An inbox holds
// two FIFOs ("lanes"): a few slot-sized slots for everything else, and many
// compact slots for small messages, so that a sender of tiny messages (the
// root of a small broadcast, the leaves of a small reduce) can run hundreds
// of calls ahead of its receiver, as an eager protocol does, instead of
// stalling after a handful. The sender writes a slot's header and payload,
// then publishes it by storing its sequence number last (release); the
// receiver polls that one word (acquire), consumes the payload, and returns
// the slot by advancing the lane's `tail`.
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

// The small lane: messages of at most kSmallBytes travel whole in one of
// kSmallSlots compact slots (a header line and kSmallBytes of payload; the
// stride stays a multiple of 128 bytes, see InboxCtl).
constexpr uint32_t kSmallSlots = 256;
constexpr uint32_t kSmallBytes = 320;

// One cache line: a message of up to 16 bytes travels inside it, so the
// receiver's one miss on the sequence word brings the data too. Pieces of a
// message arrive in order; the receiver counts offsets itself.
struct alignas(64) SlotHdr {
  std::atomic<uint64_t> seq;  // slot index + 1 once published
  OpSig sig;
  uint64_t msgBytes;  // whole message
  uint32_t len;       // payload bytes in this slot
  uint16_t flags;
  // The message's number between this ordered pair, over both lanes (low
  // bits): a receiver waiting on one lane recognises its message at the head
  // of the other (the sender disagrees on the size) and reports a mismatch.
  uint16_t msgNo;
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
constexpr size_t kSmallStride = sizeof(SlotHdr) + kSmallBytes;
static_assert(kSmallStride % 128 == 0, "small slots keep the header/first-line pairing");
static_assert((kSmallSlots & (kSmallSlots - 1)) == 0, "a power of two");
// An inbox: the main lane's control and slots, then the small lane's.
inline size_t mainLaneBytes(size_t nSlots, size_t slotBytes) {
  return sizeof(InboxCtl) + nSlots * slotStride(slotBytes);
}
inline size_t inboxBytes(size_t nSlots, size_t slotBytes) {
  return mainLaneBytes(nSlots, slotBytes) + sizeof(InboxCtl) + kSmallSlots * kSmallStride;
}
inline size_t segmentBytes(size_t nInbox, size_t nSlots, size_t slotBytes) {
  return ((sizeof(SegHeader) + 4095) & ~size_t(4095)) + nInbox * inboxBytes(nSlots, slotBytes);
}

// One lane of one inbox: its control word and its ring of slots.
struct Lane {
  InboxCtl* ctl = nullptr;
  char* slots = nullptr;
  size_t stride = 0;
  uint64_t nSlots = 0;  // a power of two
  SlotHdr* at(uint64_t idx) const {
    return reinterpret_cast<SlotHdr*>(slots + (idx & (nSlots - 1)) * stride);
  }
};
enum LaneId : int { kMainLane = 0, kSmallLane = 1 };

// Accessors over a mapped segment (nSlots is a power of two).
struct SegView {
  char* base = nullptr;
  SegHeader* hdr() const { return reinterpret_cast<SegHeader*>(base); }
  InboxCtl* inbox(uint32_t i) const {
    size_t off = ((sizeof(SegHeader) + 4095) & ~size_t(4095)) +
                 i * inboxBytes(hdr()->nSlots, hdr()->slotBytes);
    return reinterpret_cast<InboxCtl*>(base + off);
  }
  Lane lane(uint32_t i, LaneId id) const {
    char* ctl = reinterpret_cast<char*>(inbox(i));
    Lane l;
    if (id == kMainLane) {
      l.stride = slotStride(hdr()->slotBytes);
      l.nSlots = hdr()->nSlots;
    } else {
      ctl += mainLaneBytes(hdr()->nSlots, hdr()->slotBytes);
      l.stride = kSmallStride;
      l.nSlots = kSmallSlots;
    }
    l.ctl = reinterpret_cast<InboxCtl*>(ctl);
    l.slots = ctl + sizeof(InboxCtl);
    return l;
  }
};

}  // namespace gdr::transport::shm

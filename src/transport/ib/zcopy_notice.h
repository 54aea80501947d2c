// The side-connection frames of rendezvous failover (ib_zfailover.cc says
// the protocol): a sender's question about the zero-copy chunks it had in
// flight on a QP that failed, the receiver's answer (which of them landed,
// read after its end of that QP is in the error state, so nothing more can
// land through it), and a clear-to-send copied over the side connection
// when its write failed. They travel with the QP-down notice (qp_notice.h)
// and are told apart by their tag. Pure: tests drive it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transport/ib/ib_wire.h"

namespace gdr::transport::ib {

// One zero-copy chunk: the message's ticket and the chunk's index. Or,
// with idx kEagerChunk, the eager chunk whose sequence `ticket` holds (an
// encrypted connection asks about those too: ib_zfailover.cc).
constexpr uint32_t kEagerChunk = 0xffffffffu;
struct ZChunkRef {
  uint64_t ticket = 0;
  uint32_t idx = 0;
  bool operator==(const ZChunkRef& o) const { return ticket == o.ticket && idx == o.idx; }
};

// At most this many chunks in one question (a sender has at most one send
// queue's worth in flight on a QP).
constexpr size_t kMaxZQuery = 4096;

struct ZQuery {
  int qp = 0;  // the failed QP's index (it names the pair)
  std::vector<ZChunkRef> chunks;
};
struct ZAnswer {
  int qp = 0;
  std::vector<ZChunkRef> chunks;  // the question's
  std::vector<uint8_t> landed;    // 1 per chunk that landed, 0 per one that did not
};
struct CtsCopy {
  int qp = 0;  // the QP whose write of it failed
  ZcopyCts cts{};
};

std::string encodeZQuery(const ZQuery& q);
std::string encodeZAnswer(const ZAnswer& a);
std::string encodeCtsCopy(const CtsCopy& c);
// False when `bytes` is not that frame for a connection of `nQps` QPs
// (another kind, another version, a QP out of range, a wrong length).
bool decodeZQuery(const std::string& bytes, int nQps, ZQuery* out);
bool decodeZAnswer(const std::string& bytes, int nQps, ZAnswer* out);
bool decodeCtsCopy(const std::string& bytes, int nQps, CtsCopy* out);

// Which clear-to-sends a sender has seen. In order over one QP, but one
// whose write failed comes again by the side connection, after later ones
// went over another QP; and the first write may have landed after all.
// `seen` counts the tickets seen without a gap; later ones within
// kCtsSlots are remembered until the gap closes.
class CtsSeen {
 public:
  enum Mark { kNew, kAgain, kOutside };
  // Ticket t arrived: new, a copy of one seen already, or outside the
  // window of tickets the receiver can have out.
  Mark mark(uint64_t t) {
    if (t < seen_) return kAgain;
    const uint64_t d = t - seen_;
    if (d >= kCtsSlots) return kOutside;
    if (ahead_ >> d & 1u) return kAgain;
    ahead_ |= 1u << d;
    while (ahead_ & 1u) {
      ahead_ >>= 1;
      ++seen_;
    }
    return kNew;
  }
  // The full ticket whose low `bits` bits are `low` (an immediate's), the
  // one nearest to the window.
  uint64_t widen(uint32_t low, int bits) const {
    const uint64_t mask = (1ull << bits) - 1;
    const uint64_t ahead = (low - seen_) & mask;  // how far past seen_
    if (ahead < kCtsSlots) return seen_ + ahead;
    const uint64_t behind = (seen_ - low) & mask;  // a copy of an old one
    return seen_ >= behind ? seen_ - behind : seen_ + ahead;
  }
  uint64_t seen() const { return seen_; }
  bool has(uint64_t t) const { return t < seen_ || (t - seen_ < kCtsSlots && (ahead_ >> (t - seen_) & 1u)); }

 private:
  uint64_t seen_ = 0;
  uint32_t ahead_ = 0;  // bit d: ticket seen_ + d arrived (bit 0 is always clear)
};

}  // namespace gdr::transport::ib

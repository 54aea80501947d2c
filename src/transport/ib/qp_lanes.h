// Which QP of a verbs connection carries a chunk, what a write's immediate
// means to the receiver, and which chunks a failed QP leaves to resend. Pure
// logic: the endpoint (ib_endpoint.cc, ib_failover.cc) feeds it, tests drive
// it with made-up interleavings.
//
// Terms: a lane is one QP; its port is the local port it is bound to, an
// index into the endpoint's list of every active port of every device it
// uses (ib_endpoint.h says in which order). QPs go round the ports (QP q on
// port q mod nPorts), and chunks
// go round the QPs, chunk s on QP (hash(peer) + s) mod nQps, so every active
// port carries an equal share; once a QP is down, the chunks it would get go
// to the live QPs by a hash of (peer, s) (the others keep theirs, so the
// receiver's order of arrival only changes for the failed share).
//
// Order at the receiver: the immediate carries the chunk's sequence and the
// receiver consumes slots strictly by sequence, so arrival order across QPs
// does not matter. A chunk resent after its QP failed may have landed
// already: a second arrival of a chunk not yet consumed finds the same bytes
// in its slot, one of a consumed chunk is stale and ignored. For that the
// sender resends only chunks the peer has not consumed, and posts no new
// chunk while a resend is in flight (a new one could reuse the slot of a
// resent chunk that the peer consumed meanwhile).
#pragma once

#include <cstdint>
#include <set>
#include <vector>

namespace gdr::transport::ib {

class QpLanes {
 public:
  // `nQps` QPs over `nPorts` ports (both >= 1).
  QpLanes(int nQps, int nPorts);

  int size() const { return static_cast<int>(port_.size()); }
  int port(int q) const { return port_[q]; }  // 0-based index into the device's ports
  bool live(int q) const { return live_[q] != 0; }
  int liveCount() const { return nLive_; }
  // The QP for chunk `seq` to `peer`: its turn's QP while that lives, else
  // one of the live ones; -1 when none lives.
  int pick(uint64_t peer, uint64_t seq) const;
  // pick()'s QP while `room(q)` says it can take the chunk now; else the
  // next live QP after it (in QP order, so on another device when the QPs
  // alternate over devices) that can; pick()'s QP when none can (the caller
  // waits). A device whose congestion window is full then does not hold the
  // chunks behind it while another device's window has room.
  template <typename Room>
  int pickWithRoom(uint64_t peer, uint64_t seq, Room&& room) const {
    const int q0 = pick(peer, seq);
    if (q0 < 0 || room(q0)) return q0;
    for (int i = 1; i < size(); ++i) {
      const int q = (q0 + i) % size();
      if (live_[q] && room(q)) return q;
    }
    return q0;
  }
  // The QP for control writes (credits, clear-to-sends): the first live one.
  int control() const;
  // Marks `q` down. True when it is the first QP of its port to go down
  // (the event to log), false for later ones and for a QP already down.
  bool markDown(int q);

 private:
  std::vector<int> port_;
  std::vector<uint8_t> live_;
  std::vector<uint8_t> portDown_;
  int nLive_;
};

// What the immediate of an eager chunk means, given the receiver's next
// sequence to consume `rseq` and its window of `nSlots`.
struct ImmSeq {
  enum Kind { kFresh, kStale, kOutside } kind;
  uint64_t seq;  // kFresh: the chunk's full sequence
};
ImmSeq classifyImm(uint32_t imm, uint64_t rseq, uint32_t nSlots);

// The sender's chunks whose QP failed, resent in sequence order.
class ResendQueue {
 public:
  void failed(uint64_t seq) { todo_.insert(seq); }
  bool empty() const { return todo_.empty(); }
  uint64_t front() const { return *todo_.begin(); }
  // Taken off the queue: `seq` went out again (resent) or needs no resend.
  void resent(uint64_t seq);
  void dropped(uint64_t seq) { todo_.erase(seq); }
  // A completion for `seq`: true when it was a resend (it is no longer in flight).
  bool completed(uint64_t seq) { return inFlight_.erase(seq) != 0; }
  // While true, no new chunk may be posted (see above).
  bool holdsNew() const { return !todo_.empty() || !inFlight_.empty(); }
  uint64_t resends() const { return resends_; }
  void clear() {
    todo_.clear();
    inFlight_.clear();
  }

 private:
  std::set<uint64_t> todo_, inFlight_;
  uint64_t resends_ = 0;
};

}  // namespace gdr::transport::ib

// Whether the peer of a verbs endpoint is gone, judged from the TCP
// connection the communicator built first, which stays open beside the QPs
// and carries nothing after set-up but abort notices.
//
// The kernel closes a process's sockets when it exits or is killed, so the
// connection reads EOF (or a reset). A close alone is not a death: a peer
// that finished its last call and destroyed its communicator closes the
// same way, and destroy is not collective. The difference is whether this
// side still waits on that peer. A peer that left cleanly had completed
// everything between the two of us, and what it did has already reached
// this side's memory and completion queue, bar completions still in flight
// behind the close. So the peer counts as gone once the connection is
// closed and operations with it have stayed pending for a grace period
// after the close was first seen.
//
// Looked at only from Endpoint::checkPeer (slow waits): one poll() with no
// timeout, nothing on the fast path.
#pragma once

#include <chrono>

namespace gdr::transport::ib {

class SideLiveness {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kGrace{100};

  // `owed`: operations with the peer are pending now. True once `fd` has
  // been seen closed with operations pending, and still is, kGrace later.
  bool gone(int fd, bool owed, Clock::time_point now);

 private:
  bool closedSeen_ = false;
  Clock::time_point since_{};
};

// Whether the peer has closed (or reset) its end of `fd`; never blocks.
bool socketClosedByPeer(int fd);

}  // namespace gdr::transport::ib

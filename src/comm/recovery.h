// Every rank's recovery listener: a TCP port each rank opens at set-up and
// keeps for the communicator's life, with every other rank's address. A
// shrink (comm/shrink.h) runs over it after the endpoints broke: a live
// process's listener accepts (its kernel does, even while the process is
// busy), a dead one's refuses, so a connect attempt is also a liveness probe.
#pragma once

#include <vector>

#include "bootstrap/bootstrap.h"
#include "core/net.h"

namespace gdr {

class RecoveryChannel {
 public:
  // Opens this rank's listener and learns every rank's address (one
  // allgather through `boot`, during set-up).
  RecoveryChannel(boot::Bootstrap& boot, int rank, int size);
  ~RecoveryChannel();
  RecoveryChannel(const RecoveryChannel&) = delete;
  RecoveryChannel& operator=(const RecoveryChannel&) = delete;

  int listenFd() const { return listenFd_; }
  const net::Addr& addressOf(int rank) const { return addrs_[rank]; }
  // Whether `rank`'s process still listens: a connect that completes within
  // `waitMs` (then closed at once). Refused, unreachable or slow: false.
  bool probe(int rank, int waitMs) const;

 private:
  int listenFd_ = -1;
  std::vector<net::Addr> addrs_;
};

}  // namespace gdr

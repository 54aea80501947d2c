#include "transport/ib/side_liveness.h"

#include <poll.h>

#include <cerrno>

namespace gdr::transport::ib {

bool socketClosedByPeer(int fd) {
  if (fd < 0) return false;
  pollfd p{fd, static_cast<short>(POLLIN | POLLRDHUP), 0};
  int r;
  do {
    r = poll(&p, 1, 0);
  } while (r < 0 && errno == EINTR);
  return r > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

bool SideLiveness::gone(int fd, bool owed, Clock::time_point now) {
  if (!owed) {
    // Nothing pending: a close now is a clean leave as far as this side
    // knows; a later operation with that peer starts the grace anew.
    closedSeen_ = false;
    return false;
  }
  if (!closedSeen_) {
    if (!socketClosedByPeer(fd)) return false;
    closedSeen_ = true;
    since_ = now;
  }
  return now - since_ >= kGrace;
}

}  // namespace gdr::transport::ib

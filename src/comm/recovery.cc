#include "comm/recovery.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "core/error.h"

namespace gdr {

RecoveryChannel::RecoveryChannel(boot::Bootstrap& boot, int rank, int size) {
  net::Addr bound;
  listenFd_ = net::listenOn(net::localAddr(), &bound, 256);
  std::vector<net::PackedAddr> all(static_cast<size_t>(size));
  all[rank] = net::pack(bound);
  try {
    boot.allgather(all.data(), sizeof(net::PackedAddr));
  } catch (...) {
    close(listenFd_);
    throw;
  }
  addrs_.reserve(all.size());
  for (const auto& p : all) addrs_.push_back(net::unpack(p));
}

RecoveryChannel::~RecoveryChannel() {
  if (listenFd_ >= 0) close(listenFd_);
}

bool RecoveryChannel::probe(int rank, int waitMs) const {
  const net::Addr& a = addrs_[rank];
  int fd = socket(a.ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return false;
  bool alive = connect(fd, reinterpret_cast<const sockaddr*>(&a.ss), a.len) == 0;
  if (!alive && errno == EINPROGRESS) {
    pollfd p = {fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof(err);
    alive = poll(&p, 1, waitMs) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
            err == 0;
  }
  close(fd);
  return alive;
}

}  // namespace gdr

#include "core/net.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "core/error.h"
#include "core/log.h"
#include "core/params.h"

namespace gdr::net {

std::string Addr::str() const {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (ss.ss_family == AF_INET) {
    auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
    port = ntohs(a->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
    port = ntohs(a->sin6_port);
  }
  return strprintf("%s:%d", host, port);
}

PackedAddr pack(const Addr& a) {
  PackedAddr p{};
  p.family = a.ss.ss_family;
  if (a.ss.ss_family == AF_INET) {
    auto* in = reinterpret_cast<const sockaddr_in*>(&a.ss);
    p.port = in->sin_port;
    std::memcpy(p.ip, &in->sin_addr, 4);
  } else if (a.ss.ss_family == AF_INET6) {
    auto* in6 = reinterpret_cast<const sockaddr_in6*>(&a.ss);
    p.port = in6->sin6_port;
    p.scope = in6->sin6_scope_id;
    std::memcpy(p.ip, &in6->sin6_addr, 16);
  }
  return p;
}

Addr unpack(const PackedAddr& p) {
  Addr a;
  if (p.family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&a.ss);
    in->sin_family = AF_INET;
    in->sin_port = p.port;
    std::memcpy(&in->sin_addr, p.ip, 4);
    a.len = sizeof(sockaddr_in);
  } else if (p.family == AF_INET6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&a.ss);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = p.port;
    in6->sin6_scope_id = p.scope;
    std::memcpy(&in6->sin6_addr, p.ip, 16);
    a.len = sizeof(sockaddr_in6);
  } else {
    throw InvalidArgument(strprintf("malformed network address (family %u)", p.family));
  }
  return a;
}

Addr localAddr() {
  std::string want = param::getString("GDR_SOCKET_IFNAME");
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) throw SystemError("getifaddrs", errno);
  Addr out;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || !(i->ifa_flags & IFF_UP)) continue;
    int fam = i->ifa_addr->sa_family;
    if (fam != AF_INET && fam != AF_INET6) continue;
    if (!want.empty()) {
      if (want != i->ifa_name) continue;
    } else if ((i->ifa_flags & IFF_LOOPBACK) || fam != AF_INET) {
      continue;
    }
    out.len = fam == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    std::memcpy(&out.ss, i->ifa_addr, out.len);
    if (fam == AF_INET6) {
      auto* a6 = reinterpret_cast<sockaddr_in6*>(&out.ss);
      if (IN6_IS_ADDR_LINKLOCAL(&a6->sin6_addr)) a6->sin6_scope_id = if_nametoindex(i->ifa_name);
    }
    break;
  }
  freeifaddrs(list);
  if (out.len == 0) {
    if (!want.empty())
      throw InvalidArgument(strprintf("GDR_SOCKET_IFNAME=%s: no such interface is up with an IP address",
                                      want.c_str()));
    auto* a = reinterpret_cast<sockaddr_in*>(&out.ss);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    out.len = sizeof(sockaddr_in);
  }
  return out;
}

std::string peerName(int fd) {
  Addr a;
  a.len = sizeof(a.ss);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&a.ss), &a.len) != 0) return "?";
  return a.str();
}

void setNonBlocking(int fd, bool on) {
  int fl = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, on ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK));
}

void setNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

namespace {

int bindAndListen(const Addr& a, int backlog) {
  int fd = socket(a.ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw SystemError("socket", errno);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, reinterpret_cast<const sockaddr*>(&a.ss), a.len) != 0 || listen(fd, backlog) != 0) {
    int e = errno;
    close(fd);
    throw SystemError("bind/listen on " + a.str(), e);
  }
  return fd;
}

}  // namespace

int listenOn(const Addr& addr, Addr* bound, int backlog) {
  Addr a = addr;
  if (a.ss.ss_family == AF_INET)
    reinterpret_cast<sockaddr_in*>(&a.ss)->sin_port = 0;
  else
    reinterpret_cast<sockaddr_in6*>(&a.ss)->sin6_port = 0;
  int fd = bindAndListen(a, backlog);
  bound->len = sizeof(bound->ss);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound->ss), &bound->len);
  return fd;
}

int listenAt(const Addr& addr, int backlog) { return bindAndListen(addr, backlog); }

Addr resolve(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  const std::string service = std::to_string(port);
  int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &list);
  if (rc != 0)
    throw InvalidArgument(strprintf("cannot resolve %s: %s", host.c_str(), gai_strerror(rc)));
  const addrinfo* pick = list;
  for (const addrinfo* i = list; i; i = i->ai_next)
    if (i->ai_family == AF_INET) {
      pick = i;
      break;
    }
  Addr out;
  out.len = pick->ai_addrlen;
  std::memcpy(&out.ss, pick->ai_addr, pick->ai_addrlen);
  freeaddrinfo(list);
  return out;
}

Clock::time_point deadlineFromNow() {
  return Clock::now() + std::chrono::milliseconds(param::getInt("GDR_TIMEOUT_MS"));
}

static int msLeft(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(std::min<long long>(left, 1000));
}

int connectTo(const Addr& addr, Clock::time_point deadline, const std::string& who) {
  int delayMs = 1;
  for (;;) {
    int fd = socket(addr.ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw SystemError("socket", errno);
    if (connect(fd, reinterpret_cast<const sockaddr*>(&addr.ss), addr.len) == 0) {
      setNoDelay(fd);
      return fd;
    }
    int e = errno;
    close(fd);
    bool retry = e == ECONNREFUSED || e == EAGAIN || e == ETIMEDOUT || e == EINTR;
    if (!retry) throw SystemError(strprintf("connect to %s at %s", who.c_str(), addr.str().c_str()), e);
    if (Clock::now() >= deadline)
      throw TimeoutError(strprintf("timed out connecting to %s at %s (last error: %s)", who.c_str(),
                                   addr.str().c_str(), std::strerror(e)));
    std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
    delayMs = std::min(delayMs * 2, 100);
  }
}

int acceptOne(int listenFd, Clock::time_point deadline, const std::string& what) {
  for (;;) {
    pollfd p = {listenFd, POLLIN, 0};
    int r = poll(&p, 1, msLeft(deadline));
    if (r < 0 && errno != EINTR) throw SystemError("poll while accepting " + what, errno);
    if (r > 0) {
      int fd = accept4(listenFd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        setNoDelay(fd);
        return fd;
      }
      if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
        throw SystemError("accept of " + what, errno);
    }
    if (Clock::now() >= deadline) throw TimeoutError("timed out waiting to accept " + what);
  }
}

void sendAll(int fd, const void* buf, size_t len, Clock::time_point deadline, const std::string& who) {
  const char* p = static_cast<const char*>(buf);
  while (len) {
    ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      len -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR)
      throw RemoteError(strprintf("sending to %s failed: %s", who.c_str(), std::strerror(errno)));
    pollfd pf = {fd, POLLOUT, 0};
    poll(&pf, 1, msLeft(deadline));
    if (Clock::now() >= deadline) throw TimeoutError("timed out sending to " + who);
  }
}

void recvAll(int fd, void* buf, size_t len, Clock::time_point deadline, const std::string& who) {
  char* p = static_cast<char*>(buf);
  while (len) {
    ssize_t n = recv(fd, p, len, MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      len -= static_cast<size_t>(n);
      continue;
    }
    if (n == 0) throw RemoteError(strprintf("%s closed the connection (did it exit or die?)", who.c_str()));
    if (errno != EAGAIN && errno != EINTR)
      throw RemoteError(strprintf("receiving from %s failed: %s", who.c_str(), std::strerror(errno)));
    pollfd pf = {fd, POLLIN, 0};
    poll(&pf, 1, msLeft(deadline));
    if (Clock::now() >= deadline) throw TimeoutError("timed out receiving from " + who);
  }
}

void exchange(int sendFd, const void* sendBuf, int recvFd, void* recvBuf, size_t len,
              Clock::time_point deadline, const std::string& who) {
  const char* s = static_cast<const char*>(sendBuf);
  char* r = static_cast<char*>(recvBuf);
  size_t sent = 0, got = 0;
  while (sent < len || got < len) {
    pollfd pf[2];
    int n = 0;
    if (sent < len) pf[n++] = {sendFd, POLLOUT, 0};
    if (got < len) pf[n++] = {recvFd, POLLIN, 0};
    int rc = poll(pf, n, msLeft(deadline));
    if (rc < 0 && errno != EINTR) throw SystemError("poll in exchange with " + who, errno);
    if (sent < len) {
      ssize_t w = send(sendFd, s + sent, len - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (w > 0) sent += static_cast<size_t>(w);
      else if (w < 0 && errno != EAGAIN && errno != EINTR)
        throw RemoteError(strprintf("sending to %s failed: %s", who.c_str(), std::strerror(errno)));
    }
    if (got < len) {
      ssize_t g = recv(recvFd, r + got, len - got, MSG_DONTWAIT);
      if (g > 0) got += static_cast<size_t>(g);
      else if (g == 0) throw RemoteError(who + " closed the connection (did it exit or die?)");
      else if (errno != EAGAIN && errno != EINTR)
        throw RemoteError(strprintf("receiving from %s failed: %s", who.c_str(), std::strerror(errno)));
    }
    if ((sent < len || got < len) && Clock::now() >= deadline)
      throw TimeoutError("timed out exchanging data with " + who);
  }
}

}  // namespace gdr::net

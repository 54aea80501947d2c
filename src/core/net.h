// TCP helpers shared by the TCP bootstrap and the socket transport: choosing
// the interface, listening, connecting and exact-length I/O with deadlines.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace gdr::net {

using Clock = std::chrono::steady_clock;

// A socket address that fits in connection-info blobs.
struct Addr {
  sockaddr_storage ss{};
  socklen_t len = 0;
  std::string str() const;
};

// A fixed-size, pointer-free form of Addr for ids and connection-info blobs.
struct PackedAddr {
  uint16_t family;
  uint16_t port;  // network order
  uint32_t scope;
  uint8_t ip[16];
};
PackedAddr pack(const Addr& a);
Addr unpack(const PackedAddr& p);

// Sends `len` bytes on sendFd while receiving `len` bytes on recvFd (both
// blocking-mode sockets), so a ring of ranks never deadlocks on full buffers.
void exchange(int sendFd, const void* sendBuf, int recvFd, void* recvBuf, size_t len,
              Clock::time_point deadline, const std::string& who);

// The address to listen on: GDR_SOCKET_IFNAME's, else the first up,
// non-loopback IPv4 interface, else 127.0.0.1. Port 0.
Addr localAddr();

// A listening socket on `addr`'s IP, any port; `bound` receives the real address.
int listenOn(const Addr& addr, Addr* bound, int backlog = 128);
// A listening socket on exactly `addr` (IP and port), for a rendezvous at an
// address every rank was told in advance.
int listenAt(const Addr& addr, int backlog = 1024);
// `host` (a name or an address) and `port` resolved to one address, IPv4 first.
Addr resolve(const std::string& host, int port);
// Connects, retrying refused connections until the deadline (the peer may not
// listen yet). Returns a blocking socket with TCP_NODELAY.
int connectTo(const Addr& addr, Clock::time_point deadline, const std::string& who);
// Accepts one connection before the deadline.
int acceptOne(int listenFd, Clock::time_point deadline, const std::string& what);

// Blocking exact-length I/O that gives up at the deadline.
void sendAll(int fd, const void* buf, size_t len, Clock::time_point deadline, const std::string& who);
void recvAll(int fd, void* buf, size_t len, Clock::time_point deadline, const std::string& who);

// The remote address of a connected socket, for log lines ("?" if unknown).
std::string peerName(int fd);

void setNonBlocking(int fd, bool on);
void setNoDelay(int fd);

// Deadline GDR_TIMEOUT_MS from now.
Clock::time_point deadlineFromNow();

}  // namespace gdr::net

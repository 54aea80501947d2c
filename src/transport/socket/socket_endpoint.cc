#include "transport/socket/socket_endpoint.h"

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "core/net.h"

namespace gdr::transport::sock {

namespace {
constexpr size_t kStageBytes = 256 * 1024;
constexpr size_t kMaxAbortText = 4096;
}  // namespace

SocketEndpoint::SocketEndpoint(int fd, int myRank, int peerRank) : fd_(fd), me_(myRank), peer_(peerRank) {
  net::setNonBlocking(fd_, true);
  net::setNoDelay(fd_);
  int buf = 4 << 20;
  setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
  setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
}

SocketEndpoint::~SocketEndpoint() { close(fd_); }

bool SocketEndpoint::progress() {
  bool moved = false;
  if (!sends_.empty()) moved |= progressSends();
  if (!recvs_.empty()) moved |= progressRecvs();
  return moved;
}

void SocketEndpoint::failClosed(int err) {
  if (err == 0)
    throw RemoteError(strprintf("rank %d closed its connection (did it exit or die?)", peer_));
  throw RemoteError(strprintf("connection to rank %d failed: %s", peer_, std::strerror(err)));
}

bool SocketEndpoint::progressSends() {
  bool moved = false;
  while (!sends_.empty()) {
    SendOp* op = sends_.front();
    if (outHdrSent_ == 0 && op->sent == 0) {
      outHdr_ = FrameHdr{kFrameMagic, kFrameData, op->sig, op->bytes};
    }
    iovec iov[2];
    int n = 0;
    if (outHdrSent_ < sizeof(FrameHdr))
      iov[n++] = {reinterpret_cast<char*>(&outHdr_) + outHdrSent_, sizeof(FrameHdr) - outHdrSent_};
    if (op->sent < op->bytes)
      iov[n++] = {const_cast<char*>(static_cast<const char*>(op->data)) + op->sent, op->bytes - op->sent};
    msghdr mh{};
    mh.msg_iov = iov;
    mh.msg_iovlen = n;
    ssize_t w = sendmsg(fd_, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0) {
      if (errno == EAGAIN || errno == EINTR) break;
      failClosed(errno);
    }
    moved = true;
    size_t wrote = static_cast<size_t>(w);
    size_t h = std::min(wrote, sizeof(FrameHdr) - outHdrSent_);
    outHdrSent_ += h;
    op->sent += wrote - h;
    if (outHdrSent_ == sizeof(FrameHdr) && op->sent == op->bytes) {
      op->complete = true;
      sends_.pop_front();
      outHdrSent_ = 0;
    } else {
      break;  // the socket buffer is full
    }
  }
  return moved;
}

bool SocketEndpoint::readHeader() {
  while (inHdrGot_ < sizeof(FrameHdr)) {
    ssize_t r = recv(fd_, reinterpret_cast<char*>(&inHdr_) + inHdrGot_, sizeof(FrameHdr) - inHdrGot_,
                     MSG_DONTWAIT);
    // A peer that finished and closed is no error until something is owed
    // between us: destroying a communicator is not collective.
    if (r == 0 && inHdrGot_ == 0 && recvs_.empty() && sends_.empty()) return false;
    if (r == 0) failClosed(0);
    if (r < 0) {
      if (errno == EAGAIN || errno == EINTR) return false;
      failClosed(errno);
    }
    inHdrGot_ += static_cast<size_t>(r);
  }
  if (inHdr_.magic != kFrameMagic || (inHdr_.type != kFrameData && inHdr_.type != kFrameAbort))
    throw RemoteError(strprintf("rank %d sent a malformed frame header (magic %#x, type %u)", peer_,
                                inHdr_.magic, inHdr_.type));
  if (inHdr_.type == kFrameAbort) readAbortAndThrow();
  return true;
}

void SocketEndpoint::readAbortAndThrow() {
  size_t len = std::min<uint64_t>(inHdr_.bytes, kMaxAbortText);
  std::string text(len, '\0');
  try {
    auto deadline = net::Clock::now() + std::chrono::seconds(2);
    net::recvAll(fd_, text.data(), len, deadline, strprintf("rank %d", peer_));
  } catch (const Error&) {
    text = "(reason not received)";
  }
  // The first four bytes carry the error code.
  int32_t code = gdrRemoteError;
  if (text.size() >= 4) {
    std::memcpy(&code, text.data(), 4);
    text.erase(0, 4);
  }
  throw Error(code == gdrInvalidUsage ? gdrInvalidUsage : gdrRemoteError,
              strprintf("rank %d failed: %s", peer_, text.c_str()));
}

bool SocketEndpoint::progressRecvs() {
  bool moved = false;
  for (;;) {
    if (!readHeader()) return moved;
    if (recvs_.empty()) return moved;  // hold the header until a receive is posted
    RecvOp* op = recvs_.front();
    if (op->received == 0 && staged_ == 0) {
      if (inHdr_.sig != op->sig)
        throw InvalidUsage(strprintf("mismatched operations: rank %d sent %s but this rank expects %s",
                                     peer_, describe(inHdr_.sig).c_str(), describe(op->sig).c_str()));
      if (inHdr_.bytes != op->bytes)
        throw InvalidUsage(strprintf("mismatched message size: rank %d sent %llu bytes for %s, this rank expects %zu",
                                     peer_, (unsigned long long)inHdr_.bytes, describe(op->sig).c_str(),
                                     op->bytes));
    }
    while (op->received < op->bytes) {
      size_t want = op->bytes - op->received;
      ssize_t r;
      if (!op->fn) {
        r = recv(fd_, static_cast<char*>(op->dst) + op->received, want, MSG_DONTWAIT);
      } else {
        if (stage_.size() < kStageBytes) stage_.resize(kStageBytes);
        r = recv(fd_, stage_.data() + staged_, std::min(want - staged_, kStageBytes - staged_), MSG_DONTWAIT);
      }
      if (r == 0) failClosed(0);
      if (r < 0) {
        if (errno == EAGAIN || errno == EINTR) return moved;
        failClosed(errno);
      }
      moved = true;
      if (!op->fn) {
        op->received += static_cast<size_t>(r);
        continue;
      }
      staged_ += static_cast<size_t>(r);
      size_t elems = staged_ / op->elemBytes;
      size_t bytes = elems * op->elemBytes;
      op->fn(static_cast<char*>(op->dst) + op->received,
             static_cast<const char*>(op->reduceSrc) + op->received, stage_.data(), elems);
      op->received += bytes;
      staged_ -= bytes;
      if (staged_) std::memmove(stage_.data(), stage_.data() + bytes, staged_);
    }
    op->complete = true;
    recvs_.pop_front();
    inHdrGot_ = 0;
    moved = true;
  }
}

void SocketEndpoint::checkPeer() {
  // A dead peer shows up as EOF or a reset in progress(); read a waiting
  // header so an abort notice is seen even with nothing posted.
  readHeader();
}

void SocketEndpoint::sendAbort(gdrResult_t code, const std::string& reason) noexcept {
  try {
    // Finish a half-sent frame first so the peer can parse the notice; give
    // up quickly if it does not drain.
    auto deadline = net::Clock::now() + std::chrono::milliseconds(200);
    if (!sends_.empty() && (outHdrSent_ || sends_.front()->sent)) {
      SendOp* op = sends_.front();
      if (outHdrSent_ < sizeof(FrameHdr))
        net::sendAll(fd_, reinterpret_cast<char*>(&outHdr_) + outHdrSent_,
                     sizeof(FrameHdr) - outHdrSent_, deadline, "peer");
      net::sendAll(fd_, static_cast<const char*>(op->data) + op->sent, op->bytes - op->sent, deadline, "peer");
    }
    std::string text(4, '\0');
    int32_t c = code;
    std::memcpy(text.data(), &c, 4);
    text += reason.substr(0, kMaxAbortText - 4);
    FrameHdr h{kFrameMagic, kFrameAbort, OpSig{}, text.size()};
    net::sendAll(fd_, &h, sizeof(h), deadline, "peer");
    net::sendAll(fd_, text.data(), text.size(), deadline, "peer");
  } catch (...) {
  }
}

void SocketEndpoint::reset() noexcept {
  sends_.clear();
  recvs_.clear();
}

}  // namespace gdr::transport::sock

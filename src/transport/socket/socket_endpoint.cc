#include "transport/socket/socket_endpoint.h"

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <poll.h>

#include "core/error.h"
#include "core/log.h"
#include "core/net.h"

namespace gdr::transport::sock {

namespace {
constexpr size_t kStageBytes = 256 * 1024;
}  // namespace

const char* checkFrameHdr(const FrameHdr& h) {
  if (h.magic != kFrameMagic) return "bad magic (not a gdrcoll frame)";
  if (h.version != kFrameVersion) return "unsupported frame version";
  if (h.type == kFrameData) return nullptr;
  if (h.type == kFrameAbort) return h.bytes < 4 || h.bytes > kMaxAbortText ? "abort notice of a bad length" : nullptr;
  if (h.type == kFrameNotice)
    return h.bytes < 1 || h.bytes > Endpoint::kMaxNotice ? "notice of a bad length" : nullptr;
  return "unknown frame type";
}

SocketEndpoint::SocketEndpoint(int fd, int /*myRank*/, int peerRank, const security::SessionKeys* keys,
                               int bufferBytes)
    : fd_(fd), peer_(peerRank) {
  if (keys) {
    sealer_ = std::make_unique<SealPipe>(keys->send, fd);
    opener_ = std::make_unique<OpenPipe>(keys->recv, fd);
  }
  net::setNonBlocking(fd_, true);
  net::setNoDelay(fd_);
  // Large fixed buffers (they turn TCP's autotuning off) let a send complete
  // once the kernel holds it, so a forwarding rank overlaps its next receive
  // with it; 0 (GDR_SOCKET_BUFFER=0) leaves them to the kernel.
  if (bufferBytes > 0) {
    setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &bufferBytes, sizeof(bufferBytes));
    setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &bufferBytes, sizeof(bufferBytes));
  }
}

SocketEndpoint::~SocketEndpoint() {
  sealer_.reset();  // waits for sealing jobs, which read the senders' buffers
  opener_.reset();
  close(fd_);
}

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
      outHdr_ = FrameHdr{kFrameMagic, kFrameVersion, kFrameData, op->sig, op->bytes};
    }
    ssize_t w;
    if (preSealed(op->sig)) {
      w = sendPreSealed(op);
    } else {
      iovec iov[2];
      int n = 0;
      if (outHdrSent_ < sizeof(FrameHdr))
        iov[n++] = {reinterpret_cast<char*>(&outHdr_) + outHdrSent_, sizeof(FrameHdr) - outHdrSent_};
      if (op->sent < op->bytes)
        iov[n++] = {const_cast<char*>(static_cast<const char*>(op->data)) + op->sent, op->bytes - op->sent};
      w = sendSome(iov, n);
    }
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

// Header (sealed record), then payload (clear records), never mixed in one
// record: the header's record must be wholly out before the payload starts.
ssize_t SocketEndpoint::sendPreSealed(SendOp* op) {
  size_t wrote = 0;
  if (outHdrSent_ < sizeof(FrameHdr)) {
    iovec h = {reinterpret_cast<char*>(&outHdr_) + outHdrSent_, sizeof(FrameHdr) - outHdrSent_};
    ssize_t w = sealer_->send(&h, 1);
    if (w < 0) return w;
    wrote = static_cast<size_t>(w);
    if (outHdrSent_ + wrote < sizeof(FrameHdr) || sealer_->busy()) return static_cast<ssize_t>(wrote);
  }
  if (op->sent < op->bytes) {
    iovec p = {const_cast<char*>(static_cast<const char*>(op->data)) + op->sent, op->bytes - op->sent};
    ssize_t w = sealer_->sendClear(&p, 1);
    if (w < 0) {
      if (wrote) return static_cast<ssize_t>(wrote);
      return w;
    }
    wrote += static_cast<size_t>(w);
  }
  return static_cast<ssize_t>(wrote);
}

bool SocketEndpoint::readHeader() {
  while (inHdrGot_ < sizeof(FrameHdr)) {
    ssize_t r = recvSome(reinterpret_cast<char*>(&inHdr_) + inHdrGot_, sizeof(FrameHdr) - inHdrGot_);
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
  if (const char* err = checkFrameHdr(inHdr_)) failMalformed(err);
  if (inHdr_.type == kFrameAbort) readAbortAndThrow();
  if (inHdr_.type == kFrameNotice) {  // kept; the frame after it may be ready too
    readNotice();
    inHdrGot_ = 0;
    return readHeader();
  }
  return true;
}

// A notice's few bytes follow its header in the same send: waiting for them
// is bounded like an abort notice's text.
void SocketEndpoint::readNotice() {
  std::string body(static_cast<size_t>(inHdr_.bytes), '\0');  // bounded by checkFrameHdr
  recvBlocking(body.data(), body.size(), net::Clock::now() + std::chrono::seconds(2));
  notices_.push_back(std::move(body));
}

bool SocketEndpoint::takeNotice(std::string* out) {
  if (notices_.empty()) return false;
  *out = std::move(notices_.front());
  notices_.pop_front();
  return true;
}

// Between frames only: a data frame half out (or records of it still being
// sealed) would have the notice's bytes inside it.
bool SocketEndpoint::sendNotice(const void* data, size_t bytes) noexcept {
  if (bytes < 1 || bytes > Endpoint::kMaxNotice) return false;
  if (!sends_.empty() && (outHdrSent_ || sends_.front()->sent || (sealer_ && sealer_->busy())))
    return false;
  try {
    auto deadline = net::Clock::now() + std::chrono::milliseconds(200);
    FrameHdr h{kFrameMagic, kFrameVersion, kFrameNotice, OpSig{}, bytes};
    sendBlocking(&h, sizeof(h), data, bytes, deadline);
    return true;
  } catch (...) {
    return false;
  }
}

void SocketEndpoint::readAbortAndThrow() {
  size_t len = static_cast<size_t>(inHdr_.bytes);  // bounded by checkFrameHdr
  std::string text(len, '\0');
  try {
    recvBlocking(text.data(), len, net::Clock::now() + std::chrono::seconds(2));
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
        r = recvSome(static_cast<char*>(op->dst) + op->received, want, preSealed(inHdr_.sig));
      } else {
        if (stage_.size() < kStageBytes) stage_.resize(kStageBytes);
        r = recvSome(stage_.data() + staged_, std::min(want - staged_, kStageBytes - staged_));
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
    if (!sends_.empty() && (outHdrSent_ || sends_.front()->sent || (sealer_ && sealer_->busy()))) {
      SendOp* op = sends_.front();
      sendBlocking(reinterpret_cast<char*>(&outHdr_) + outHdrSent_, sizeof(FrameHdr) - outHdrSent_,
                   static_cast<const char*>(op->data) + op->sent, op->bytes - op->sent, deadline);
    }
    std::string text(4, '\0');
    int32_t c = code;
    std::memcpy(text.data(), &c, 4);
    text += reason.substr(0, kMaxAbortText - 4);
    FrameHdr h{kFrameMagic, kFrameVersion, kFrameAbort, OpSig{}, text.size()};
    sendBlocking(&h, sizeof(h), text.data(), text.size(), deadline);
  } catch (...) {
    if (sealer_) sealer_->reset();  // no sealing job may outlive the notice it reads
  }
}

void SocketEndpoint::reset() noexcept {
  if (sealer_) sealer_->reset();  // before the buffers its jobs read are given back
  sends_.clear();
  recvs_.clear();
}

void SocketEndpoint::failMalformed(const char* what) {
  std::string where = net::peerName(fd_);
  GDR_WARN(kNet, "rank %d (%s) sent a malformed frame: %s; closing the connection", peer_, where.c_str(), what);
  shutdown(fd_, SHUT_RD);
  throw RemoteError(strprintf("rank %d (%s) sent a malformed frame: %s", peer_, where.c_str(), what));
}

void SocketEndpoint::failDecrypt() {
  if (opener_->failure() == OpenPipe::Failure::Malformed) failMalformed(opener_->malformedWhy());
  std::string where = net::peerName(fd_);
  GDR_WARN(kNet, "rank %d (%s): an encrypted record failed authentication; closing the connection", peer_,
           where.c_str());
  shutdown(fd_, SHUT_RD);
  throw RemoteError(strprintf(
      "data from rank %d (%s) failed authentication (AES-GCM tag mismatch: altered or corrupted in "
      "transit); it was not delivered and the connection is closed",
      peer_, where.c_str()));
}

void SocketEndpoint::sendBlocking(const void* a, size_t alen, const void* b, size_t blen, net_deadline_t deadline) {
  const char* pa = static_cast<const char*>(a);
  const char* pb = static_cast<const char*>(b);
  while (alen || blen) {
    iovec iov[2];
    int n = 0;
    if (alen) iov[n++] = {const_cast<char*>(pa), alen};
    if (blen) iov[n++] = {const_cast<char*>(pb), blen};
    ssize_t w = sendSome(iov, n);
    if (w < 0) {
      if (errno != EAGAIN && errno != EINTR) failClosed(errno);
      if (net::Clock::now() >= deadline) throw TimeoutError(strprintf("timed out sending to rank %d", peer_));
      pollfd pf = {fd_, POLLOUT, 0};
      poll(&pf, 1, 10);
      continue;
    }
    size_t wrote = static_cast<size_t>(w), h = std::min(wrote, alen);
    pa += h;
    alen -= h;
    pb += wrote - h;
    blen -= wrote - h;
  }
}

void SocketEndpoint::recvBlocking(void* buf, size_t len, net_deadline_t deadline) {
  char* p = static_cast<char*>(buf);
  while (len) {
    ssize_t r = recvSome(p, len);
    if (r == 0) failClosed(0);
    if (r < 0) {
      if (errno != EAGAIN && errno != EINTR) failClosed(errno);
      if (net::Clock::now() >= deadline) throw TimeoutError(strprintf("timed out receiving from rank %d", peer_));
      pollfd pf = {fd_, POLLIN, 0};
      poll(&pf, 1, 10);
      continue;
    }
    p += r;
    len -= static_cast<size_t>(r);
  }
}

}  // namespace gdr::transport::sock

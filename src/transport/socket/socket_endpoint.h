// TCP endpoint: one connection per peer pair, non-blocking, framed messages.
// A frame is a fixed header (magic, type, signature, length) and its payload.
// Plain receives read straight into the destination; receive-reduces read
// through a bounded staging buffer and reduce whole elements as they arrive.
// The next frame's header is read even when no receive is posted, so an
// abort notice from the peer is seen while this rank waits on anything.
// Notices (Endpoint::sendNotice) travel as frames of their own between data
// frames, and are kept until taken.
//
// Every header is versioned and checked (checkFrameHdr) before anything it
// describes is read; a bad one ends the connection with an error naming the
// peer. With session keys (GDR_ENCRYPT=1) the byte stream both ways is a
// sequence of AES-256-GCM records carrying the same frames, sealed and opened
// in a pipeline with the transfer (record_pipe.h): nothing decrypted is used
// before its record's tag has been checked. A payload the GPU already sealed
// (kSigPreSealed) follows its sealed header in clear records.
#pragma once

#include <sys/uio.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <cerrno>
#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "security/handshake.h"
#include "transport/socket/record_pipe.h"
#include "transport/transport.h"

namespace gdr::transport::sock {

using net_deadline_t = std::chrono::steady_clock::time_point;

enum FrameType : uint16_t { kFrameData = 1, kFrameAbort = 2, kFrameNotice = 3 };
constexpr uint32_t kFrameMagic = 0x47445246;  // "GDRF"
constexpr uint16_t kFrameVersion = 1;
constexpr size_t kMaxAbortText = 4096;

struct FrameHdr {
  uint32_t magic;
  uint16_t version;
  uint16_t type;
  OpSig sig;
  uint64_t bytes;
};
static_assert(sizeof(FrameHdr) == 40, "frame header layout");

// nullptr when `h` is a frame header this build understands, else what is
// wrong with it. (The data length is checked against the posted receive.)
const char* checkFrameHdr(const FrameHdr& h);

class SocketEndpoint final : public Endpoint {
 public:
  // `keys`: encrypt with these (GDR_ENCRYPT=1); null: plain frames.
  // bufferBytes: SO_SNDBUF and SO_RCVBUF (GDR_SOCKET_BUFFER); 0 leaves them to
  // the kernel's TCP autotuning.
  SocketEndpoint(int fd, int myRank, int peerRank, const security::SessionKeys* keys = nullptr,
                 int bufferBytes = 4 << 20);
  ~SocketEndpoint() override;
  const char* name() const override { return "socket"; }
  int peer() const override { return peer_; }
  uint32_t capabilities() const override { return 0; }
  void postSend(SendOp* op) override { sends_.push_back(op); }
  void postRecv(RecvOp* op) override { recvs_.push_back(op); }
  bool progress() override;
  void checkPeer() override;
  void sendAbort(gdrResult_t code, const std::string& reason) noexcept override;
  void reset() noexcept override;
  int pollFd() const override { return fd_; }
  bool wantsWrite() const override { return !sends_.empty(); }
  bool sendNotice(const void* data, size_t bytes) noexcept override;
  bool takeNotice(std::string* out) override;

 private:
  bool progressSends();
  bool progressRecvs();
  bool readHeader();
  [[noreturn]] void failClosed(int err);
  [[noreturn]] void readAbortAndThrow();
  void readNotice();
  [[noreturn]] void failMalformed(const char* what);
  // recv()/sendmsg() through the encryption layer when there is one (same
  // return conventions); the plain path is one branch away from the syscall.
  ssize_t recvSome(void* buf, size_t len, bool clear = false) {
    if (!opener_) return recv(fd_, buf, len, MSG_DONTWAIT);
    ssize_t r = opener_->recv(buf, len, clear);
    if (r < 0 && errno == EBADMSG) failDecrypt();
    return r;
  }
  ssize_t sendSome(const iovec* iov, int n) {
    if (!sealer_) {
      msghdr mh{};
      mh.msg_iov = const_cast<iovec*>(iov);
      mh.msg_iovlen = n;
      return sendmsg(fd_, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    return sealer_->send(iov, n);
  }
  // A frame whose payload the GPU sealed (kSigPreSealed): the header goes
  // in a sealed record, the payload in clear records.
  bool preSealed(const OpSig& sig) const { return sealer_ && (sig.flags & kSigPreSealed); }
  ssize_t sendPreSealed(SendOp* op);
  [[noreturn]] void failDecrypt();
  // Blocking helpers for the abort path.
  void sendBlocking(const void* a, size_t alen, const void* b, size_t blen, net_deadline_t deadline);
  void recvBlocking(void* buf, size_t len, net_deadline_t deadline);

  int fd_;
  int peer_;
  std::deque<SendOp*> sends_;
  std::deque<RecvOp*> recvs_;
  FrameHdr outHdr_{};
  size_t outHdrSent_ = 0;  // bytes of the current send's header already sent
  FrameHdr inHdr_{};
  size_t inHdrGot_ = 0;
  std::vector<char> stage_;
  size_t staged_ = 0;  // bytes in stage_ not yet reduced (less than one element)
  std::deque<std::string> notices_;  // received, not taken yet

  // Encryption (null when off).
  std::unique_ptr<SealPipe> sealer_;
  std::unique_ptr<OpenPipe> opener_;
};

}  // namespace gdr::transport::sock

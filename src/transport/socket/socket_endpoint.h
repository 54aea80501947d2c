// TCP endpoint: one connection per peer pair, non-blocking, framed messages.
// A frame is a fixed header (magic, type, signature, length) and its payload.
// Plain receives read straight into the destination; receive-reduces read
// through a bounded staging buffer and reduce whole elements as they arrive.
// The next frame's header is read even when no receive is posted, so an
// abort notice from the peer is seen while this rank waits on anything.
#pragma once

#include <deque>
#include <vector>

#include "transport/transport.h"

namespace gdr::transport::sock {

enum FrameType : uint32_t { kFrameData = 1, kFrameAbort = 2 };
constexpr uint32_t kFrameMagic = 0x47445246;  // "GDRF"

struct FrameHdr {
  uint32_t magic;
  uint32_t type;
  OpSig sig;
  uint64_t bytes;
};
static_assert(sizeof(FrameHdr) == 40, "frame header layout");

class SocketEndpoint final : public Endpoint {
 public:
  SocketEndpoint(int fd, int myRank, int peerRank);
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

 private:
  bool progressSends();
  bool progressRecvs();
  bool readHeader();
  [[noreturn]] void failClosed(int err);
  [[noreturn]] void readAbortAndThrow();

  int fd_;
  int me_;
  int peer_;
  std::deque<SendOp*> sends_;
  std::deque<RecvOp*> recvs_;
  FrameHdr outHdr_{};
  size_t outHdrSent_ = 0;  // bytes of the current send's header already sent
  FrameHdr inHdr_{};
  size_t inHdrGot_ = 0;
  std::vector<char> stage_;
  size_t staged_ = 0;  // bytes in stage_ not yet reduced (less than one element)
};

}  // namespace gdr::transport::sock

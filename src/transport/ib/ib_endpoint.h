// Verbs endpoint: reliable-connected QPs to one peer, chunks moved by RDMA
// WRITE WITH IMMEDIATE, flow control by credits.
//
// Terms: a message (one SendOp) travels as chunks (ChunkPolicy sizes them).
// Each chunk gets the connection's next sequence number s; it lands in the
// receiver's slot s % nSlots (header + payload in one write, from the user's
// buffer, registered through the RegCache) and the immediate carries s. The
// QP is chosen by a hash of (peer, s), so with several QPs chunks may
// complete out of order; the receiver consumes slots strictly by sequence,
// which restores order. After consuming, the receiver RDMA-writes its count
// of consumed chunks into the sender's credit word; the sender never has
// more than nSlots chunks beyond that count, so no write ever finds a busy
// slot and no receiver-not-ready retry happens on the fast path.
//
// Abort notices and peer-death detection ride on the TCP connection the
// communicator built first (`side`), which stays open for that purpose.
//
// GDR_ENCRYPT=1 (keys given): every chunk is AES-256-GCM sealed, its header
// as additional data, its sequence number as the nonce's counter, the tag in
// the header (chunk_crypto.h). The payload is sealed on the CPU into a
// registered bounce ring ahead of the wire, and opened in its slot before any
// byte of it is delivered (chunk_cipher.h). Payloads already sealed by the
// GPU (OpSig kSigPreSealed) go as they are, with the header authenticated.
// Without keys the only difference is one branch per chunk.
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "security/handshake.h"
#include "transport/ib/chunk_cipher.h"
#include "transport/ib/chunk_policy.h"
#include "transport/ib/gdr_mode.h"
#include "transport/ib/ib_device.h"
#include "transport/ib/ib_wire.h"
#include "transport/ib/peer_cc.h"
#include "transport/ib/reg_cache.h"
#include "transport/transport.h"

namespace gdr::transport::ib {

struct IbEndpointConfig {
  int myRank = 0;
  int peerRank = 0;
  int nQps = 1;
  int qpDepth = 1024;
  int maxWr = 128;
  uint32_t nSlots = 8;  // power of two
  size_t chunkFixed = 0;
  int trafficClass = 0;
  int serviceLevel = 0;
  int timeout = 20;
  int retryCnt = 7;
  bool keepRegistrations = true;  // of buffers in UserRanges (GDR_IB_REG_CACHE)
  GdrMode gpuMode = GdrMode::Staged;  // how device send buffers meet the NIC
  CcConfig cc;                        // maxWindow is set from the credit window
};

struct IbStats {
  uint64_t chunksSent = 0, chunksReceived = 0, creditWrites = 0;
  std::vector<uint64_t> chunksPerQp;
  size_t chunkBytes = 0;
  int chunkChanges = 0;
  RegCache::Stats reg;
};

class IbEndpoint final : public Endpoint {
 public:
  // `keys`: this connection's verbs keys (security/channel_keys.h) when
  // GDR_ENCRYPT=1, else null. They are copied, not kept.
  IbEndpoint(std::shared_ptr<IbDevice> dev, const IbEndpointConfig& cfg,
             const security::SessionKeys* keys = nullptr);
  ~IbEndpoint() override;

  // Set-up: local info for the peer, then the peer's info (QPs to RTS).
  IbConnInfo localInfo() const;
  void connect(const IbConnInfo& remote, std::unique_ptr<Endpoint> side);

  const char* name() const override { return "ib"; }
  int peer() const override { return cfg_.peerRank; }
  // Not kCapDeviceMemory: receives land in host slots and are copied out by
  // the CPU, so device receive buffers must be staged by the caller. A device
  // send buffer is registered by GPUDirect when gpuSendsDirect() (dma-buf or
  // nvidia-peermem), else refused with NotSupported. Under GDR_ENCRYPT the CPU
  // cannot seal a device buffer, so device sends are refused the same way
  // (the caller stages them) unless their payload is pre-sealed
  // (kSigPreSealed), which may still go direct.
  uint32_t capabilities() const override { return kCapSingleCopy; }
  bool gpuSendsDirect() const { return cfg_.gpuMode != GdrMode::Staged && !cipher_; }
  bool encrypted() const { return cipher_ != nullptr; }
  void postSend(SendOp* op) override;
  void postRecv(RecvOp* op) override { recvs_.push_back(op); }
  bool progress() override;
  void checkPeer() override;
  void sendAbort(gdrResult_t code, const std::string& reason) noexcept override;
  void reset() noexcept override;

  IbStats stats() const;
  RegCache& regCache() { return *regs_; }
  // Tests only: the next writes use a wrong remote key, so the peer's NIC
  // rejects them and this side sees a real error completion.
  void breakRemoteKeyForTest() { remote_.slotsRkey ^= 0x5a5a5a5a; }

 private:
  struct PendingSend {
    SendOp* op;
    uint64_t id;
    const RegCache::Entry* reg = nullptr;
    int wrsLeft = 0;
    bool allPosted = false;
  };
  struct ChunkTrack {
    uint64_t pendingId;
    size_t bytes;
    double occupancy;
    double sentUs;
  };
  struct Ctrl;

  bool pollCq();
  bool postChunks();
  void sealAhead();
  bool consumeChunks();
  [[noreturn]] void failAuth(uint64_t seq);
  void postCredit();
  void postRecvWr(int q);
  int qpIndex(uint32_t qpn) const;
  [[noreturn]] void failWc(const ibv_wc& wc);
  [[noreturn]] void failPost(const char* what, int q, int err);
  double nowUs() const;

  std::shared_ptr<IbDevice> dev_;
  IbEndpointConfig cfg_;
  ChunkPolicy policy_;
  std::unique_ptr<PeerCc> cc_;  // bytes in flight and the chunk size it allows
  std::unique_ptr<RegCache> regs_;
  std::unique_ptr<Endpoint> side_;
  ibv_cq* cq_ = nullptr;
  std::vector<ibv_qp*> qps_;
  std::vector<uint32_t> psn_;
  std::vector<int> sqUsed_;
  int sqCap_ = 0;
  // receive slots (peers write here) and the control block (credit word,
  // credit sources, chunk headers to send)
  char* slots_ = nullptr;
  size_t slotStride_ = 0;
  Ctrl* ctrl_ = nullptr;
  ibv_mr* slotsMr_ = nullptr;
  ibv_mr* ctrlMr_ = nullptr;
  // GDR_ENCRYPT=1 only: the sealing ring (registered) and the chunk
  // sealed-ahead cursor: sends_[sealIdx_] from byte sealOff_, chunk sealSeq_.
  std::unique_ptr<ChunkCipher> cipher_;
  ibv_mr* ringMr_ = nullptr;
  uint64_t sealSeq_ = 0;
  size_t sealIdx_ = 0, sealOff_ = 0;
  IbConnInfo remote_{};
  bool connected_ = false;

  // sender
  std::deque<SendOp*> sends_;
  std::deque<PendingSend> pend_;  // posted ops, oldest first
  uint64_t nextPendId_ = 0;
  uint64_t sseq_ = 0;  // next chunk sequence to send
  int dataInFlight_ = 0;
  // Chunks posted and not yet completed locally, by sequence. Not a ring of
  // nSlots: a chunk's slot can be reused (the peer consumed it) before this
  // side has polled the chunk's own completion.
  std::unordered_map<uint64_t, ChunkTrack> track_;
  // receiver
  std::deque<RecvOp*> recvs_;
  uint64_t rseq_ = 0;  // next chunk sequence to consume
  std::vector<uint8_t> arrived_;
  uint64_t creditPosted_ = 0;
  int creditsInFlight_ = 0;
  uint64_t creditSlot_ = 0;
  IbStats stats_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace gdr::transport::ib

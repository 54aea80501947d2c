// Verbs endpoint: reliable-connected QPs to one peer, chunks moved by RDMA
// WRITE WITH IMMEDIATE, flow control by credits.
//
// Terms: a message (one SendOp) travels as chunks (ChunkPolicy sizes them).
// Each chunk gets the connection's next sequence number s; it lands in the
// receiver's slot s % nSlots (header + payload in one write, from the user's
// buffer, registered through the RegCache) and the immediate carries s. The
// chunks go round the QPs, which go round the active ports of the devices
// (qp_lanes.h; with several devices their ports alternate, so QP 0 is on the
// first device, QP 1 on the second), so with several QPs chunks may
// complete out of order; the receiver consumes slots strictly by sequence,
// which restores order. After consuming, the receiver RDMA-writes its count
// of consumed chunks into the sender's credit word; the sender never has
// more than nSlots chunks beyond that count, so no write ever finds a busy
// slot and no receiver-not-ready retry happens on the fast path.
//
// Zero-copy (ib_zcopy.cc): a message of at least zcopyBytes goes by
// rendezvous instead. The receiver registers its buffer (through its own
// registration cache) as soon as the receive is posted and RDMA-writes a
// clear-to-send (ZcopyCts: address, key, chunk size, what it expects) into
// the sender's mailbox. The sender announces the message in its next slot (a
// header without payload, so the receiver checks the operation and size in
// stream order) and, once the clear-to-send is there, writes the payload
// straight into the receiver's buffer, chunk by chunk, with RDMA WRITE WITH
// IMMEDIATE (ticket and chunk index in the immediate), at most kZWindow
// chunks beyond the receiver's count of landed ones (its second credit
// word). The receive completes when the announce is consumed and every
// chunk's immediate arrived. A reduction's clear-to-send says "slots": its
// payload still lands in the slots, which are its registered scratch space
// (the reduction reads it there once; there is no copy to save). No byte of
// such a message is copied by the CPU (IbStats::cpuCopyBytes).
//
// Several devices (GDR_IB_HCA listing them; separate HCAs of one GPU): each
// has its own PD, completion queue and keys, so the slots, control block,
// mailbox and sealing ring are registered on every one, as is each send and
// zero-copy receive buffer (a registration cache per device; each sees the
// same acquires). The connection info carries the peer's keys per QP, and a
// clear-to-send one key per device of the receiver. A device or port that
// fails is a failed lane like any other (ib_failover.cc).
//
// Abort notices, "QP down" notices (qp_notice.h) and peer-death detection
// ride on the TCP connection the communicator built first (`side`), which
// stays open for that purpose (side_liveness.h: a close with operations
// still pending is a death).
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
#include <exception>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "security/handshake.h"
#include "transport/ib/chunk_cipher.h"
#include "transport/ib/chunk_policy.h"
#include "transport/ib/gdr_mode.h"
#include "transport/ib/ib_device.h"
#include "transport/ib/ib_wire.h"
#include "transport/ib/peer_cc.h"
#include "transport/ib/qp_lanes.h"
#include "transport/ib/reg_cache.h"
#include "transport/ib/side_liveness.h"
#include "transport/ib/zcopy_notice.h"
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
  size_t zcopyBytes = 0;              // rendezvous from this size on (0: never)
  size_t zcopyChunk = 512 * 1024;     // bytes per zero-copy write
  CcConfig cc;                        // maxWindow is set from the credit window
  bool failover = true;  // a failed QP hands its chunks to the others (GDR_IB_FAILOVER)
};

struct IbStats {
  uint64_t chunksSent = 0, chunksReceived = 0, creditWrites = 0;
  std::vector<uint64_t> chunksPerQp;
  size_t chunkBytes = 0;
  int chunkChanges = 0;
  RegCache::Stats reg;
  // Bytes this side copied out of the receive slots with the CPU (reductions
  // are not copies: they read the slots once, in place).
  uint64_t cpuCopyBytes = 0;
  uint64_t deviceCopyBytes = 0;  // eager chunks copied from a slot into a device buffer (CUDA)
  uint64_t zcopySent = 0, zcopyReceived = 0;  // messages by rendezvous
  uint64_t zcopyWrites = 0, ctsWrites = 0;
  RegCache::Stats recvReg;  // receive buffers registered for zero-copy
  // Failover (ib_failover.cc): QPs found failed, chunks sent again on the
  // others, and copies of chunks received after their first was consumed.
  int qpsDown = 0;
  uint64_t chunksResent = 0, staleChunks = 0;
  uint64_t chunksPlacedByRoom = 0;  // sent on another device's QP than pickQp's (window full)
  // QP-down notices (qp_notice.h) sent to the peer, and the peer's acted on.
  int noticesSent = 0, noticesTaken = 0;
  // Rendezvous failover (ib_zfailover.cc): zero-copy chunks of failed QPs
  // written again, questions asked and answered about them, clear-to-sends
  // whose write failed sent again over the side connection.
  uint64_t zcopyResent = 0, ctsResent = 0, zcopyDuplicates = 0;
  uint64_t zcopyLandedAnyway = 0;  // failed writes found landed (only their ACK was lost)
  int zcopyQueries = 0, zcopyAnswers = 0;
};

class IbEndpoint final : public Endpoint {
 public:
  // `keys`: this connection's verbs keys (security/channel_keys.h) when
  // GDR_ENCRYPT=1, else null. They are copied, not kept.
  // `devs`: the devices this rank's QPs go over (1 to kMaxIbDevices).
  IbEndpoint(std::vector<std::shared_ptr<IbDevice>> devs, const IbEndpointConfig& cfg,
             const security::SessionKeys* keys = nullptr);
  IbEndpoint(std::shared_ptr<IbDevice> dev, const IbEndpointConfig& cfg,
             const security::SessionKeys* keys = nullptr)
      : IbEndpoint(std::vector<std::shared_ptr<IbDevice>>{std::move(dev)}, cfg, keys) {}
  ~IbEndpoint() override;

  // Set-up: local info for the peer, then the peer's info (QPs to RTS).
  IbConnInfo localInfo() const;
  void connect(const IbConnInfo& remote, std::unique_ptr<Endpoint> side);

  const char* name() const override { return "ib"; }
  int peer() const override { return cfg_.peerRank; }
  // kCapDeviceMemory when gpuSendsDirect() (dma-buf or nvidia-peermem, or
  // the software NIC): a device send buffer is registered and read by the
  // NIC, a device receive buffer of a rendezvous message is registered and
  // written by it; an eager message into a device buffer lands in a host slot
  // and goes on by one CUDA copy (gpu_copy.h). Reductions into device memory
  // are not taken (the CPU reduces). Without GPUDirect a device send buffer is
  // refused with NotSupported and the caller stages. Under GDR_ENCRYPT the CPU
  // cannot seal a device buffer, so device sends are refused the same way
  // (the caller stages them) unless their payload is pre-sealed
  // (kSigPreSealed), which may still go direct.
  uint32_t capabilities() const override {
    return kCapSingleCopy | (gpuSendsDirect() ? kCapDeviceMemory : 0u);
  }
  bool gpuSendsDirect() const { return cfg_.gpuMode != GdrMode::Staged && !cipher_; }
  bool encrypted() const { return cipher_ != nullptr; }
  void postSend(SendOp* op) override;
  void postRecv(RecvOp* op) override { recvs_.push_back(op); }
  bool progress() override;
  void checkPeer() override;
  void sendAbort(gdrResult_t code, const std::string& reason) noexcept override;
  void reset() noexcept override;

  IbStats stats() const;
  RegCache& regCache() { return *devs_[0].regs; }
  // The device QP q is on (tests, logs).
  const IbDevice& deviceOf(int q) const { return *devs_[devOf(q)].dev; }
  // Tests only: the next writes use a wrong remote key, so the peer's NIC
  // rejects them and this side sees a real error completion.
  void breakRemoteKeyForTest() {
    for (uint32_t& k : remote_.qpSlotsRkey) k ^= 0x5a5a5a5a;
    keyXor_ = 0x5a5a5a5a;
  }
  size_t zcopyBytes() const { return zBytes_; }

 private:
  struct PendingSend {
    SendOp* op;
    uint64_t id;
    const RegCache::Entry* reg[kMaxIbDevices] = {};  // the payload on each device
    int wrsLeft = 0;
    bool allPosted = false;
    // rendezvous (ib_zcopy.cc)
    bool rndv = false, announced = false, viaSlots = false;
    uint64_t ticket = 0;
    ZcopyCts cts{};
  };
  struct ZRecv {  // a receive that gave out a clear-to-send
    RecvOp* op;
    uint64_t ticket;
    const RegCache::Entry* reg[kMaxIbDevices] = {};  // the buffer on each device
    uint64_t chunks = 0, landed = 0;
    bool direct = false, announced = false;
    // Chunks this side told the sender had not landed (ib_zfailover.cc):
    // their copies are on their way, and the receive waits for them.
    std::vector<uint32_t> owed;
  };
  // A zero-copy write that failed with its QP, and what became of it.
  struct ZLost {
    int q;       // the QP it failed on
    bool asked;  // the peer was asked whether it landed
    uint64_t pid, ticket;
    uint32_t idx;
  };
  enum class Rndv { Wait, Done, Slots };
  struct ChunkTrack {
    uint64_t pendingId;
    size_t bytes;
    double occupancy;
    double sentUs;
    int dev;  // whose congestion window it is charged to (the device of its last write)
  };
  struct Ctrl;
  // One device's share: its completion queue, this side's regions
  // registered on it, and its registration caches (sends, zero-copy receives).
  struct DevSide {
    std::shared_ptr<IbDevice> dev;
    ibv_cq* cq = nullptr;
    ibv_mr* slotsMr = nullptr;
    ibv_mr* ctrlMr = nullptr;
    ibv_mr* ctsMr = nullptr;
    ibv_mr* ringMr = nullptr;  // GDR_ENCRYPT=1 only
    std::unique_ptr<RegCache> regs, rregs;
  };
  // A lane's place: device index and the index into that device's ports().
  struct Rail {
    int dev, port;
  };
  // ib_dev_side.cc: the set-up on each device.
  static std::vector<Rail> railsOf(const std::vector<std::shared_ptr<IbDevice>>& devs);
  std::vector<CcPath> ccPaths() const;
  void openDevSide(DevSide& d, const security::SessionKeys* keys);
  ibv_qp* createQp(int q);
  void closeDevSide(DevSide& d);
  size_t ctrlBytes() const;  // the control block with its nSlots headers
  int devOf(int q) const { return rails_[lanes_.port(q)].dev; }
  const IbDevice::Port& portOf(int q) const {
    const Rail& r = rails_[lanes_.port(q)];
    return devs_[r.dev].dev->ports()[r.port];
  }
  DevSide& sideOf(int q) { return devs_[devOf(q)]; }
  void acquireSendRegs(PendingSend& p);
  void releaseRegs(const RegCache::Entry* const* regs, bool recv);

  bool pollCq();
  bool pollCqOf(int d);
  bool postChunks();
  void sealAhead();
  bool consumeChunks();
  void checkChunk(const ChunkHdr* h, const RecvOp* op, uint32_t slot) const;
  void popRecv();
  // Whether op's destination is device memory (asked once per receive).
  bool dstOnDevice(const RecvOp* op);
  void postSlotWrite(int q, ibv_sge* sge, int nsge, size_t len, PendingSend& p, uint64_t inWindow);
  // The write of chunk `seq` into its slot on QP `q` (first send or resend).
  void writeSlot(int q, ibv_sge* sge, int nsge, uint64_t seq);
  // Chunk `seq` is acknowledged (or known consumed): its message may be done.
  void chunkDone(uint64_t seq);
  // ib_failover.cc: a failed completion of a QP that can hand its work to
  // the others (true: handled), and the resends of its chunks.
  bool failover(const ibv_wc& wc, int d);
  void qpDown(int q, const ibv_wc& wc, bool idle);
  void tellDown(int q, int status);  // the QP-down notice to the peer (qp_notice.h)
  bool portActive(int q) const;  // whether QP q's port is still active
  bool portGoing(int q) const;   // whether it is down, or goes down within 100 ms
  // A slow wait's look at the live QPs' ports (every kPortCheck): a port
  // found down takes its QPs out of service, as a failed completion would.
  void checkPorts();
  void takePortDown(int q, int status, const char* why);  // q's port: its live QPs (and the peer's)
  bool resendChunks(uint64_t consumed);
  // The peer's notices of QPs it took down: this side's end of each goes to
  // the error state, so its writes flush and fail over now.
  void takePeerNotices();
  int pickQp(uint64_t key) const { return lanes_.pick(static_cast<uint64_t>(cfg_.peerRank), key); }
  // The QP for the next eager chunk of `op`: pickQp's, or with several
  // devices one whose device's window has room when pickQp's has none.
  int placeChunk(const SendOp& op);
  // The device (congestion window) chunk `seq` would go on now.
  int ccPathOf(uint64_t seq) const {
    const int q = pickQp(seq);
    return q < 0 ? 0 : devOf(q);
  }
  // The header sent in front of chunk `seq`, and the peer's count of landed
  // zero-copy chunks (both in the control block).
  ChunkHdr& slotHdr(uint64_t seq);
  uint64_t peerLanded() const;
  // ib_zcopy.cc
  bool issueCts();
  Rndv sendRendezvous(PendingSend& p, uint64_t consumed);
  size_t postZcopyWrite(int q, PendingSend& p, uint32_t idx, const char* what);
  Rndv recvRendezvous(RecvOp* op);
  void onCts(uint32_t imm);
  void onZcopyLanded(uint32_t imm, uint32_t qpn);
  void dropRendezvous() noexcept;
  // Which chunks of receive ticket t have landed (a bit each, reused by
  // the ticket kCtsSlots later).
  std::vector<uint64_t>& landedBits(uint64_t t) { return zBits_[t % kCtsSlots]; }
  // ib_zfailover.cc: rendezvous work of failed QPs.
  void zcopyLost(int q, uint64_t v);
  void eagerLost(int q, uint64_t seq);  // GDR_ENCRYPT: asked about before a resend
  void ctsLost(int q, uint64_t ticket);
  bool zRecover();
  void settleLanded(const ZLost& z);
  bool takeRendezvousNotice(const std::string& bytes);
  void onZQuery(int q, const std::vector<ZChunkRef>& chunks);
  void onZAnswer(int q, const std::vector<ZChunkRef>& chunks, const std::vector<uint8_t>& landed);
  void onCtsCopy(int q, const ZcopyCts& c);
  // This side's end of QP q leaves service (the peer's notice, question or
  // clear-to-send copy says the pair failed): nothing more lands through it.
  void takeDown(int q, int status, const char* why);
  uint64_t peerDone() const;  // receive tickets the peer completed (credit word)
  uint64_t peerConsumed() const;  // eager chunks the peer consumed (credit word)
  void sendSide(const std::string& frame, const char* what);
  [[noreturn]] void failAuth(uint64_t seq);
  void postCredit();
  void postRecvWr(int q);
  int qpIndex(uint32_t qpn, int d) const;  // QP numbers are per device
  [[noreturn]] void failWc(const ibv_wc& wc, int d);
  [[noreturn]] void failPost(const char* what, int q, int err);
  double nowUs() const;

  const IbvApi* api_;
  IbEndpointConfig cfg_;
  std::vector<Rail> rails_;  // QpLanes' ports: every active port of every device
  std::string devNames_;     // "softnic0" or "mlx5_0+mlx5_1", for messages
  std::vector<DevSide> devs_;
  QpLanes lanes_;       // which QP (and port) carries what, which are down
  ResendQueue resend_;  // chunks of failed QPs
  ChunkPolicy policy_;
  std::unique_ptr<PeerCc> cc_;  // per device: bytes in flight and the chunk size it allows
  std::unique_ptr<Endpoint> side_;
  SideLiveness liveness_;  // of the peer, from side_ (slow waits only)
  std::chrono::steady_clock::time_point nextPortCheck_{};  // checkPorts
  std::exception_ptr sideError_;  // what side_ said while nothing was owed (checkPeer)
  std::vector<ibv_qp*> qps_;
  std::vector<uint32_t> psn_;
  std::vector<int> sqUsed_;
  int sqCap_ = 0;
  // receive slots (peers write here) and the control block (credit word,
  // credit sources, chunk headers to send)
  char* slots_ = nullptr;
  size_t slotStride_ = 0;
  Ctrl* ctrl_ = nullptr;
  // GDR_ENCRYPT=1 only: the sealing ring (registered) and the chunk
  // sealed-ahead cursor: sends_[sealIdx_] from byte sealOff_, chunk sealSeq_.
  std::unique_ptr<ChunkCipher> cipher_;
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
  // rendezvous: the mailbox (kCtsSlots clear-to-sends written by the peer,
  // then kCtsSlots sources of this side's own), tickets and counts
  size_t zBytes_ = 0;
  const RecvOp* kindOp_ = nullptr;  // dstOnDevice's last answer
  const void* kindDst_ = nullptr;
  bool kindDev_ = false;
  ZcopyCts* cts_ = nullptr;
  uint32_t keyXor_ = 0;
  CtsSeen ctsSeen_;           // clear-to-sends arrived (sender)
  uint64_t sTicket_ = 0;      // next rendezvous send
  uint64_t zPosted_ = 0;      // zero-copy chunks written
  std::deque<ZRecv> zrecvs_;  // receives with a clear-to-send out, by ticket
  size_t scanned_ = 0;        // recvs_ looked at for a clear-to-send
  uint64_t rTicket_ = 0, rDone_ = 0;
  uint64_t zLanded_ = 0, zCreditPosted_ = 0, zDoneCredited_ = 0;
  std::vector<uint64_t> zBits_[kCtsSlots];
  std::vector<ZLost> zLost_;    // sender: failed zero-copy writes, oldest first
  std::deque<ZLost> zResend_;   // sender: those that did not land, to write again
  std::set<uint64_t> eOwed_;    // receiver, GDR_ENCRYPT: eager chunks answered "not landed"
  IbStats stats_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace gdr::transport::ib

// What crosses the wire for the verbs transport: the connection info one rank
// gives another at set-up, and the header in front of every chunk.
#pragma once

#include <cstdint>

#include "transport/transport.h"

namespace gdr::transport::ib {

constexpr int kMaxQpsPerPeer = 8;
// Verbs devices (HCAs) one rank's connections may use at once (GDR_IB_HCA
// listing several); each has its own keys, so the keys below are per QP.
constexpr int kMaxIbDevices = 4;

// Rank A's description of its side of the A->B connection, read by B.
// nQps == 0: A has no usable verbs device (B falls back to TCP too).
struct IbConnInfo {
  uint8_t gid[16];
  uint16_t lid;
  uint8_t mtu;  // ibv_mtu
  uint8_t nQps;
  uint32_t nSlots;
  uint64_t slotStride;  // bytes per receive slot, header included
  uint64_t slotsAddr;   // A's receive slots (B writes chunks there)
  uint64_t creditAddr;  // A's credit word (B writes how many chunks it consumed)
  uint32_t qpn[kMaxQpsPerPeer];
  uint32_t psn[kMaxQpsPerPeer];
  uint64_t ctsAddr;     // A's rendezvous mailbox (B writes its clear-to-send there)
  uint32_t zcopyBytes;  // A's zero-copy threshold (0: off); the ranks must agree
  // Where each of A's QPs is: the address of the port it is bound to (QPs go
  // round A's active ports), so B's QP q talks to that port.
  uint8_t qpGid[kMaxQpsPerPeer][16];
  uint16_t qpLid[kMaxQpsPerPeer];
  // A's regions are the same memory on each of its devices, registered on
  // each: B's writes on its QP q name the keys of the device A's QP q is on
  // (qpDev[q], also the index of that device's key in A's clear-to-sends).
  uint32_t qpSlotsRkey[kMaxQpsPerPeer];
  uint32_t qpCreditRkey[kMaxQpsPerPeer];
  uint32_t qpCtsRkey[kMaxQpsPerPeer];
  uint8_t qpDev[kMaxQpsPerPeer];
};

// What a write's immediate says. Bit 31 clear: an eager chunk into a slot,
// the low 31 bits of its sequence number. Otherwise the top two bits tell a
// rendezvous write: a zero-copy data chunk (the message's ticket, low
// kZTicketBits, and the chunk's index, kZChunkBits) or a clear-to-send (the
// ticket, low 30 bits).
constexpr uint32_t kImmKindMask = 0xC0000000u;
constexpr uint32_t kImmZcopy = 0x80000000u;
constexpr uint32_t kImmCts = 0xC0000000u;
constexpr uint32_t kImmSeqMask = 0x7fffffffu;
constexpr int kZTicketBits = 10;
constexpr int kZChunkBits = 20;
constexpr uint32_t kImmZTicketMask = (1u << kZTicketBits) - 1;
constexpr uint32_t kImmZChunkMask = (1u << kZChunkBits) - 1;

// Clear to send: the receiver's answer to a message of at least the
// zero-copy threshold, RDMA-written into the sender's mailbox slot
// ticket % kCtsSlots. `direct`: write the payload at addr, `chunk` bytes per
// write, each with the key rkey[d] of the receiver's device d that the
// write's QP lands on (the receiver's qpDev), each one's immediate naming
// (ticket, index); otherwise
// (a reduction, which reads the data once anyway) send it through the slots.
constexpr uint32_t kCtsSlots = 8;
// Zero-copy chunks a sender may have written beyond the receiver's count of
// landed ones (each takes one of the receiver's posted receives).
constexpr uint32_t kZWindow = 16;
struct alignas(64) ZcopyCts {
  uint64_t ticket;  // the message's place among this direction's rendezvous messages
  uint64_t addr;
  uint64_t bytes;  // what the receiver expects
  OpSig sig;
  uint32_t rkey[kMaxIbDevices];
  uint32_t chunk;
  uint8_t direct;
};
static_assert(sizeof(ZcopyCts) == 128, "a clear-to-send is two cache lines");

constexpr uint16_t kChunkMagic = 0x4447;  // "GD"
// Version 2 added `flags` and `tag` (GDR_ENCRYPT); ranks of one job run one build.
constexpr uint8_t kChunkVersion = 2;

// ChunkHdr::flags bits.
enum ChunkFlags : uint8_t {
  kChunkSealed = 1u << 0,    // payload is AES-GCM ciphertext; tag covers header and payload
  kChunkAuthOnly = 1u << 1,  // payload pre-sealed by the GPU (kSigPreSealed); tag covers the header
  kChunkRendezvous = 1u << 2,  // no payload: the message follows by rendezvous (ZcopyCts)
};

// Written by the sender in front of each chunk's payload, in the same RDMA
// write, so data and its description land together; the immediate carries
// the chunk's sequence number. Under GDR_ENCRYPT=1 the bytes before `tag` are
// the AES-GCM additional data and the sequence number is the nonce's counter
// (transport/ib/chunk_crypto.h); without it `tag` is left as it is.
struct alignas(64) ChunkHdr {
  uint16_t magic;
  uint8_t version;
  uint8_t flags;      // ChunkFlags
  uint32_t len;       // payload bytes in this chunk
  OpSig sig;          // the message's operation
  uint64_t msgBytes;  // the whole message's size
  uint64_t offset;    // this chunk's place in the message
  uint8_t tag[16];    // AES-GCM tag (GDR_ENCRYPT=1)
};
static_assert(sizeof(ChunkHdr) == 64, "chunk header is one cache line");
static_assert(sizeof(OpSig) == 24, "the tag must end the chunk header");

}  // namespace gdr::transport::ib

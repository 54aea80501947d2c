// What crosses the wire for the verbs transport: the connection info one rank
// gives another at set-up, and the header in front of every chunk.
#pragma once

#include <cstdint>

#include "transport/transport.h"

namespace gdr::transport::ib {

constexpr int kMaxQpsPerPeer = 8;

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
  uint32_t slotsRkey;
  uint32_t creditRkey;
  uint32_t qpn[kMaxQpsPerPeer];
  uint32_t psn[kMaxQpsPerPeer];
};

constexpr uint32_t kChunkMagic = 0x47444942;  // "GDIB"

// Written by the sender in front of each chunk's payload, in the same RDMA
// write (a second scatter-gather entry), so data and its description land
// together; the immediate carries the chunk's sequence number.
struct alignas(64) ChunkHdr {
  uint32_t magic;
  uint32_t len;       // payload bytes in this chunk
  OpSig sig;          // the message's operation
  uint64_t msgBytes;  // the whole message's size
  uint64_t offset;    // this chunk's place in the message
};
static_assert(sizeof(ChunkHdr) == 64, "chunk header is one cache line");

}  // namespace gdr::transport::ib

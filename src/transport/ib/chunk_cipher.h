// GDR_ENCRYPT=1 on a verbs endpoint: the sealing and opening of its chunks,
// pipelined on the crypto pool (security/crypto_pool.h, GDR_ENCRYPT_THREADS).
//
// Sending: chunks are sealed ahead of the wire into a ring of bounce buffers
// (registered by the endpoint), one entry per chunk, [ChunkHdr][ciphertext];
// the entry of chunk s is s % entries. While chunk k is on the wire, chunks
// k+1.. are being sealed by the pool's workers. An entry is reused only after
// its chunk's send has completed locally, so memory stays bounded
// (entries x entry bytes). A pre-sealed chunk's entry holds only its header;
// its payload goes from the caller's buffer.
//
// Receiving: a chunk that has landed in its slot may be opened ahead by a
// worker while earlier chunks are delivered; the endpoint delivers a slot's
// bytes only after open() says it verified. Small chunks are sealed and
// opened on the calling thread: a hand-off costs more than the crypto.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "security/handshake.h"
#include "transport/ib/ib_wire.h"

namespace gdr::transport::ib {

class ChunkCipher {
 public:
  enum Opened { kOpenBusy = 0, kOpenOk = 1, kOpenFailed = 2 };

  // `entries` bounce buffers of `entryBytes` (header included) for sending;
  // `slots` receive slots whose payloads hold at most `maxPayload` bytes.
  ChunkCipher(const security::SessionKeys& keys, uint32_t entries, size_t entryBytes,
              uint32_t slots, size_t maxPayload);
  ~ChunkCipher();  // waits for the jobs in flight, wipes the keys
  ChunkCipher(const ChunkCipher&) = delete;
  ChunkCipher& operator=(const ChunkCipher&) = delete;

  // ---- sending
  char* ringBase() const { return ring_; }
  size_t ringBytes() const { return entryBytes_ * entries_; }
  // Whether chunk `seq` has a free entry (every chunk before it was handed out).
  bool canSeal(uint64_t seq) const { return seq - done_ < entries_; }
  // Hands out chunk `seq` (the next one): `h` without flags and tag, its
  // payload h.len bytes at `src`, which must stay put until sealed(seq).
  // preSealed: only the header is authenticated.
  void seal(uint64_t seq, const ChunkHdr& h, const void* src, bool preSealed);
  // Chunk `seq`'s entry ([header][ciphertext]) once sealed; null while it is
  // being sealed (a queued job may be run meanwhile).
  ChunkHdr* sealed(uint64_t seq);
  // Chunk `seq`'s send completed: its entry may be reused.
  void sent(uint64_t seq);
  // After a failure: waits for the sealing jobs, and forgets every chunk from
  // `seq` on (never sent, so their nonces were never seen).
  void dropFrom(uint64_t seq) noexcept;

  // ---- receiving
  // Chunk `seq` landed in `slotBase` (slot `slot`): opened by a worker if big.
  void openAhead(uint64_t seq, uint32_t slot, char* slotBase);
  // Chunk `seq` in its slot, verified and decrypted in place (on this thread
  // unless a worker did it): kOpenOk, kOpenFailed (payload not to be used),
  // or kOpenBusy (a worker is at it; call again). Its header must have been
  // checked for a sane length.
  Opened open(uint64_t seq, uint32_t slot, char* slotBase);

  // Waits for every job in flight (before memory they use may go away).
  void quiesce() noexcept;

 private:
  struct Entry {
    std::atomic<int> state{0};
    bool done = false;  // send completed
  };
  uint8_t sendKey_[security::kKeyBytes];
  uint8_t recvKey_[security::kKeyBytes];
  uint32_t entries_;
  size_t entryBytes_;
  char* ring_ = nullptr;
  std::unique_ptr<Entry[]> ent_;
  uint64_t done_ = 0;    // chunks before this one: entries free
  uint64_t handed_ = 0;  // chunks handed out
  uint32_t slots_;
  size_t maxPayload_;
  std::unique_ptr<std::atomic<int>[]> slotState_;
};

}  // namespace gdr::transport::ib

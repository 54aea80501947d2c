// GDR_ENCRYPT=1 on a socket: the byte stream each way is a sequence of
// AES-256-GCM records (security/aead.h), pipelined with the transfer.
//
// SealPipe seals up to kPipeRecords records ahead of the socket: while record
// k is being sent, records k+1.. are being sealed by the crypto pool's workers
// (security/crypto_pool.h). OpenPipe reads records ahead into as many slots
// and hands each complete one to the pool to open while the next arrives;
// records are delivered strictly in order, only after their tag verified.
// Counters (nonces) are taken in stream order when a record is handed out,
// so however many threads seal, every record has its own nonce, once.
//
// Both keep recv()/sendmsg()-like conventions so the endpoint's framing code
// is the same with and without encryption.
//
// Clear records carry payloads the GPU already sealed end to end
// (transport::kSigPreSealed): the length word has kClearRecord set, no tag
// follows and no counter is taken. A receiver accepts one only where the
// authenticated frame header before it announced a pre-sealed payload
// (recv(..., clear = true)), and a sealed record only elsewhere, so clear
// records can be neither slipped into nor cut out of the sealed stream.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "security/aead.h"

namespace gdr::transport::sock {

constexpr size_t kPipeRecords = 8;
constexpr uint32_t kClearRecord = 0x80000000u;  // flag in a record's length word
constexpr size_t kRecordWireMax = security::kRecordHdrBytes + security::kMaxRecordBytes + security::kTagBytes;

// The length of the next record from its 4-byte header, or what is wrong
// with it (an empty or oversized record). `clear` (may be null) tells a
// clear record; without it a clear record is malformed.
const char* checkRecordLen(const uint8_t hdr[security::kRecordHdrBytes], uint32_t* len, bool* clear = nullptr);

struct RecordSlot {
  std::vector<uint8_t> buf;
  size_t plain = 0;  // plaintext bytes of the record
  size_t wire = 0;   // its bytes on the wire (0: header not read yet)
  size_t pos = 0;    // bytes sent / received / delivered so far
  bool clear = false;  // a clear record (no tag, nothing to open)
  std::atomic<int> state{0};  // kBusy, kReady, kFailed
};

// What both directions hold: the key, the socket, the next counter and a
// ring of slots (records head .. head + count - 1 in flight).
struct PipeState {
  PipeState(const uint8_t k[security::kKeyBytes], int f);
  ~PipeState();  // wipes the key
  // Waits for the crypto jobs of the records in flight.
  void waitAll() noexcept;
  uint8_t key[security::kKeyBytes];
  int fd;
  uint64_t counter = 0;
  std::unique_ptr<RecordSlot[]> slots;
  size_t head = 0, count = 0;
};

class SealPipe {
 public:
  SealPipe(const uint8_t key[security::kKeyBytes], int fd) : st_(key, fd) {}
  ~SealPipe() { reset(); }
  // `iov` starts at the first plaintext byte not yet wholly on the wire and
  // must not change until it is (the records ahead were sealed from it).
  // Returns how many plaintext bytes are now wholly on the wire, or -1 with
  // errno (EAGAIN: nothing could move yet).
  ssize_t send(const iovec* iov, int n);
  // The same for a pre-sealed payload, sent as clear records straight from
  // `iov` (no copy). Only when !busy(); returns payload bytes on the wire.
  ssize_t sendClear(const iovec* iov, int n);
  // Records sealed or being sealed and not yet sent, or a clear record
  // begun and not finished.
  bool busy() const { return st_.count != 0 || clearLeft_ != 0 || clearHdrSent_ != 0; }
  // Waits for the sealing jobs (before the buffers they read may go away)
  // and drops the records not sent.
  void reset() noexcept;

 private:
  void fill(const iovec* iov, int n, size_t skip);
  PipeState st_;
  size_t queuedPlain_ = 0;  // plaintext bytes in the records in flight
  // the clear record being sent: its length word, how much of that is out,
  // and its payload bytes still to send
  uint32_t clearHdr_ = 0;
  size_t clearHdrSent_ = 0, clearLeft_ = 0;
};

class OpenPipe {
 public:
  enum class Failure { None, Malformed, Forged };
  OpenPipe(const uint8_t key[security::kKeyBytes], int fd) : st_(key, fd) {}
  ~OpenPipe() { st_.waitAll(); }
  // Like recv(): bytes delivered, 0 at end of stream (once every whole
  // record before it was delivered), or -1 with errno; errno EBADMSG with
  // failure() saying why when the stream is malformed or a record failed
  // authentication.
  // `clear`: the bytes wanted are a pre-sealed payload (clear records).
  ssize_t recv(void* buf, size_t len, bool clear = false);
  Failure failure() const { return failure_; }
  const char* malformedWhy() const { return why_; }

 private:
  bool readAhead();
  PipeState st_;  // count: whole records received (being opened or opened)
  bool eof_ = false;
  Failure failure_ = Failure::None;
  const char* why_ = nullptr;
};

}  // namespace gdr::transport::sock

#include "transport/ib/chunk_cipher.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>

#include "core/error.h"
#include "security/crypto_pool.h"
#include "transport/ib/chunk_crypto.h"

namespace gdr::transport::ib {

namespace {

enum State : int { kIdle = 0, kBusy = 1, kReady = 2, kFailed = 3 };
// Below this a chunk is sealed or opened on the calling thread.
constexpr size_t kInlineBytes = 16 * 1024;

int settle(const std::atomic<int>& s) {
  int st;
  while ((st = s.load(std::memory_order_acquire)) == kBusy) {
    security::CryptoPool* pool = security::CryptoPool::get();
    if (!pool || !pool->runOne()) std::this_thread::yield();
  }
  return st;
}

// A busy state once more after running one queued job, if there was one.
int poke(const std::atomic<int>& s) {
  int st = s.load(std::memory_order_acquire);
  if (st != kBusy) return st;
  if (security::CryptoPool* pool = security::CryptoPool::get()) pool->runOne();
  return s.load(std::memory_order_acquire);
}

}  // namespace

ChunkCipher::ChunkCipher(const security::SessionKeys& keys, uint32_t entries, size_t entryBytes,
                         uint32_t slots, size_t maxPayload)
    : entries_(entries),
      entryBytes_(entryBytes),
      ent_(new Entry[entries]),
      slots_(slots),
      maxPayload_(maxPayload),
      slotState_(new std::atomic<int>[slots]) {
  std::memcpy(sendKey_, keys.send, sizeof(sendKey_));
  std::memcpy(recvKey_, keys.recv, sizeof(recvKey_));
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* p = nullptr;
  if (posix_memalign(&p, page, (ringBytes() + page - 1) / page * page) != 0) throw std::bad_alloc();
  ring_ = static_cast<char*>(p);
  for (uint32_t i = 0; i < slots_; ++i) slotState_[i].store(kIdle, std::memory_order_relaxed);
}

ChunkCipher::~ChunkCipher() {
  quiesce();
  security::wipe(sendKey_, sizeof(sendKey_));
  security::wipe(recvKey_, sizeof(recvKey_));
  std::free(ring_);
}

void ChunkCipher::quiesce() noexcept {
  for (uint32_t i = 0; i < entries_; ++i) settle(ent_[i].state);
  for (uint32_t i = 0; i < slots_; ++i) settle(slotState_[i]);
}

// ---- sending

void ChunkCipher::seal(uint64_t seq, const ChunkHdr& h, const void* src, bool preSealed) {
  if (seq != handed_ || !canSeal(seq) || h.len > entryBytes_ - sizeof(ChunkHdr))
    throw InternalError("verbs chunk handed out to be sealed out of order or oversized");
  Entry& e = ent_[seq % entries_];
  char* base = ring_ + (seq % entries_) * entryBytes_;
  auto* hdr = reinterpret_cast<ChunkHdr*>(base);
  *hdr = h;
  e.done = false;
  e.state.store(kBusy, std::memory_order_relaxed);
  ++handed_;
  const bool flip = security::testing::takeCorruptRequest();
  auto job = [this, &e, hdr, seq, src, preSealed, flip]() {
    try {
      sealChunk(sendKey_, seq, *hdr, src, reinterpret_cast<uint8_t*>(hdr + 1), preSealed, flip);
      e.state.store(kReady, std::memory_order_release);
    } catch (...) {
      e.state.store(kFailed, std::memory_order_release);
    }
  };
  security::CryptoPool* pool = security::CryptoPool::get();
  if (pool && !preSealed && h.len >= kInlineBytes)
    pool->submit(job);
  else
    job();
}

ChunkHdr* ChunkCipher::sealed(uint64_t seq) {
  Entry& e = ent_[seq % entries_];
  int st = poke(e.state);
  if (st == kBusy) return nullptr;
  if (st != kReady) throw InternalError("AES-GCM sealing of a verbs chunk failed (OpenSSL)");
  return reinterpret_cast<ChunkHdr*>(ring_ + (seq % entries_) * entryBytes_);
}

void ChunkCipher::sent(uint64_t seq) {
  if (seq < done_ || seq >= handed_) return;
  ent_[seq % entries_].done = true;
  while (done_ < handed_ && ent_[done_ % entries_].done) {
    ent_[done_ % entries_].done = false;
    ++done_;
  }
}

void ChunkCipher::dropFrom(uint64_t seq) noexcept {
  for (uint32_t i = 0; i < entries_; ++i) {
    settle(ent_[i].state);
    ent_[i].state.store(kIdle, std::memory_order_relaxed);
    ent_[i].done = false;
  }
  done_ = handed_ = seq;
}

// ---- receiving

void ChunkCipher::openAhead(uint64_t seq, uint32_t slot, char* slotBase) {
  security::CryptoPool* pool = security::CryptoPool::get();
  auto* h = reinterpret_cast<ChunkHdr*>(slotBase);
  if (!pool || h->len < kInlineBytes || h->len > maxPayload_) return;  // opened on delivery
  std::atomic<int>& st = slotState_[slot];
  st.store(kBusy, std::memory_order_relaxed);
  pool->submit([this, &st, h, seq]() {
    bool ok = openChunk(recvKey_, seq, *h, reinterpret_cast<uint8_t*>(h + 1));
    st.store(ok ? kReady : kFailed, std::memory_order_release);
  });
}

ChunkCipher::Opened ChunkCipher::open(uint64_t seq, uint32_t slot, char* slotBase) {
  std::atomic<int>& st = slotState_[slot];
  int s = poke(st);
  if (s == kBusy) return kOpenBusy;
  st.store(kIdle, std::memory_order_relaxed);
  if (s == kIdle) {
    auto* h = reinterpret_cast<ChunkHdr*>(slotBase);
    s = openChunk(recvKey_, seq, *h, reinterpret_cast<uint8_t*>(h + 1)) ? kReady : kFailed;
  }
  return s == kReady ? kOpenOk : kOpenFailed;
}

}  // namespace gdr::transport::ib

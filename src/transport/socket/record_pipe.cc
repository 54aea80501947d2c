#include "transport/socket/record_pipe.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "security/crypto_pool.h"

namespace gdr::transport::sock {

namespace {

enum SlotState : int { kBusy = 0, kReady = 1, kFailed = 2 };
// Below this a record is sealed or opened on the calling thread: a hand-off
// costs more than the crypto (a few microseconds).
constexpr size_t kInlineBytes = 16 * 1024;

// The record the caller needs next (the pipe's head) is sealed or opened on
// the caller's thread whatever its size: the caller would only wait for it,
// and a worker that took it and then lost its core stalls the caller for a
// scheduler slice. The pool gets the records behind the head, whose work
// then overlaps the caller's send or copy of the head.
bool handOff(const security::CryptoPool* pool, size_t plain, bool head) {
  return pool && !head && plain >= kInlineBytes;
}

std::unique_ptr<RecordSlot[]> makeSlots() {
  auto s = std::make_unique<RecordSlot[]>(kPipeRecords);
  for (size_t i = 0; i < kPipeRecords; ++i) s[i].buf.resize(kRecordWireMax);
  return s;
}

// Waits for a slot's job, running queued jobs meanwhile.
int waitSlot(const RecordSlot& s) {
  int st;
  while ((st = s.state.load(std::memory_order_acquire)) == kBusy) {
    security::CryptoPool* pool = security::CryptoPool::get();
    if (!pool || !pool->runOne()) std::this_thread::yield();
  }
  return st;
}

}  // namespace

const char* checkRecordLen(const uint8_t hdr[security::kRecordHdrBytes], uint32_t* len, bool* clear) {
  std::memcpy(len, hdr, sizeof(*len));
  const bool isClear = (*len & kClearRecord) != 0;
  if (clear) *clear = isClear;
  else if (isClear) return "clear record where none may be";
  *len &= ~kClearRecord;
  if (*len == 0) return "empty encrypted record";
  if (*len > security::kMaxRecordBytes) return "oversized encrypted record";
  return nullptr;
}

PipeState::PipeState(const uint8_t k[security::kKeyBytes], int f) : fd(f), slots(makeSlots()) {
  std::memcpy(key, k, sizeof(key));
}

PipeState::~PipeState() { security::wipe(key, sizeof(key)); }

void PipeState::waitAll() noexcept {
  for (size_t i = 0; i < count; ++i) waitSlot(slots[(head + i) % kPipeRecords]);
}

// ---- sending ----

void SealPipe::reset() noexcept {
  st_.waitAll();
  st_.head = st_.count = queuedPlain_ = 0;
}

// Hands out records for the bytes of `iov` after `skip` (those already in
// records), while slots are free. Without workers, one record at a time.
void SealPipe::fill(const iovec* iov, int n, size_t skip) {
  security::CryptoPool* pool = security::CryptoPool::get();
  while (st_.count < kPipeRecords && (pool || st_.count == 0)) {
    security::Piece pieces[4];
    int np = 0;
    size_t off = skip + queuedPlain_, take = 0;
    for (int i = 0; i < n && np < 4 && take < security::kMaxRecordBytes; ++i) {
      size_t len = iov[i].iov_len;
      if (off >= len) {
        off -= len;
        continue;
      }
      size_t m = std::min(len - off, security::kMaxRecordBytes - take);
      pieces[np++] = {static_cast<const char*>(iov[i].iov_base) + off, m};
      take += m;
      off = 0;
    }
    if (take == 0) return;
    const bool head = st_.count == 0;
    RecordSlot& s = st_.slots[(st_.head + st_.count) % kPipeRecords];
    s.plain = take;
    s.wire = security::kRecordHdrBytes + take + security::kTagBytes;
    s.pos = 0;
    s.state.store(kBusy, std::memory_order_relaxed);
    uint64_t counter = security::takeCounter(st_.counter);
    bool flip = security::testing::takeCorruptRequest();
    ++st_.count;
    queuedPlain_ += take;
    auto job = [this, &s, counter, pieces, np, flip]() {
      try {
        security::sealRecord(st_.key, counter, pieces, np, static_cast<uint32_t>(s.plain), s.buf.data(), flip);
        s.state.store(kReady, std::memory_order_release);
      } catch (...) {
        s.state.store(kFailed, std::memory_order_release);
      }
    };
    if (handOff(pool, take, head))
      pool->submit(job);
    else job();
  }
}

ssize_t SealPipe::send(const iovec* iov, int n) {
  size_t done = 0;
  for (;;) {
    fill(iov, n, done);
    if (st_.count == 0) break;
    RecordSlot& s = st_.slots[st_.head];
    int st = s.state.load(std::memory_order_acquire);
    if (st == kBusy) {
      security::CryptoPool* pool = security::CryptoPool::get();
      if (pool && pool->runOne()) continue;
      if (done) break;
      st = waitSlot(s);  // the socket has room but the record is not sealed yet
    }
    if (st == kFailed) {
      errno = EIO;
      return -1;
    }
    while (s.pos < s.wire) {
      ssize_t w = ::send(st_.fd, s.buf.data() + s.pos, s.wire - s.pos, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (w < 0) {
        if (done) return static_cast<ssize_t>(done);
        return -1;
      }
      s.pos += static_cast<size_t>(w);
    }
    done += s.plain;
    queuedPlain_ -= s.plain;
    st_.head = (st_.head + 1) % kPipeRecords;
    --st_.count;
  }
  if (done) return static_cast<ssize_t>(done);
  errno = EAGAIN;
  return -1;
}

ssize_t SealPipe::sendClear(const iovec* iov, int n) {
  size_t done = 0;
  for (;;) {
    size_t avail = 0;
    for (int i = 0; i < n; ++i) avail += iov[i].iov_len;
    avail -= std::min(avail, done);
    if (clearLeft_ == 0 && clearHdrSent_ == 0) {
      if (avail == 0) break;
      clearLeft_ = std::min(avail, security::kMaxRecordBytes);
      clearHdr_ = static_cast<uint32_t>(clearLeft_) | kClearRecord;
    }
    // [rest of the length word][up to clearLeft_ payload bytes from `done` on]
    iovec out[5];
    int k = 0;
    if (clearHdrSent_ < sizeof(clearHdr_))
      out[k++] = {reinterpret_cast<char*>(&clearHdr_) + clearHdrSent_, sizeof(clearHdr_) - clearHdrSent_};
    size_t skip = done, want = clearLeft_;
    for (int i = 0; i < n && want && k < 5; ++i) {
      if (skip >= iov[i].iov_len) {
        skip -= iov[i].iov_len;
        continue;
      }
      size_t m = std::min(iov[i].iov_len - skip, want);
      out[k++] = {static_cast<char*>(iov[i].iov_base) + skip, m};
      want -= m;
      skip = 0;
    }
    msghdr mh{};
    mh.msg_iov = out;
    mh.msg_iovlen = static_cast<size_t>(k);
    ssize_t w = sendmsg(st_.fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0) {
      if (done) return static_cast<ssize_t>(done);
      return -1;
    }
    size_t wrote = static_cast<size_t>(w);
    size_t h = std::min(wrote, sizeof(clearHdr_) - clearHdrSent_);
    clearHdrSent_ += h;
    clearLeft_ -= wrote - h;
    done += wrote - h;
    if (clearLeft_ == 0 && clearHdrSent_ == sizeof(clearHdr_)) clearHdrSent_ = 0;  // record finished
    else break;  // the socket is full
  }
  if (done) return static_cast<ssize_t>(done);
  errno = EAGAIN;
  return -1;
}

// ---- receiving ----

// Reads into free slots and hands each whole record out to be opened.
// False with errno set on a socket error or a malformed record header.
bool OpenPipe::readAhead() {
  security::CryptoPool* pool = security::CryptoPool::get();
  while (st_.count < kPipeRecords && !eof_) {
    RecordSlot& s = st_.slots[(st_.head + st_.count) % kPipeRecords];
    size_t want = (s.wire ? s.wire : security::kRecordHdrBytes) - s.pos;
    ssize_t r = ::recv(st_.fd, s.buf.data() + s.pos, want, MSG_DONTWAIT);
    if (r == 0) eof_ = true;
    if (r < 0) return errno == EAGAIN || errno == EINTR;
    s.pos += static_cast<size_t>(r);
    if (!s.wire) {
      if (s.pos < security::kRecordHdrBytes) continue;
      uint32_t plain = 0;
      if ((why_ = checkRecordLen(s.buf.data(), &plain, &s.clear))) {
        failure_ = Failure::Malformed;
        errno = EBADMSG;
        return false;
      }
      s.plain = plain;
      s.wire = security::kRecordHdrBytes + plain + (s.clear ? 0 : security::kTagBytes);
      continue;
    }
    if (s.pos < s.wire) continue;
    s.pos = 0;  // now: plaintext bytes delivered
    ++st_.count;
    if (s.clear) {  // authenticated end to end by the GPU: nothing to open here
      s.state.store(kReady, std::memory_order_relaxed);
      continue;
    }
    s.state.store(kBusy, std::memory_order_relaxed);
    uint64_t counter = security::takeCounter(st_.counter);
    auto job = [this, &s, counter]() {
      bool ok = security::openRecord(st_.key, counter, s.buf.data(), s.plain);
      s.state.store(ok ? kReady : kFailed, std::memory_order_release);
    };
    if (handOff(pool, s.plain, st_.count == 1))
      pool->submit(job);
    else job();
  }
  return true;
}

ssize_t OpenPipe::recv(void* buf, size_t len, bool clear) {
  if (failure_ != Failure::None) {
    errno = EBADMSG;
    return -1;
  }
  if (!readAhead()) return -1;
  if (st_.count == 0) {
    if (eof_) return 0;
    errno = EAGAIN;
    return -1;
  }
  RecordSlot& s = st_.slots[st_.head];
  int st = s.state.load(std::memory_order_acquire);
  if (st == kBusy) {
    security::CryptoPool* pool = security::CryptoPool::get();
    if (!pool || !pool->runOne()) {
      errno = EAGAIN;
      return -1;
    }
    st = s.state.load(std::memory_order_acquire);
    if (st == kBusy) {
      errno = EAGAIN;
      return -1;
    }
  }
  if (st == kFailed) {
    failure_ = Failure::Forged;
    errno = EBADMSG;
    return -1;
  }
  if (s.clear != clear) {
    failure_ = Failure::Malformed;
    why_ = clear ? "a sealed record where the frame header announced a pre-sealed payload"
                 : "a clear record where a sealed one must be";
    errno = EBADMSG;
    return -1;
  }
  size_t n = std::min(len, s.plain - s.pos);
  std::memcpy(buf, s.buf.data() + security::kRecordHdrBytes + s.pos, n);
  s.pos += n;
  if (s.pos == s.plain) {
    s.pos = s.wire = s.plain = 0;
    s.clear = false;
    st_.head = (st_.head + 1) % kPipeRecords;
    --st_.count;
  }
  return static_cast<ssize_t>(n);
}

}  // namespace gdr::transport::sock

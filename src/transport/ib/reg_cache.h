// Registration cache: memory registered with the NIC once and reused.
//
// Entries are page-aligned ranges kept sorted by address, each with a
// reference count held by the operations in flight on it. A request covered
// by an existing entry is a hit. Unreferenced entries stay cached only when
// `keepUnused` is set and the keep policy accepts the request that created
// them: a pinned registration keeps the pages it saw, so a buffer that the
// program frees and the allocator maps again at the same address would
// silently send stale data. followUserRanges() makes the policy "inside a
// range of UserRanges" (gdrCommRegister, gdrMemAlloc) and drops entries when
// such a range goes away: every page of a kept entry then overlaps memory the
// program promised to keep until it tells us, so a hit is never stale.
// The device calls are injected, so the logic is tested without a NIC.
// Thread-safe: the owner's progress thread and a user thread freeing memory
// may use it at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace gdr::transport::ib {

struct Registration {
  void* handle = nullptr;  // ibv_mr* for the verbs back end
  uint32_t lkey = 0;
  uint32_t rkey = 0;
};

class RegCache {
 public:
  struct Entry {
    uintptr_t base;
    size_t len;
    Registration reg;
    int refs = 0;
    bool stale = false;  // invalidated while referenced: dropped on the last release
    bool keep = false;   // may stay registered while unused
  };
  struct Stats {
    uint64_t hits = 0, misses = 0, evictions = 0;
  };
  // Registers the page-aligned [base, base+len) that covers the request at
  // `addr` (asked about, e.g., which memory it is); throws on failure.
  using RegisterFn = std::function<Registration(uintptr_t base, size_t len, const void* addr)>;
  using DeregisterFn = std::function<void(const Registration&)>;
  using KeepFn = std::function<bool(const void* addr, size_t len)>;

  RegCache(RegisterFn reg, DeregisterFn dereg, size_t pageBytes = 4096, bool keepUnused = false,
           size_t maxUnused = 64);
  ~RegCache();
  RegCache(const RegCache&) = delete;
  RegCache& operator=(const RegCache&) = delete;

  // Which requests may leave their registration cached when unused (with
  // keepUnused); unset: all of them.
  void setKeepPolicy(KeepFn keep) { keepFn_ = std::move(keep); }
  // Keep only what UserRanges lists, and drop entries when a range goes.
  void followUserRanges();

  // A referenced entry covering [addr, addr+len); release it when done.
  const Entry* acquire(const void* addr, size_t len);
  void release(const Entry* e);
  // The program is done with [addr, addr+len): drop entries that overlap it.
  void invalidate(const void* addr, size_t len);

  Stats stats() const {
    std::lock_guard<std::mutex> g(mu_);
    return stats_;
  }
  size_t size() const {
    std::lock_guard<std::mutex> g(mu_);
    return entries_.size();
  }

 private:
  using Map = std::multimap<uintptr_t, Entry>;
  void drop(Map::iterator it);
  void trimUnused();

  RegisterFn reg_;
  DeregisterFn dereg_;
  size_t page_;
  bool keepUnused_;
  size_t maxUnused_;
  KeepFn keepFn_;
  uint64_t subscription_ = 0;
  mutable std::mutex mu_;
  Map entries_;
  Stats stats_;
};

}  // namespace gdr::transport::ib

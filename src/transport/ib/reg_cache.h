// Registration cache: memory registered with the NIC once and reused.
//
// Entries are page-aligned ranges kept sorted by address, each with a
// reference count held by the operations in flight on it. A request covered
// by an existing entry is a hit. Unreferenced entries stay cached only when
// `keepUnused` is set: a pinned registration keeps the pages it saw, so a
// buffer that the program frees and the allocator maps again at the same
// address would silently send stale data. Keeping them is safe only for
// buffers the program keeps (or deregisters through invalidate()).
// The device calls are injected, so the logic is tested without a NIC.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>

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
  };
  struct Stats {
    uint64_t hits = 0, misses = 0, evictions = 0;
  };
  using RegisterFn = std::function<Registration(uintptr_t base, size_t len)>;  // throws on failure
  using DeregisterFn = std::function<void(const Registration&)>;

  RegCache(RegisterFn reg, DeregisterFn dereg, size_t pageBytes = 4096, bool keepUnused = false,
           size_t maxUnused = 64);
  ~RegCache();
  RegCache(const RegCache&) = delete;
  RegCache& operator=(const RegCache&) = delete;

  // A referenced entry covering [addr, addr+len); release it when done.
  const Entry* acquire(const void* addr, size_t len);
  void release(const Entry* e);
  // The program is done with [addr, addr+len): drop entries that overlap it.
  void invalidate(const void* addr, size_t len);

  const Stats& stats() const { return stats_; }
  size_t size() const { return entries_.size(); }

 private:
  using Map = std::multimap<uintptr_t, Entry>;
  void drop(Map::iterator it);
  void trimUnused();

  RegisterFn reg_;
  DeregisterFn dereg_;
  size_t page_;
  bool keepUnused_;
  size_t maxUnused_;
  Map entries_;
  Stats stats_;
};

}  // namespace gdr::transport::ib

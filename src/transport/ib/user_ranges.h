// Memory the program vouches for: buffers registered with gdrCommRegister and
// buffers allocated by gdrMemAlloc (and the library's own bounce buffers).
//
// Why it exists: a NIC registration pins the pages it saw. If the program
// frees a buffer behind our back and the allocator maps new pages at the same
// address, a cached registration would silently send stale data. So the
// registration caches keep an unused registration only for ranges listed
// here; every other registration lives as long as the operation using it.
// Removing a range (gdrCommDeregister, gdrMemFree) tells every cache, which
// drops the registrations overlapping it before the memory can be reused.
// Process-wide and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace gdr::transport::ib {

class UserRanges {
 public:
  using DropFn = std::function<void(uintptr_t addr, size_t len)>;

  static UserRanges& instance();

  // Lists [addr, addr+len); returns an id for remove(). Ranges may overlap
  // (the same buffer registered twice): each add needs its own remove.
  uint64_t add(const void* addr, size_t len);
  // Unlists the range and drops overlapping registrations in every cache,
  // before it returns. False for an unknown id.
  bool remove(uint64_t id);
  // Whether [addr, addr+len) lies inside one listed range.
  bool covers(const void* addr, size_t len) const;

  // Caches subscribe for drops; `fn` runs with the registry locked, so it
  // must not call back into it. unsubscribe() waits out a running drop.
  uint64_t subscribe(DropFn fn);
  void unsubscribe(uint64_t token);

 private:
  struct Range {
    uintptr_t addr;
    size_t len;
  };
  mutable std::mutex mu_;
  uint64_t nextId_ = 1;
  std::map<uint64_t, Range> ranges_;  // by id; few enough to scan
  std::map<uint64_t, DropFn> subs_;
};

}  // namespace gdr::transport::ib

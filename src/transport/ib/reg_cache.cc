#include "transport/ib/reg_cache.h"

#include <vector>

#include "transport/ib/user_ranges.h"

namespace gdr::transport::ib {

RegCache::RegCache(RegisterFn reg, DeregisterFn dereg, size_t pageBytes, bool keepUnused,
                   size_t maxUnused)
    : reg_(std::move(reg)),
      dereg_(std::move(dereg)),
      page_(pageBytes),
      keepUnused_(keepUnused),
      maxUnused_(maxUnused) {}

RegCache::~RegCache() {
  if (subscription_) UserRanges::instance().unsubscribe(subscription_);
  std::lock_guard<std::mutex> g(mu_);
  while (!entries_.empty()) drop(entries_.begin());
}

void RegCache::followUserRanges() {
  keepFn_ = [](const void* a, size_t l) { return UserRanges::instance().covers(a, l); };
  if (!subscription_)
    subscription_ = UserRanges::instance().subscribe(
        [this](uintptr_t a, size_t l) { invalidate(reinterpret_cast<const void*>(a), l); });
}

void RegCache::drop(Map::iterator it) {
  dereg_(it->second.reg);
  entries_.erase(it);
}

const RegCache::Entry* RegCache::acquire(const void* addr, size_t len) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  const uintptr_t lo = a & ~(page_ - 1);
  const uintptr_t hi = (a + (len ? len : 1) + page_ - 1) & ~(page_ - 1);
  // Asked before locking: the policy may lock UserRanges, whose drops lock us.
  const bool keep = keepUnused_ && (!keepFn_ || keepFn_(addr, len));
  std::lock_guard<std::mutex> g(mu_);
  // Candidates start at or below `lo`; entries are few, so walk down from there.
  for (auto it = entries_.upper_bound(lo); it != entries_.begin();) {
    --it;
    Entry& e = it->second;
    if (!e.stale && e.base <= lo && e.base + e.len >= hi) {
      ++e.refs;
      ++stats_.hits;
      return &e;
    }
  }
  ++stats_.misses;
  // Unreferenced entries inside the new range are superseded by it.
  for (auto it = entries_.lower_bound(lo); it != entries_.end() && it->first < hi;) {
    auto next = std::next(it);
    if (it->second.refs == 0 && it->first + it->second.len <= hi) {
      drop(it);
      ++stats_.evictions;
    }
    it = next;
  }
  Registration r = reg_(lo, hi - lo, addr);
  auto it = entries_.emplace(lo, Entry{lo, hi - lo, r, 1, false, keep});
  return &it->second;
}

void RegCache::release(const Entry* e) {
  std::lock_guard<std::mutex> g(mu_);
  for (auto it = entries_.find(e->base); it != entries_.end() && it->first == e->base; ++it) {
    if (&it->second != e) continue;
    if (--it->second.refs == 0 && (it->second.stale || !it->second.keep)) {
      drop(it);
    } else if (it->second.refs == 0) {
      trimUnused();
    }
    return;
  }
}

void RegCache::trimUnused() {
  size_t unused = 0;
  for (auto& kv : entries_) unused += kv.second.refs == 0;
  // Over the limit: drop the lowest-addressed unused entries (cheap, and
  // any policy beats unbounded pinning).
  for (auto it = entries_.begin(); unused > maxUnused_ && it != entries_.end();) {
    auto next = std::next(it);
    if (it->second.refs == 0) {
      drop(it);
      ++stats_.evictions;
      --unused;
    }
    it = next;
  }
}

void RegCache::invalidate(const void* addr, size_t len) {
  const uintptr_t lo = reinterpret_cast<uintptr_t>(addr);
  const uintptr_t hi = lo + len;
  std::lock_guard<std::mutex> g(mu_);
  for (auto it = entries_.begin(); it != entries_.end() && it->first < hi;) {
    auto next = std::next(it);
    Entry& e = it->second;
    if (e.base + e.len > lo) {
      if (e.refs == 0)
        drop(it);
      else
        e.stale = true;
    }
    it = next;
  }
}

}  // namespace gdr::transport::ib

#include "transport/ib/user_ranges.h"

namespace gdr::transport::ib {

UserRanges& UserRanges::instance() {
  static UserRanges r;
  return r;
}

uint64_t UserRanges::add(const void* addr, size_t len) {
  std::lock_guard<std::mutex> g(mu_);
  uint64_t id = nextId_++;
  ranges_[id] = Range{reinterpret_cast<uintptr_t>(addr), len};
  return id;
}

bool UserRanges::remove(uint64_t id) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = ranges_.find(id);
  if (it == ranges_.end()) return false;
  const Range r = it->second;
  ranges_.erase(it);
  for (auto& kv : subs_) kv.second(r.addr, r.len);
  return true;
}

bool UserRanges::covers(const void* addr, size_t len) const {
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  std::lock_guard<std::mutex> g(mu_);
  for (const auto& kv : ranges_) {
    const Range& r = kv.second;
    if (a >= r.addr && a - r.addr <= r.len && len <= r.len - (a - r.addr)) return true;
  }
  return false;
}

uint64_t UserRanges::subscribe(DropFn fn) {
  std::lock_guard<std::mutex> g(mu_);
  uint64_t t = nextId_++;
  subs_[t] = std::move(fn);
  return t;
}

void UserRanges::unsubscribe(uint64_t token) {
  std::lock_guard<std::mutex> g(mu_);
  subs_.erase(token);
}

}  // namespace gdr::transport::ib

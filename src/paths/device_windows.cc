#include "paths/device_windows.h"

#if GDR_HAVE_CUDA

namespace gdr::paths {

uint64_t WindowTable::add(const void* base, size_t bytes,
                          std::unique_ptr<transport::cuda_ipc::WindowMap> map) {
  std::lock_guard<std::mutex> g(mu_);
  const uint64_t id = next_++;
  entries_.push_back(Entry{id, static_cast<const char*>(base), bytes, std::move(map)});
  count_.store(entries_.size(), std::memory_order_release);
  return id;
}

bool WindowTable::remove(uint64_t id) {
  std::unique_ptr<transport::cuda_ipc::WindowMap> gone;  // closed outside the lock
  std::lock_guard<std::mutex> g(mu_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->id == id) {
      gone = std::move(it->map);
      entries_.erase(it);
      count_.store(entries_.size(), std::memory_order_release);
      return true;
    }
  return false;
}

bool WindowTable::find(const void* p, size_t bytes, void** at) const {
  const char* c = static_cast<const char*>(p);
  std::lock_guard<std::mutex> g(mu_);
  // The newest first: a buffer freed and allocated again at the same
  // address is in the newest window (the old one must have been dropped).
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (c < it->base || static_cast<size_t>(c - it->base) > it->bytes ||
        bytes > it->bytes - static_cast<size_t>(c - it->base))
      continue;
    const size_t off = static_cast<size_t>(c - it->base);
    const transport::cuda_ipc::WindowMap& m = *it->map;
    for (int r = 0; r < m.nranks(); ++r)
      if (off > m.bytes(r) || bytes > m.bytes(r) - off) return false;
    for (int r = 0; r < m.nranks(); ++r) at[r] = m.base(r) + off;
    return true;
  }
  return false;
}

}  // namespace gdr::paths

#endif

// A communicator's recently built schedules. Building one allocates and
// (through select) reads GDR_ALGO, which costs more than a small message's
// whole transfer; collectives repeat with the same arguments, so the
// schedule is kept. GDR_ALGO is therefore read once per distinct call shape
// per communicator. All-to-all-v (per-call counts) is never cached.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collectives/schedule.h"

namespace gdr::coll {

// Two whole words, built in registers: a key of separate narrow fields was
// stored field by field and then compared with wider loads, and a load that
// spans several smaller stores cannot be forwarded from them (a stall on
// every call, seen in perf on the small-message path).
struct SchedKey {
  uint64_t shape;  // kind | inPlace << 8 | elemBytes << 16 | root << 32
  uint64_t count;
  SchedKey(CollKind kind, int root, size_t count, bool inPlace, size_t elemBytes)
      : shape(uint64_t(static_cast<uint8_t>(kind)) | uint64_t(inPlace) << 8 |
              (uint64_t(elemBytes) & 0xffff) << 16 | uint64_t(uint32_t(root)) << 32),
        count(count) {}
  bool operator==(const SchedKey& o) const { return shape == o.shape && count == o.count; }
};

struct CachedSchedule {
  Algo algo;
  Schedule sched;
};

class ScheduleCache {
 public:
  static constexpr size_t kCapacity = 64;
  // The cached entry, or nullptr.
  const CachedSchedule* find(const SchedKey& k) const {
    for (const auto& e : entries_)
      if (e.first == k) return &e.second;
    return nullptr;
  }
  const CachedSchedule& insert(const SchedKey& k, CachedSchedule v) {
    if (entries_.size() >= kCapacity) entries_.erase(entries_.begin());
    entries_.emplace_back(k, std::move(v));
    return entries_.back().second;
  }

 private:
  std::vector<std::pair<SchedKey, CachedSchedule>> entries_;
};

}  // namespace gdr::coll

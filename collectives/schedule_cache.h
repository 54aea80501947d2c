// A communicator's recently built schedules. Building one allocates and
// (through select) reads GDR_ALGO, which costs more than a small message's
// whole transfer; collectives repeat with the same arguments, so the
// schedule is kept. GDR_ALGO is therefore read once per distinct call shape
// per communicator. All-to-all-v (per-call counts) is never cached.
#pragma once

#include <cstddef>
#include <vector>

#include "collectives/schedule.h"

namespace gdr::coll {

struct SchedKey {
  CollKind kind;
  int root;
  size_t count;
  bool inPlace;
  size_t elemBytes;
  bool operator==(const SchedKey& o) const {
    return kind == o.kind && root == o.root && count == o.count && inPlace == o.inPlace &&
           elemBytes == o.elemBytes;
  }
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

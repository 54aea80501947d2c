#include "sim/turns.h"

#include <algorithm>
#include <cmath>

namespace gdr::sim {

Turns::Turns(const Cluster& c, int nranks)
    : hosts_(static_cast<size_t>(c.hosts)),
      hostOf_(static_cast<size_t>(nranks)),
      coreOf_(static_cast<size_t>(nranks), -1),
      // A turn handed to another process costs more the more of them share
      // the core's caches: yield_growth per doubling from 2 ranks per core.
      yieldUs_(yieldCostUs(c)),
      quantumUs_(c.quantumUs) {
  for (Host& h : hosts_) h.cores.resize(static_cast<size_t>(std::max(1, c.coresPerHost)));
  for (int r = 0; r < nranks; ++r) {
    hostOf_[r] = c.hostOf(r);
    hosts_[hostOf_[r]].queue.push_back(r);
  }
}

double yieldCostUs(const Cluster& c) {
  return c.yieldUs * std::pow(c.yieldGrowth, std::log2(std::max(2.0, c.oversub()) / 2.0));
}

Turns::Next Turns::run(Host& h, int core, double t) {
  const int r = h.queue.front();
  h.queue.pop_front();
  h.cores[core].running = r;
  h.cores[core].spinning = false;
  coreOf_[r] = core;
  return {r, t};
}

std::vector<Turns::Next> Turns::start() {
  std::vector<Next> v;
  for (Host& h : hosts_)
    for (size_t k = 0; k < h.cores.size() && !h.queue.empty(); ++k)
      v.push_back(run(h, static_cast<int>(k), 0.0));
  return v;
}

Turns::Next Turns::pass(int r, double t, bool requeue, bool dry) {
  Host& h = hosts_[hostOf_[r]];
  const int core = coreOf_[r];
  h.cores[core].running = -1;
  coreOf_[r] = -1;
  h.dryYields = dry ? h.dryYields + 1 : 0;
  if (requeue) h.queue.push_back(r);
  if (h.queue.empty()) return {};
  // A whole round of dry yields: nothing queued moves until something it
  // waits for happens (wake).
  if (h.dryYields >= static_cast<int>(h.queue.size())) {
    h.cores[core].spinning = true;
    h.cores[core].spinStart = t;
    return {};
  }
  return run(h, core, t);
}

Turns::Next Turns::wake(int r, double t) {
  Host& h = hosts_[hostOf_[r]];
  h.dryYields = 0;  // r looks in its next turn: no core may spin before
  int core = -1;
  for (size_t k = 0; k < h.cores.size(); ++k)
    if (h.cores[k].spinning && (core < 0 || h.cores[k].spinStart < h.cores[core].spinStart))
      core = static_cast<int>(k);
  if (core < 0 || h.queue.empty()) return {};
  // The queue's i-th rank's turns on that core began at spinStart + (i + m n) yield_us.
  const double y = std::max(yieldUs_, 1e-6);
  const double start = h.cores[core].spinStart;
  const size_t n = h.queue.size();
  const double turns = std::ceil(std::max(0.0, t - start) / y - 1e-9);
  const size_t first = static_cast<size_t>(std::fmod(turns, static_cast<double>(n)));
  std::rotate(h.queue.begin(), h.queue.begin() + static_cast<long>(first), h.queue.end());
  return run(h, core, start + turns * y);
}

}  // namespace gdr::sim

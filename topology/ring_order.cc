#include "topology/ring_order.h"

#include <algorithm>
#include <climits>
#include <map>

#include "core/error.h"
#include "core/log.h"

namespace gdr::topo {

namespace {

struct Host {
  std::string id;
  std::vector<int> ranks;  // in rank order
};

struct Layout {
  const Topology* topo;
  std::vector<int> railOfGpu;  // NIC index per GPU, -1: none

  explicit Layout(const Topology* t) : topo(t) {
    if (!t) return;
    // Rails are the default assignment; an unusable GDR_IB_HCA is the
    // communicator's error to report, not the ordering's.
    AssignOptions opts;
    try {
      opts = AssignOptions::fromEnv();
      for (const NicAssignment& a : t->assignNics(opts)) railOfGpu.push_back(a.nic);
    } catch (const Error& e) {
      GDR_INFO(kTopo, "ring order without rails: %s", e.what());
      railOfGpu.assign(t->gpus().size(), -1);
    }
  }
  int gpu(const RankPlace& r) const { return topo ? topo->findGpu(r.busId) : -1; }
  int rail(const RankPlace& r) const {
    int g = gpu(r);
    return g < 0 ? -1 : railOfGpu[g];
  }
  // Hop cost: the path class, 0 for two ranks on one GPU, worst when unknown.
  int cost(const RankPlace& a, const RankPlace& b) const {
    if (!a.busId.empty() && a.busId == b.busId) return 0;
    int ga = gpu(a), gb = gpu(b);
    if (ga < 0 || gb < 0) return static_cast<int>(PathClass::SYS) + 1;
    return static_cast<int>(topo->gpuGpuPath(ga, gb)) + (ga == gb ? 0 : 1);
  }
};

// The cheapest nearest-neighbour chain over a host's ranks. `closed` adds the
// hop from the last back to the first (a ring inside one host).
std::vector<int> hostChain(const std::vector<RankPlace>& places, const std::vector<int>& ranks,
                           const Layout& layout, bool closed) {
  std::vector<int> sorted = ranks;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [&](int a, int b) { return places[a].busId < places[b].busId; });
  std::vector<int> best;
  long bestCost = LONG_MAX;
  for (size_t start = 0; start < sorted.size(); ++start) {
    std::vector<int> chain{sorted[start]};
    std::vector<bool> used(sorted.size(), false);
    used[start] = true;
    long total = 0;
    for (size_t step = 1; step < sorted.size(); ++step) {
      int pick = -1, pickCost = INT_MAX;
      for (size_t k = 0; k < sorted.size(); ++k) {
        if (used[k]) continue;
        int c = layout.cost(places[chain.back()], places[sorted[k]]);
        if (c < pickCost) pick = static_cast<int>(k), pickCost = c;
      }
      used[pick] = true;
      chain.push_back(sorted[pick]);
      total += pickCost;
    }
    if (closed && chain.size() > 1) total += layout.cost(places[chain.back()], places[chain.front()]);
    if (total < bestCost) best = chain, bestCost = total;
  }
  return best;
}

}  // namespace

std::vector<int> ringOrder(const std::vector<RankPlace>& ranks, const Topology* local) {
  std::vector<Host> hosts;
  std::map<std::string, size_t> hostIndex;
  for (int r = 0; r < static_cast<int>(ranks.size()); ++r) {
    auto it = hostIndex.emplace(ranks[r].hostId, hosts.size()).first;
    if (it->second == hosts.size()) hosts.push_back(Host{ranks[r].hostId, {}});
    hosts[it->second].ranks.push_back(r);
  }
  const Layout layout(local);
  std::vector<int> order;
  int prevRail = -1;
  for (size_t h = 0; h < hosts.size(); ++h) {
    std::vector<int> chain = hostChain(ranks, hosts[h].ranks, layout, hosts.size() == 1);
    const char* direction = "forwards";
    if (h > 0 && prevRail >= 0 && layout.rail(ranks[chain.front()]) != prevRail &&
        layout.rail(ranks[chain.back()]) == prevRail) {
      std::reverse(chain.begin(), chain.end());
      direction = "backwards, to enter on the previous host's rail";
    }
    prevRail = layout.rail(ranks[chain.back()]);
    std::string list;
    for (int r : chain) list += (list.empty() ? "" : " ") + std::to_string(r);
    GDR_INFO(kTopo, "ring: host %s ranks %s (%s; enters on rail %d, leaves on rail %d)",
             hosts[h].id.c_str(), list.c_str(), direction, layout.rail(ranks[chain.front()]),
             prevRail);
    order.insert(order.end(), chain.begin(), chain.end());
  }
  return order;
}

}  // namespace gdr::topo

#include "sim/maxmin.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace gdr::sim {

std::vector<double> maxMinRates(const Network& net, const std::vector<FlowDemand>& flows) {
  const size_t n = flows.size();
  std::vector<double> rate(n, 0.0);
  std::vector<char> frozen(n, 0);
  // Only the links these flows cross, renumbered densely.
  std::unordered_map<int, int> dense;
  std::vector<double> residual, cap;
  std::vector<int> link, users;
  std::vector<std::vector<int>> linkIdx(n);
  for (size_t f = 0; f < n; ++f) {
    for (int i = 0; i < flows[f].path->nlinks; ++i) {
      const int l = flows[f].path->links[i];
      auto it = dense.find(l);
      if (it == dense.end()) {
        it = dense.emplace(l, static_cast<int>(link.size())).first;
        link.push_back(l);
        users.push_back(0);
      }
      ++users[it->second];
      linkIdx[f].push_back(it->second);
    }
  }
  for (size_t d = 0; d < link.size(); ++d) {
    residual.push_back(net.capacity(link[d], users[d]));
    cap.push_back(residual.back());
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  size_t left = n;
  std::vector<double> load(residual.size());
  while (left > 0) {
    std::fill(load.begin(), load.end(), 0.0);
    for (size_t f = 0; f < n; ++f)
      if (!frozen[f])
        for (size_t i = 0; i < linkIdx[f].size(); ++i)
          load[linkIdx[f][i]] += flows[f].path->weight[i];
    double delta = kInf;
    for (size_t l = 0; l < load.size(); ++l)
      if (load[l] > 0) delta = std::min(delta, residual[l] / load[l]);
    for (size_t f = 0; f < n; ++f)
      if (!frozen[f] && flows[f].capGBps > 0) delta = std::min(delta, flows[f].capGBps - rate[f]);
    if (delta == kInf) break;  // flows on no link and with no cap: unbounded
    delta = std::max(delta, 0.0);
    for (size_t l = 0; l < load.size(); ++l) residual[l] -= delta * load[l];
    for (size_t f = 0; f < n; ++f) {
      if (frozen[f]) continue;
      rate[f] += delta;
      bool stop = flows[f].capGBps > 0 && rate[f] >= flows[f].capGBps * (1 - 1e-12);
      for (int l : linkIdx[f]) stop = stop || residual[l] <= 1e-9 * cap[l];
      if (stop) {
        frozen[f] = 1;
        --left;
      }
    }
  }
  return rate;
}

}  // namespace gdr::sim

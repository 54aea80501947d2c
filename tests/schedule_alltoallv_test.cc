// All-to-allv through the simulator: uneven counts with zeros, displacements
// with gaps and in shuffled order, for nranks 1..16; pairwise, direct, and
// each rank choosing one or the other (as the default selection may: every
// rank judges by its own blocks). The counts are random, fresh every run;
// the seed is printed on failure.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "support/schedule_sim.h"

namespace gdr::coll {
namespace {

// Lays out `counts` in a shuffled order with random gaps; returns displs.
std::vector<size_t> layout(const std::vector<size_t>& counts, std::mt19937& rng) {
  std::vector<int> order(counts.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<size_t> displs(counts.size());
  size_t at = 0;
  for (int i : order) {
    at += rng() % 3;  // a gap that nothing may write
    displs[i] = at;
    at += counts[i];
  }
  return displs;
}

// matrix[s][d]: elements rank s sends to rank d.
std::vector<CollArgs> allToAllvArgs(const std::vector<std::vector<size_t>>& matrix,
                                    size_t chunkElems, std::mt19937& rng) {
  const int n = static_cast<int>(matrix.size());
  std::vector<CollArgs> args(n);
  for (int r = 0; r < n; ++r) {
    CollArgs& a = args[r];
    a.kind = CollKind::AllToAllv;
    a.rank = r;
    a.nranks = n;
    a.chunkElems = chunkElems;
    a.sendCounts = matrix[r];
    for (int s = 0; s < n; ++s) a.recvCounts.push_back(matrix[s][r]);
    a.sendDispls = layout(a.sendCounts, rng);
    a.recvDispls = layout(a.recvCounts, rng);
  }
  return args;
}

// Builds rank r's schedule with algos[r % algos.size()], then checks as
// sim::check does.
std::string checkMixed(const std::vector<Algo>& algos, const std::vector<CollArgs>& args) {
  std::vector<Schedule> schedules;
  for (const CollArgs& a : args) schedules.push_back(build(algos[a.rank % algos.size()], a));
  std::string err = sim::checkShape(args, schedules);
  if (!err.empty()) return err;
  return sim::verify(args, sim::simulate(args, schedules));
}

TEST(ScheduleAllToAllv, EveryFormUnevenCounts) {
  const unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  int failures = 0;
  for (int n = 1; n <= sim::kMaxRanks; ++n) {
    for (int pattern = 0; pattern < 4; ++pattern) {
      std::vector<std::vector<size_t>> m(n, std::vector<size_t>(n));
      for (int s = 0; s < n; ++s) {
        for (int d = 0; d < n; ++d) {
          switch (pattern) {
            case 0:
              m[s][d] = 0;
              break;  // all empty
            case 1:
              m[s][d] = rng() % 2 ? 0 : rng() % 9;
              break;  // many zeros
            case 2:
              m[s][d] = static_cast<size_t>(s * n + d) % 7;
              break;
            default:
              m[s][d] = s == d ? 0 : rng() % 40;
              break;  // no self block
          }
        }
      }
      for (size_t chunk : sim::sweepChunks()) {
        const std::vector<std::vector<Algo>> forms = {
            {Algo::Pairwise}, {Algo::Direct}, {Algo::Direct, Algo::Pairwise}, {Algo::Pairwise, Algo::Direct}};
        for (size_t f = 0; f < forms.size(); ++f) {
          const std::string err = checkMixed(forms[f], allToAllvArgs(m, chunk, rng));
          if (err.empty()) continue;
          ADD_FAILURE() << "seed " << seed << " nranks " << n << " pattern " << pattern << " chunk " << chunk
                        << " form " << f << ": " << err;
          if (++failures >= 5) return;
        }
      }
    }
  }
}

}  // namespace
}  // namespace gdr::coll

#include "sim/tuning_writer.h"

#include "core/error.h"
#include "sim/predict.h"

namespace gdr::sim {
namespace {

constexpr double kMargin = 0.9;  // another algorithm must be predicted 10% faster

}  // namespace

std::string tuningTable(const Cluster& c, size_t minBytes, size_t maxBytes, size_t elemBytes) {
  using coll::CollKind;
  GDR_CHECK_ARG(!(c.device && c.hosts == 1),
                "cluster %s: one host of GPUs runs the fused kernels, which the "
                "selector's table does not steer",
                c.name.c_str());
  const int n = c.nranks();
  std::string out = strprintf(
      "# GDR_TUNING_FILE for cluster %s (%d ranks), written by gdr-sim --tuning-out\n"
      "# collective min_ranks max_ranks max_bytes algorithm\n",
      c.name.c_str(), n);
  const CollKind kinds[] = {CollKind::AllReduce, CollKind::Broadcast,     CollKind::Reduce,
                            CollKind::AllGather, CollKind::ReduceScatter, CollKind::AllToAll};
  for (CollKind k : kinds) {
    coll::CollArgs probe;
    probe.kind = k;
    probe.nranks = n;
    std::string runAlgo;
    size_t runEnd = 0;
    auto flush = [&] {
      if (!runAlgo.empty())
        out += strprintf("%s %d %d %zu %s\n", coll::collName(k), n, n, runEnd, runAlgo.c_str());
    };
    for (size_t b = minBytes ? minBytes : 1; b <= maxBytes; b *= 2) {
      Query q;
      q.kind = k;
      q.bytes = b;
      q.elemBytes = elemBytes;
      // The built-in choice stands unless another algorithm is predicted
      // clearly faster (a near tie is within the model's error).
      const Prediction builtIn = predict(c, q);
      if (builtIn.count == 0) continue;
      q.forced = true;
      std::string best = builtIn.algo;
      double bestUs = builtIn.timeUs * kMargin;
      for (int a = 0; a <= static_cast<int>(coll::Algo::Dissemination); ++a) {
        q.algo = static_cast<coll::Algo>(a);
        if (!coll::supports(q.algo, probe)) continue;
        const Prediction p = predict(c, q);
        if (p.timeUs < bestUs) {
          best = p.algo;
          bestUs = p.timeUs;
        }
      }
      if (best != runAlgo) {
        flush();
        runAlgo = best;
      }
      runEnd = b;
    }
    flush();
  }
  return out;
}

}  // namespace gdr::sim

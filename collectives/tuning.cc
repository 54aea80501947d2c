#include "collectives/tuning.h"

#include <fstream>
#include <mutex>
#include <sstream>

#include "core/error.h"
#include "core/params.h"

namespace gdr::coll {

std::vector<TuningRule> parseTuning(const std::string& text, const std::string& origin) {
  std::vector<TuningRule> rules;
  std::istringstream in(text);
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream f(line);
    std::string coll, algo;
    long long minR = 0, maxR = 0, maxB = 0;
    if (!(f >> coll)) continue;
    GDR_CHECK_ARG(static_cast<bool>(f >> minR >> maxR >> maxB >> algo) && minR >= 1 &&
                      maxR >= minR && maxB >= 0,
                  "%s:%d: expected 'collective min_ranks max_ranks max_bytes algorithm'",
                  origin.c_str(), lineNo);
    TuningRule r;
    bool kindOk = false;
    for (int k = 0; k <= static_cast<int>(CollKind::Barrier); ++k)
      if (coll == collName(static_cast<CollKind>(k))) {
        r.kind = static_cast<CollKind>(k);
        kindOk = true;
      }
    GDR_CHECK_ARG(kindOk, "%s:%d: unknown collective '%s'", origin.c_str(), lineNo, coll.c_str());
    GDR_CHECK_ARG(parseAlgo(algo, &r.algo), "%s:%d: unknown algorithm '%s'", origin.c_str(), lineNo,
                  algo.c_str());
    r.minRanks = static_cast<int>(minR);
    r.maxRanks = static_cast<int>(maxR);
    r.maxBytes = static_cast<size_t>(maxB);
    rules.push_back(r);
  }
  return rules;
}

bool tunedAlgo(const std::vector<TuningRule>& rules, const CollArgs& a, size_t bytes, Algo* out) {
  for (const TuningRule& r : rules) {
    if (r.kind != a.kind || a.nranks < r.minRanks || a.nranks > r.maxRanks || bytes > r.maxBytes)
      continue;
    if (!supports(r.algo, a)) return false;
    *out = r.algo;
    return true;
  }
  return false;
}

bool tunedAlgo(const CollArgs& a, size_t bytes, Algo* out) {
  static std::once_flag once;
  static std::vector<TuningRule> rules;
  std::call_once(once, [] {
    const std::string path = param::getString("GDR_TUNING_FILE");
    if (path.empty()) return;
    std::ifstream f(path);
    GDR_CHECK_ARG(f.good(), "GDR_TUNING_FILE: cannot read %s", path.c_str());
    std::stringstream text;
    text << f.rdbuf();
    rules = parseTuning(text.str(), path);
  });
  return !rules.empty() && tunedAlgo(rules, a, bytes, out);
}

}  // namespace gdr::coll

#include "comm/config_vote.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/error.h"

namespace gdr {

namespace {

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string shown(const char* field, size_t size) {
  return std::string(field, strnlen(field, size));
}

}  // namespace

uint64_t tuningFileHash(const std::string& path) {
  if (path.empty()) return fnv1a("");
  std::ifstream f(path);
  GDR_CHECK_ARG(f.good(), "GDR_TUNING_FILE: cannot read %s", path.c_str());
  std::stringstream text;
  text << f.rdbuf();
  return fnv1a(text.str());
}

ConfigVote makeConfigVote(gdrResult_t failed, const std::string& error, int checkMismatch,
                          int64_t chunkBytes, const std::string& algo,
                          const std::string& tuningFile, uint64_t tuningHash) {
  ConfigVote v;
  v.failed = failed;
  v.checkMismatch = checkMismatch;
  v.chunkBytes = chunkBytes;
  v.algoHash = fnv1a(algo);
  std::snprintf(v.algo, sizeof(v.algo), "%s", algo.c_str());
  v.tuningHash = tuningHash;
  std::snprintf(v.tuning, sizeof(v.tuning), "%s", tuningFile.c_str());
  std::snprintf(v.error, sizeof(v.error), "%s", error.c_str());
  return v;
}

void agreeOnConfig(boot::Bootstrap& boot, const ConfigVote& mine) {
  const int n = boot.size(), me = boot.rank();
  std::vector<ConfigVote> votes(n);
  votes[me] = mine;
  boot.allgather(votes.data(), sizeof(ConfigVote));
  for (int r = 0; r < n; ++r) {
    const ConfigVote& v = votes[r];
    if (!v.failed) continue;
    const std::string text = shown(v.error, sizeof(v.error));
    const gdrResult_t code = v.failed > 0 && v.failed < gdrNumResults
                                 ? static_cast<gdrResult_t>(v.failed)
                                 : gdrInvalidArgument;
    if (r == me) throw Error(code, text);
    throw Error(code, strprintf("rank %d's configuration is invalid: %s", r, text.c_str()));
  }
  const ConfigVote& ref = votes[0];
  for (int r = 1; r < n; ++r) {
    const ConfigVote& v = votes[r];
    if (v.algoHash != ref.algoHash)
      throw InvalidUsage(strprintf(
          "GDR_ALGO differs across ranks: rank 0 has '%s', rank %d has '%s'",
          shown(ref.algo, sizeof(ref.algo)).c_str(), r, shown(v.algo, sizeof(v.algo)).c_str()));
    if (v.tuningHash != ref.tuningHash) {
      auto named = [](const ConfigVote& x) {
        const std::string p = shown(x.tuning, sizeof(x.tuning));
        return p.empty() ? std::string("none")
                         : strprintf("'%s' (content hash %016llx)", p.c_str(),
                                     (unsigned long long)x.tuningHash);
      };
      throw InvalidUsage(
          strprintf("GDR_TUNING_FILE differs across ranks: rank 0 has %s, rank %d has %s",
                    named(ref).c_str(), r, named(v).c_str()));
    }
    if (v.chunkBytes != ref.chunkBytes)
      throw InvalidUsage(
          strprintf("GDR_CHUNK_BYTES differs across ranks: rank 0 has %lld, rank %d has %lld",
                    (long long)ref.chunkBytes, r, (long long)v.chunkBytes));
    if (v.checkMismatch != ref.checkMismatch)
      throw InvalidUsage(
          strprintf("GDR_CHECK_MISMATCH differs across ranks: rank 0 has %d, rank %d has %d",
                    ref.checkMismatch, r, v.checkMismatch));
  }
}

}  // namespace gdr

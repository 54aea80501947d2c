// Crossovers from a table (GDR_TUNING_FILE) instead of the built-in
// defaults, so that a user tunes the selector for a cluster before running
// on it: `gdr-sim --tuning-out FILE` writes the table for a described
// cluster from its predictions.
//
// Format: one rule a line, `collective min_ranks max_ranks max_bytes
// algorithm` (bytes as select() counts them; `#` comments). The first rule
// whose collective matches, whose rank range holds the communicator's size
// and whose max_bytes is at least the message's takes effect, if the
// algorithm implements the collective; no rule: the built-in choice.
#pragma once

#include <string>
#include <vector>

#include "collectives/schedule.h"

namespace gdr::coll {

struct TuningRule {
  CollKind kind;
  int minRanks, maxRanks;
  size_t maxBytes;
  Algo algo;
};

// Parses a table; throws InvalidArgument naming the line that is wrong.
std::vector<TuningRule> parseTuning(const std::string& text, const std::string& origin);
// The rule for these arguments in `rules`, if any.
bool tunedAlgo(const std::vector<TuningRule>& rules, const CollArgs& args, size_t bytes, Algo* out);
// The same over GDR_TUNING_FILE, read once per process (no file: false).
bool tunedAlgo(const CollArgs& args, size_t bytes, Algo* out);

}  // namespace gdr::coll

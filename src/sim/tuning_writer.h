// The selector's table for a described cluster (GDR_TUNING_FILE, see
// collectives/tuning.h): for every collective and size, the algorithm
// gdr-sim predicts fastest among those that implement it (the built-in
// choice unless another is predicted at least 10% faster), runs of sizes
// with the same winner merged into one rule.
#pragma once

#include <string>

#include "sim/cluster.h"

namespace gdr::sim {

std::string tuningTable(const Cluster& c, size_t minBytes, size_t maxBytes, size_t elemBytes);

}  // namespace gdr::sim

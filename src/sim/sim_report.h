// gdr-sim's output in gdr-bench's columns (text, CSV, JSON), and the one
// way every front end (the tool, the NCCL face, the tuning writer) turns a
// preset or file, a calibration and overrides into a cluster.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "sim/cluster.h"
#include "sim/predict.h"

namespace gdr::sim {

// The calibration file used when none is named: $GDR_SIM_CALIBRATION, else
// the one the build was configured with (the repository's).
std::string defaultCalibration();

// `name` is a preset or a description file. The calibration is read first
// (a description may override it), then `overrides`; ranks > 0 sets the
// rank count (on one host: ranks_per_host; else hosts = ranks / ranks_per_host).
Cluster makeCluster(const std::string& name, const std::string& calibration,
                    const std::string& overrides, int ranks);

void writeReport(FILE* out, const std::string& format, const Cluster& c, coll::CollKind kind,
                 const std::vector<Prediction>& rows);

}  // namespace gdr::sim

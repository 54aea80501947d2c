// One prediction: a collective of one size on a cluster, with the
// algorithm the library's selector picks (collectives/select.cc, GDR_ALGO
// included) or a forced one, priced by the walker that fits:
//   fused      device ranks on one host: the cuda_ipc kernels, priced from
//              the bytes they declare (collectives/fused.h);
//   events     every rank's schedule, max-min sharing (up to 64 ranks) or
//              frozen shares (up to kEventRanks);
//   symmetric  one rank's schedule where the schedule is symmetric
//              (sim/symmetric.h), else events with frozen shares.
#pragma once

#include <string>

#include "collectives/schedule.h"
#include "sim/cluster.h"

namespace gdr::sim {

struct Query {
  coll::CollKind kind = coll::CollKind::AllReduce;
  size_t bytes = 0;  // gdr-bench's size column
  size_t elemBytes = 4;
  int root = 0;
  bool forced = false;
  coll::Algo algo = coll::Algo::Ring;
  std::string walker = "auto";  // auto, events, symmetric
};

struct Prediction {
  size_t bytes = 0, count = 0;
  double timeUs = 0, algbw = 0, busbw = 0;
  std::string algo;    // the schedule's algorithm, or the fused kernel
  std::string walker;  // fused, events, events-frozen, symmetric
  size_t messages = 0;
  double yieldsPerCall = 0;  // the event walker's, where ranks take turns (engine.h)
};

// Ranks above which the event walker keeps frozen shares instead of max-min.
constexpr int kMaxMinRanks = 64;
// Back-to-back calls the event walker runs to find the steady period (as
// gdr-bench's loop measures it) where it shares max-min: a deep pipeline
// (a chain of 8 on 2 cores) needs tens of calls before the shared cores,
// not the head's run-ahead, set the period; above kDeepRanks fewer.
constexpr int kIterations = 32;
constexpr int kDeepRanks = 16;
constexpr int kIterationsWide = 8;
// Ranks above which the automatic walker tries symmetry first.
constexpr int kEventRanks = 1024;

Prediction predict(const Cluster& c, const Query& q);
// nccl-tests' bus bandwidth factor.
double busFactor(coll::CollKind k, int nranks);

}  // namespace gdr::sim

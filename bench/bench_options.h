// Command-line options of gdr-bench.
#pragma once

#include <cstddef>
#include <string>

#include "gdrcoll.h"

namespace bench {

enum class Coll { AllReduce, AllGather, ReduceScatter, Bcast, Reduce, AllToAll, AllToAllv, SendRecv, Barrier };

struct Options {
  Coll coll = Coll::AllReduce;
  std::string collName = "allreduce";
  size_t minBytes = 4;
  size_t maxBytes = 64u << 20;
  int iters = 200;       // for messages up to 1 MiB
  int itersLarge = 20;   // above 1 MiB
  int warmup = 20;
  int warmupLarge = 3;
  int reps = 5;  // timed blocks per size up to 1 MiB; its median is reported (one above)
  bool cuda = false;
  bool check = false;
  bool compareMpi = false;
  bool compareNccl = false;  // --compare nccl
  bool graph = false;        // --graph: with --mem cuda, time replays of a captured CUDA graph
  bool window = false;       // --window: with --mem cuda, the buffers are symmetric windows
  std::string csv;
  std::string json;  // --json FILE: the same rows as JSON (plots read it)
  gdrDataType_t type = gdrFloat32;
  gdrRedOp_t op = gdrSum;
  int root = 0;
};

// Parses argv; on --help prints usage and exits 0; on a bad option prints
// the reason and the usage to stderr and exits 2.
Options parse(int argc, char** argv, int rank);
const char* typeName(gdrDataType_t t);
size_t typeSize(gdrDataType_t t);

}  // namespace bench

// Collective algorithms as schedules: pure functions from (rank, nranks,
// count, chunking) to the ordered steps one rank takes. The executor
// (collectives/executor.cc) walks them over the communicator's connections;
// tests simulate all ranks' lists together without any transport.
//
// Terms
//   element  one value of the operation's datatype; all offsets and counts
//            here are in elements, never bytes.
//   Input    the user's send buffer (read-only).
//   Output   the user's receive buffer.
//   Scratch  a library temporary of Schedule::scratchElems elements.
//   chunk    the pipelining unit: a schedule splits its messages into pieces
//            of at most CollArgs::chunkElems elements so that a rank forwards
//            piece k while piece k+1 is still on the wire.
//
// Execution model (what every schedule may rely on, and what the executor
// guarantees):
//   - A rank runs its steps in list order. Send is asynchronous: it reads its
//     source with value semantics (as of the moment the step runs) and the
//     rank goes on at once. Recv and RecvReduce block until their data is in.
//   - Messages between an ordered pair of ranks match in order (FIFO), and a
//     Send's count must equal the matching receive's count.
//   - In-place (CollArgs::inPlace): for AllReduce, Broadcast and Reduce on the
//     root, Input and Output are the same memory; a schedule must be correct
//     under that aliasing. Other collectives get distinct Input and Output
//     (the executor arranges it).
//   - Output exists on every rank except for Reduce, where only the root has
//     one; non-roots must use Scratch instead.
//   - Avg is run as Sum; the executor divides the result once at the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/call.h"

namespace gdr::coll {

// The kinds are the core's (core/call.h); schedules name them here too.
using gdr::CollKind;
using gdr::collName;

enum class BufId : uint8_t { Input, Output, Scratch };

struct Region {
  BufId buf = BufId::Input;
  size_t offset = 0;
  size_t count = 0;
};

enum class StepKind : uint8_t {
  Send,        // send src to peer
  Recv,        // receive dst.count elements from peer into dst
  RecvReduce,  // receive dst.count elements from peer; dst[i] = op(src[i], incoming[i])
  Copy,        // dst = src (local)
  Reduce,      // dst[i] = op(dst[i], src[i]) (local)
};

struct Step {
  StepKind kind;
  int peer = -1;  // -1 for local steps
  Region src;
  Region dst;
  int chunk = 0;  // pipelining unit, for tracing and the cost model
};

struct Schedule {
  std::vector<Step> steps;
  size_t scratchElems = 0;
};

struct CollArgs {
  CollKind kind = CollKind::AllReduce;
  int rank = 0;
  int nranks = 1;
  // AllReduce, Broadcast, Reduce: the buffer's elements. AllGather: elements
  // each rank contributes (Output holds nranks * count). ReduceScatter:
  // elements each rank receives (Input holds nranks * count). AllToAll:
  // elements per destination. AllToAllv, Barrier: unused.
  size_t count = 0;
  int root = 0;            // Broadcast, Reduce
  size_t chunkElems = 0;   // 0: no pipelining split
  bool inPlace = false;
  // No other rank shares this rank's host: all its messages cross the
  // network (the selector's all-to-all rule; ranks may differ).
  bool aloneOnHost = false;
  // AllToAllv only, nranks entries each, in elements.
  std::vector<size_t> sendCounts, sendDispls, recvCounts, recvDispls;
};

// Algorithm names (as GDR_ALGO spells them).
enum class Algo : uint8_t {
  Ring,                // allreduce (reduce-scatter + all-gather), allgather, reducescatter
  RecursiveDoubling,   // allreduce (small), allgather
  DoubleBinaryTree,    // allreduce
  RecHalvingDoubling,  // allreduce (Rabenseifner), reducescatter
  Binomial,            // broadcast, reduce
  Chain,               // pipelined chain broadcast, reduce
  Pairwise,            // alltoall, alltoallv
  Direct,              // allreduce, alltoall, bcast, reduce: small, all messages at once
  Dissemination,       // barrier
  // Fused device kernels (allreduce on the cuda_ipc path, collectives/fused.h):
  // no schedule, so host buffers fall back to the default with a warning.
  OneShot,  // every GPU reduces every input, one barrier
  TwoShot,  // reduce-scatter then all-gather through peer memory
  LL,       // small messages: flagged packets into every peer, no barrier
};
constexpr int kNumAlgos = static_cast<int>(Algo::LL) + 1;
// True for the fused kernels, which run only on the cuda_ipc path.
inline bool isFused(Algo a) { return a == Algo::OneShot || a == Algo::TwoShot || a == Algo::LL; }
const char* algoName(Algo a);
bool parseAlgo(const std::string& name, Algo* out);

// Whether `algo` can serve these arguments (every algorithm here serves any
// rank count; this says no for a collective it does not implement).
bool supports(Algo algo, const CollArgs& args);

// Builds the schedule; throws InvalidArgument if !supports(algo, args).
Schedule build(Algo algo, const CollArgs& args);
// Whether a host rank runs `s` without the executor's runner, by its shape
// (short_schedules.cc): one message step, or up to 8 steps with local
// copies only after the messages and no Reduce step. The paths themselves
// also hand a schedule back when its memory overlaps; gdr-sim prices the
// shape.
bool runsWithoutRunner(const Schedule& s);

// Picks an algorithm for `args` with messages of `bytes` total: GDR_ALGO when
// it names one that supports the case (else a logged fallback), else by size
// and rank count.
Algo select(const CollArgs& args, size_t elemBytes);
// The same with GDR_ALGO's value given (a communicator reads it once, at
// init, so every call on it and every rank select alike).
Algo select(const CollArgs& args, size_t elemBytes, const std::string& algoSpec);
// The built-in choice alone (what select() returns without GDR_ALGO and
// GDR_TUNING_FILE) for a call of `bytes` in all (as messageBytes counts:
// all ranks' blocks for all-gather, reduce-scatter and all-to-all), without
// their lookups, for a rank that shares its host: for per-call fast paths.
// Not for all-to-allv.
Algo builtInAlgo(CollKind kind, int nranks, size_t bytes);
// The algorithm `spec` (GDR_ALGO's syntax) forces for `kind`, if any; throws
// InvalidArgument on a malformed spec.
bool forcedAlgo(const std::string& spec, CollKind kind, Algo* out);
// Throws InvalidArgument unless `spec` is a valid GDR_ALGO value.
void checkAlgoSpec(const std::string& spec);

}  // namespace gdr::coll

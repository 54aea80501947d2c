// A host schedule (collectives/schedule.h) as the GPUDirect path runs it:
// a list of phases, each the messages one network part posts together (the
// progress thread: p2pRunBatch, device memory both ends) followed by the
// local work the caller's stream then runs (copies, reduction kernels).
//
// The schedule's steps are taken in list order and a phase closes where a
// step could not run alongside the ones before it: a send that reads what
// the phase receives or reduces, a receive into memory the phase reads or
// writes, any network step after a local one. A RecvReduce lands in a
// staging area of its own and its reduction joins the phase's local work,
// in list order. Messages keep their list order (per peer pair FIFO, as
// the schedule needs). In place the Input and the Output are one buffer
// here, so the check sees the aliasing the schedule was written for.
//
// Avg runs as sum (as the host executor does); the plan then ends with one
// division of the Output. Pure arithmetic on regions: tested on the host
// (tests/paths_direct_ring_test.cc) together with the schedules' own
// simulator.
#pragma once

#include <cstddef>
#include <vector>

#include "collectives/schedule.h"

namespace gdr::paths::direct {

// Where a phase's bytes are, before the buffers are known.
enum class Where : uint8_t { Input, Output, Scratch, Staging };
struct Span {
  Where where;
  size_t offset;  // elements
  size_t count;   // elements
};

struct PhaseMsg {
  bool isSend;
  int peer;
  Span span;
};

struct PhaseOp {
  bool isCopy;  // dst = a; else dst = op(a, b)
  Span dst, a, b;
};

struct SchedPhase {
  std::vector<PhaseMsg> msgs;
  std::vector<PhaseOp> ops;
};

struct PhasedSchedule {
  std::vector<SchedPhase> phases;
  size_t scratchElems = 0;  // the schedule's Scratch
  size_t stagingElems = 0;  // the largest staging area a phase needs
};

// `inPlace`: Input and Output are the same memory.
PhasedSchedule toPhases(const coll::Schedule& s, bool inPlace);

}  // namespace gdr::paths::direct

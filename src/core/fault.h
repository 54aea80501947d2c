// Fault injection for tests: GDR_FAULT=rank:op:step:kind places one failure
// at an exact point of a schedule. `op` is the collective's sequence number
// on the communicator (1 for the first, as in "allreduce #1"), `step` the
// schedule step (1-based, as in "step 2 of 4"; or first, middle, last), and
// `kind` what happens as that step begins on that rank:
//   kill     the process dies (SIGKILL)
//   stall    the rank stops for 2.5 x GDR_TIMEOUT_MS, then carries on
//   close    the connection to the step's peer is shut down and the call fails
//   corrupt  the step's message goes out with a damaged signature
// The executor runs every host schedule (the host path, and the staged
// device path through it), so one hook covers every transport.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gdr {

enum class FaultKind : uint8_t { None, Kill, Stall, Close, Corrupt };

struct FaultSpec {
  FaultKind kind = FaultKind::None;
  int rank = -1;
  uint64_t op = 0;
  int64_t step = 0;  // 1-based; kFirst/kMiddle/kLast resolve against the schedule
  static constexpr int64_t kFirst = -1, kMiddle = -2, kLast = -3;
  bool active() const { return kind != FaultKind::None; }
  // True when the spec names this rank's operation `seq` (the collective's
  // sequence number on the communicator).
  bool armedFor(int myRank, uint64_t seq) const { return active() && rank == myRank && op == seq; }
  // The 0-based step index this spec names in a schedule of `steps` steps.
  size_t stepIndex(size_t steps) const;
};

// Parses GDR_FAULT's value ("" is no fault); throws InvalidArgument.
FaultSpec parseFault(const std::string& spec);
const char* faultKindName(FaultKind k);

}  // namespace gdr

// A simulator for schedules (collectives/schedule.h): runs every rank's step
// list together under the header's execution model and checks both the
// protocol and the data.
//
// Protocol: per ordered rank pair a FIFO queue; Send is asynchronous and
// copies its source by value; Recv and RecvReduce block. Reported: deadlock
// (no rank can move while some are unfinished), messages never received,
// a send's count differing from its receive's, a region out of its buffer's
// bounds (sizes as the collective implies them), reads of a buffer the rank
// does not have (Output on a Reduce non-root, Input on a Broadcast non-root),
// writes to Input, partially overlapping copies, sends to oneself.
//
// Data: every element is symbolic (Sym): the Input element it derives from
// and, per rank, how many times that rank's contribution is in it (4 bits a
// rank, nranks <= 16). Output and Scratch start poisoned. Reading poison,
// reducing two different elements together, or a count overflowing is
// reported at the step that does it; verify() then checks every rank's
// Output element by element against the collective's definition.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/schedule.h"

namespace gdr::coll::sim {

constexpr int kMaxRanks = 16;

struct Sym {
  bool valid = false;   // false: poison (never written)
  uint32_t index = 0;   // the Input element it derives from
  uint64_t counts = 0;  // 4 bits per rank: how many times rank r's value is in it
};
Sym contribution(int rank, uint32_t index);  // rank's Input element `index`
uint64_t allRanks(int nranks);               // counts with every rank once
std::string describe(const Sym& s);

struct SimResult {
  std::string error;                      // empty: no protocol or data violation
  std::vector<std::vector<Sym>> outputs;  // per rank; empty where there is no Output
  // Per rank, bit q set when rank q's start causally precedes the rank's end
  // (through a chain of messages): a barrier needs every bit.
  std::vector<uint32_t> heardFrom;
};

// args[r] is rank r's arguments (they differ only in rank, and for
// all-to-allv in the counts); schedules[r] its step list.
//
// rendezvous (the default, and what check() uses) adds what the host
// executor does to keep value semantics without copying: a step that writes
// memory one of the rank's own sends still reads waits until the receiver
// has taken that message. Schedules must not deadlock under it either (two
// ranks that each send a buffer and then receive into it would).
SimResult simulate(const std::vector<CollArgs>& args, const std::vector<Schedule>& schedules,
                   bool rendezvous = true);
// "" when every Output holds exactly what the collective defines.
std::string verify(const std::vector<CollArgs>& args, const SimResult& result);
// "" when every message respects its rank's chunkElems and local steps name
// no peer.
std::string checkShape(const std::vector<CollArgs>& args, const std::vector<Schedule>& schedules);
// Builds every rank's schedule with `algo`, checks their shape, simulates and
// verifies them.
std::string check(Algo algo, const std::vector<CollArgs>& args);
// One CollArgs per rank, copies of `base` with rank set.
std::vector<CollArgs> forAllRanks(const CollArgs& base);
// One line naming a case, for failure messages.
std::string caseName(Algo algo, const CollArgs& a);

// The exhaustive sweep: nranks 1..maxRanks x every root (Broadcast, Reduce)
// x counts sweepCounts(nranks) x chunkElems sweepChunks() x in place and not
// (AllReduce, Broadcast, Reduce: Input is Output; AllGather: Input is
// Output's block `rank`, as MPI_IN_PLACE has it). Returns the first maxFailures failures.
std::vector<size_t> sweepCounts(int nranks);
std::vector<size_t> sweepChunks();
std::vector<std::string> sweep(Algo algo, CollKind kind, int maxRanks = kMaxRanks,
                               size_t maxFailures = 5);

}  // namespace gdr::coll::sim

// The event-driven model: every rank walks its own step list (the very
// schedules collectives/ builds) with a clock of its own.
//
//   Send        costs the rank send_us (x the host's oversubscription) and
//               starts a flow: at once when the message is eager (the
//               transport's slots or credits hold it: shm below the
//               single-copy threshold, up to eager_bytes elsewhere), else
//               when the receiver has posted its receive (rendezvous).
//   Recv        blocks until the message has arrived: flow end + the link
//               class's latency (+ sched_us per extra rank on a core). An
//               eager host message whose receiver comes late still needs its
//               copy out of the slots.
//   RecvReduce  the same, then the reduction at reduce_gbps.
//   Copy/Reduce local, at copy_gbps / reduce_gbps.
// A step that writes a region first waits for the rank's single-copy or
// rendezvous sends still reading it (the executor's waitSendsOver).
//
// A flow is a message in transit on its path's links; concurrent flows
// share links max-min fairly (recomputed whenever a flow starts or ends), or
// in the cheap mode each flow keeps the share it found when it started
// (its bottleneck link's capacity over the flows on it then), which is what
// makes tens of thousands of ranks affordable.
#pragma once

#include <vector>

#include "collectives/schedule.h"
#include "sim/cluster.h"
#include "sim/network.h"

namespace gdr::sim {

enum class Sharing { MaxMin, Frozen };

struct EngineInput {
  const Cluster* cluster = nullptr;
  const Network* net = nullptr;
  coll::CollKind kind = coll::CollKind::AllReduce;
  size_t elemBytes = 4;
  Sharing sharing = Sharing::MaxMin;
  // Back-to-back calls, as a benchmark loop makes them: each rank starts
  // call i+1 (after launch_us) as soon as it has finished call i, so a
  // rooted collective pipelines across calls. The result is the steady
  // period: the last finish of the last call less that of call
  // (iterations - 1) / 2, over the calls between (the first half is warm-up);
  // 1 gives one call's time from a common start.
  int iterations = 1;
  // A benchmark's window instead (timedCalls > 0; not where ranks take
  // turns): warmCalls calls, a barrier, timedCalls calls; the result is each
  // rank's time per timed call averaged over the ranks, as gdr-bench reports.
  int warmCalls = 0, timedCalls = 0;
  double launchUs = 0;
};

struct EngineResult {
  double timeUs = 0;  // per call (see iterations), launch included
  size_t messages = 0;
  size_t events = 0;
  // Where ranks take turns: the yields per rank per call (what `perf stat -e
  // syscalls:sys_enter_sched_yield` counts on the machine; 0 otherwise).
  double yieldsPerCall = 0;
};

// Runs all ranks' schedules (one per rank, rank order); throws
// InternalError on a deadlock or an unmatched message.
EngineResult runEngine(const EngineInput& in, const std::vector<coll::Schedule>& scheds);

}  // namespace gdr::sim

// Ranks that outnumber their host's cores, in turns. The communicator makes
// a waiting rank yield at once when ranks outnumber cores (it sets the spin
// before the yield to 0), so a core runs one rank at a time: the rank keeps
// the core while it works (up to the scheduler's quantum) or drives a copy,
// and hands it on with a sched_yield (yield_us of the core) when what it
// waits for is not there yet. A waiting rank notices its message only when
// its turn comes round again. The host's ranks wait in one queue that every
// core takes from (the kernel balances busy ranks over the cores).
//
// A core that sees every queued rank yield in a row without progress spins
// in the model without events (it polls them at yield_us each in reality);
// wake() picks up that rotation at the phase it has reached.
#pragma once

#include <deque>
#include <vector>

#include "sim/cluster.h"

namespace gdr::sim {

// What one yield costs the core on cluster c (yield_us, yield_growth).
double yieldCostUs(const Cluster& c);

class Turns {
 public:
  Turns(const Cluster& c, int nranks);

  struct Next {
    int rank = -1;  // -1: none (the core spins or has nothing to run)
    double t = 0;
  };
  // The first ranks to run, one per core, at time 0.
  std::vector<Next> start();
  // Rank r stops running at t (its yield already counted in t): back to the
  // queue (`requeue`; `dry`: it yielded without doing anything) or out of it
  // (its calls are done). The rank its core runs next, or none.
  Next pass(int r, double t, bool requeue, bool dry);
  // What rank r waits for happened at t: where a core of r's host spins,
  // the queued rank whose turn comes first from t, and when.
  Next wake(int r, double t);
  // Whether r holds a core now.
  bool holds(int r) const { return coreOf_[r] >= 0; }
  // Whether another rank of r's host waits for a core (r can be preempted).
  bool contended(int r) const { return !hosts_[hostOf_[r]].queue.empty(); }
  double yieldUs() const { return yieldUs_; }
  double quantumUs() const { return quantumUs_; }

 private:
  struct Core {
    int running = -1;
    bool spinning = false;
    double spinStart = 0;  // spinning: when the queue's first rank's turn began
  };
  struct Host {
    std::deque<int> queue;  // ranks waiting for a core, next first
    std::vector<Core> cores;
    int dryYields = 0;  // yields in a row without progress
  };
  Next run(Host& h, int core, double t);
  std::vector<Host> hosts_;
  std::vector<int> hostOf_, coreOf_;  // coreOf_: the core r runs on, or -1
  double yieldUs_, quantumUs_;
};

}  // namespace gdr::sim

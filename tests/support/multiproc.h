// Ranks as forked processes: runs a function in N children that share a
// communicator made through the TCP bootstrap, and collects how each ended.
// A child reports failure through its exit status (gtest assertions do not
// cross fork); a watchdog kills every child that outlives the deadline.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gdrcoll.h"

namespace gdrtest {

struct RankExit {
  int code = -1;    // exit status, or -1 if killed by a signal
  int signal = 0;   // the signal that ended it, or 0
  bool timedOut = false;
};

using Env = std::vector<std::pair<std::string, std::string>>;
// fn returns 0 on success; anything else is a failure the child reports.
using RankFn = std::function<int(int rank, int nranks, gdrComm_t comm)>;

// `preInit` runs in each child before its communicator is made (e.g. to give
// ranks different GDR_HOST_IDs, so they act as separate hosts).
// `onId` runs in the parent once the unique id exists, before the ranks
// receive it (e.g. to probe the rendezvous port first).
std::vector<RankExit> runRanks(int nranks, const RankFn& fn, const Env& env = {}, int timeoutSec = 240,
                               const std::function<void(int rank)>& preInit = nullptr,
                               const std::function<void(const gdrUniqueId&)>& onId = nullptr);

// True when every rank exited with status 0.
bool allOk(const std::vector<RankExit>& exits, std::string* why);

// Reports a failed check from inside a child (to stderr) and counts it.
#define CHILD_CHECK(cond, ...)                                    \
  do {                                                            \
    if (!(cond)) {                                                \
      std::fprintf(stderr, "[rank %d] %s:%d: check failed: %s: ", \
                   ::gdrtest::childRank(), __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                          \
      std::fprintf(stderr, "\n");                                 \
      ++::gdrtest::childFailures();                               \
    }                                                             \
  } while (0)

int& childFailures();
int childRank();

}  // namespace gdrtest

#include "core/thread_affinity.h"

#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>

#include "core/log.h"
#include "core/params.h"

namespace gdr {

void widenHelperAffinity(const char* who) noexcept {
  try {
    if (param::getString("GDR_HELPER_AFFINITY") == "inherit") return;
    cpu_set_t mine;
    CPU_ZERO(&mine);
    if (sched_getaffinity(0, sizeof(mine), &mine) != 0 || CPU_COUNT(&mine) != 1) return;
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    if (ncpu <= 1) return;
    cpu_set_t all;
    CPU_ZERO(&all);
    for (long c = 0; c < ncpu && c < CPU_SETSIZE; ++c) CPU_SET(static_cast<int>(c), &all);
    if (sched_setaffinity(0, sizeof(all), &all) != 0) {
      GDR_INFO(kInit, "%s: bound to one CPU and could not widen it (%s)", who, std::strerror(errno));
      return;
    }
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
      GDR_INFO(kInit,
               "%s: the process is bound to a single CPU; helper threads run on any CPU of its cpuset instead, "
               "so they do not wait for the caller's thread (GDR_HELPER_AFFINITY=inherit keeps the binding)",
               who);
  } catch (...) {
  }
}

}  // namespace gdr

#include "progress/poll_wait.h"

#include <sched.h>

#include <thread>

#include "core/error.h"

namespace gdr::progress {

namespace {
constexpr std::chrono::milliseconds kYieldFor{5};
}  // namespace

void pollUntil(const std::function<bool()>& ready, const Deadline& deadline,
               const std::function<std::string()>& what, const std::function<gdrResult_t()>& asyncError) {
  std::chrono::steady_clock::time_point yieldUntil{};
  for (uint64_t i = 0;; ++i) {
    if (ready()) return;
    if ((i & 15) == 0) {  // the clock and the error state every few polls only
      if (asyncError) {
        gdrResult_t code = asyncError();
        if (code != gdrSuccess) throw Error(code, "the communicator failed while waiting " + what());
      }
      if (deadline.passed())
        throw TimeoutError(strprintf("timed out after %lld ms waiting %s (GDR_TIMEOUT_MS)",
                                     static_cast<long long>(deadline.ms), what().c_str()));
    }
    // Spin, then yield for the first kYieldFor of the wait, then nap. By
    // time, not by count: on a VM whose sleeps round up to a scheduler tick
    // (4 ms at HZ=250) a nap taken too early is a 4 ms floor per wait.
    if (i < 2048) continue;
    if (i == 2048) yieldUntil = std::chrono::steady_clock::now() + kYieldFor;
    if ((i & 63) != 0 || std::chrono::steady_clock::now() < yieldUntil) sched_yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace gdr::progress

#include "progress/poll_wait.h"

#include <sched.h>

#include <thread>

#include "core/error.h"

namespace gdr::progress {

void pollUntil(const std::function<bool()>& ready, const Deadline& deadline,
               const std::function<std::string()>& what, const std::function<gdrResult_t()>& asyncError) {
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
    if (i < 2048) continue;
    if (i < 8192) sched_yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace gdr::progress

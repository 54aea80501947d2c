#include "progress/poll_wait.h"

#include <thread>

namespace gdr::progress {

namespace {

// Nothing to drive: the word or the stream moves by itself. The owner's
// failure (an abort, a revoke, a peer's death) ends the wait at the next
// poll.
struct ConditionWaiter {
  const std::function<bool()>& readyFn;
  const std::function<std::string()>& whatFn;
  const std::function<gdrResult_t()>& asyncError;

  bool poll() { return false; }
  bool ready() { return readyFn(); }
  void checkEachPoll() {
    if (!asyncError) return;
    gdrResult_t code = asyncError();
    if (code != gdrSuccess) throw Error(code, "the communicator failed while waiting " + whatFn());
  }
  void began() {}
  void checkNow() {}
  void nap() { std::this_thread::sleep_for(std::chrono::microseconds(50)); }
  std::string what() { return "waiting " + whatFn(); }
};

}  // namespace

void pollUntil(const std::function<bool()>& ready, const Deadline& deadline,
               const std::function<std::string()>& what,
               const std::function<gdrResult_t()>& asyncError) {
  ConditionWaiter w{ready, what, asyncError};
  waitUntil(w, progressThreadWaits(deadline.ms), &deadline);
}

}  // namespace gdr::progress

// Waits of the progress thread: poll a condition until it holds, a deadline
// passes (TimeoutError naming what was awaited) or the owner fails elsewhere
// (its error code). The one wait loop (progress/wait_loop.h) with the
// progress thread's rule: spin briefly, then yield, then nap, so a long wait
// costs little CPU and a short one little latency.
#pragma once

#include <functional>
#include <string>

#include "gdrcoll.h"
#include "progress/wait_loop.h"

namespace gdr::progress {

// `ready` is polled; `asyncError` (may be empty) returning non-success ends
// the wait with that code. `what` is called only to word an error.
void pollUntil(const std::function<bool()>& ready, const Deadline& deadline,
               const std::function<std::string()>& what,
               const std::function<gdrResult_t()>& asyncError = nullptr);

}  // namespace gdr::progress

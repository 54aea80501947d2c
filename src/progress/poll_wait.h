// Waits of the progress thread: poll a condition until it holds, a deadline
// passes (TimeoutError naming what was awaited) or the owner fails elsewhere
// (its error code). Spins briefly, then yields, then sleeps in short naps, so
// a long wait costs little CPU and a short one little latency.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "gdrcoll.h"

namespace gdr::progress {

struct Deadline {
  std::chrono::steady_clock::time_point at;
  int64_t ms = 0;  // the timeout it was made from, for messages
  static Deadline in(int64_t ms) { return {std::chrono::steady_clock::now() + std::chrono::milliseconds(ms), ms}; }
  bool passed() const { return std::chrono::steady_clock::now() >= at; }
};

// `ready` is polled; `asyncError` (may be empty) returning non-success ends
// the wait with that code. `what` is called only to word an error.
void pollUntil(const std::function<bool()>& ready, const Deadline& deadline,
               const std::function<std::string()>& what,
               const std::function<gdrResult_t()>& asyncError = nullptr);

}  // namespace gdr::progress

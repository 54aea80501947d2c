// How long the waits the progress paths use really take on this machine:
// sleep_for(50 us), poll() with a 1 ms timeout, sched_yield, and the cost
// of reading the steady clock. A VM without high-resolution timers rounds
// sleeps up to a scheduler tick (4 ms at HZ=250), which would put a floor
// under anything that naps while waiting. Prints min/median/max over 200.
#include <poll.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>
#include <vector>

static void probe(const char* name, const std::function<void()>& f, int n = 200) {
  std::vector<double> us;
  for (int i = 0; i < n; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  std::printf("%-28s min %9.2f us  median %9.2f us  max %9.2f us\n", name, us[0], us[n / 2], us[n - 1]);
}

int main() {
  probe("sleep_for(50us)", [] { std::this_thread::sleep_for(std::chrono::microseconds(50)); });
  probe("poll(none, 1 ms)", [] { poll(nullptr, 0, 1); });
  probe("1000 x sched_yield", [] { for (int i = 0; i < 1000; ++i) sched_yield(); });
  probe("1000 x steady_clock::now", [] { for (int i = 0; i < 1000; ++i) (void)std::chrono::steady_clock::now(); });
  return 0;
}

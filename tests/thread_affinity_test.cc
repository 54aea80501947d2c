// Helper threads of a process bound to one CPU widen their own mask (and
// only theirs), unless GDR_HELPER_AFFINITY=inherit.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

#include "core/thread_affinity.h"

namespace {

int cpusOfThisThread() {
  cpu_set_t m;
  CPU_ZERO(&m);
  EXPECT_EQ(sched_getaffinity(0, sizeof(m), &m), 0);
  return CPU_COUNT(&m);
}

// In a thread bound to CPU 0 (standing for the caller's bound process):
// the helper's CPU count after widening, and the caller's.
std::pair<int, int> helperAndCaller() {
  std::pair<int, int> out{0, 0};
  std::thread caller([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
    std::thread helper([&] {
      gdr::widenHelperAffinity("test helper");
      out.first = cpusOfThisThread();
    });
    helper.join();
    out.second = cpusOfThisThread();
  });
  caller.join();
  return out;
}

TEST(HelperAffinity, AHelperOfAOneCpuProcessRunsOnEveryCpu) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || cpusOfThisThread() < 2) GTEST_SKIP() << "needs two CPUs";
  unsetenv("GDR_HELPER_AFFINITY");
  auto [helper, caller] = helperAndCaller();
  EXPECT_GE(helper, 2);
  EXPECT_EQ(caller, 1) << "the caller's own binding must stay";
}

TEST(HelperAffinity, InheritKeepsTheBinding) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || cpusOfThisThread() < 2) GTEST_SKIP() << "needs two CPUs";
  setenv("GDR_HELPER_AFFINITY", "inherit", 1);
  auto [helper, caller] = helperAndCaller();
  unsetenv("GDR_HELPER_AFFINITY");
  EXPECT_EQ(helper, 1);
  EXPECT_EQ(caller, 1);
}

}  // namespace

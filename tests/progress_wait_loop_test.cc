// The one wait loop (progress/wait_loop.h) with a counting waiter: when it
// spins, yields and naps, that a poll that moves starts the idle count
// again, that the waiter's checks end it at once, and that every wait ends
// at its deadline with a timeout naming what it awaited. pollUntil is the
// same loop with the progress thread's rule.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>

#include "core/error.h"
#include "progress/poll_wait.h"
#include "progress/wait_loop.h"

namespace gdr::progress {
namespace {

using Clock = std::chrono::steady_clock;

struct CountingWaiter {
  uint64_t readyAfter = UINT64_MAX;  // polls
  uint64_t moveEvery = 0;            // 0: nothing ever moves
  uint64_t failAt = 0;               // checkEachPoll throws at this poll (0: never)
  uint64_t polls = 0, lasted = 0, checks = 0, naps = 0;
  uint64_t firstNapPoll = 0;
  Clock::time_point start = Clock::now(), firstNapAt{};

  bool poll() {
    ++polls;
    return moveEvery && polls % moveEvery == 0;
  }
  bool ready() { return polls >= readyAfter; }
  void checkEachPoll() {
    if (failAt && polls == failAt) throw RemoteError("the peer went away");
  }
  void began() { ++lasted; }
  void checkNow() { ++checks; }
  void nap() {
    if (!naps++) {
      firstNapPoll = polls;
      firstNapAt = Clock::now();
    }
  }
  std::string what() { return "waiting for the counting waiter"; }
};

WaitRule rule(uint64_t spin, uint64_t napAfterPolls, int napAfterMs, uint64_t napEvery,
              int64_t timeoutMs) {
  return {spin, napAfterPolls, std::chrono::milliseconds(napAfterMs), napEvery, timeoutMs};
}

TEST(WaitLoop, AShortWaitReadsNoClockAndNeverNaps) {
  CountingWaiter w;
  w.readyAfter = 40;  // under one clock period
  waitUntil(w, rule(0, 0, 0, 1, 1000));
  EXPECT_EQ(w.polls, 40u);
  EXPECT_EQ(w.lasted, 0u);
  EXPECT_EQ(w.naps, 0u);
}

TEST(WaitLoop, NapsOnlyBeyondTheRulesPolls) {
  CountingWaiter w;
  w.readyAfter = 5000;
  waitUntil(w, rule(100, 3000, 0, 1, 10000));
  EXPECT_EQ(w.lasted, 1u);  // the wait began lasting once
  EXPECT_EQ(w.firstNapPoll, 3001u);
  EXPECT_EQ(w.naps, 4999u - 3000u);  // then every idle poll naps (napEvery 1) until the last
}

TEST(WaitLoop, NapsOnlyOnceTheWaitHasLastedTheRulesTime) {
  CountingWaiter w;
  w.readyAfter = UINT64_MAX;
  // Ends the wait by its deadline; naps one poll in 4 once 20 ms have passed.
  EXPECT_THROW(waitUntil(w, rule(0, 0, 20, 4, 60)), TimeoutError);
  ASSERT_GT(w.naps, 0u);
  EXPECT_GE(w.firstNapAt - w.start, std::chrono::milliseconds(20));
  EXPECT_EQ(w.firstNapPoll % 4, 0u);
  EXPECT_LE(w.naps, w.polls / 4);
}

TEST(WaitLoop, APollThatMovesStartsTheIdleCountAgain) {
  CountingWaiter w;
  w.readyAfter = 20000;
  w.moveEvery = 500;  // never 1000 idle polls in a row
  waitUntil(w, rule(0, 1000, 0, 1, 10000));
  EXPECT_EQ(w.polls, 20000u);
  EXPECT_EQ(w.naps, 0u);
}

TEST(WaitLoop, TheWaitersCheckEndsItAtOnce) {
  CountingWaiter w;
  w.failAt = 7;
  EXPECT_THROW(waitUntil(w, rule(0, 0, 0, 1, 10000)), RemoteError);
  EXPECT_EQ(w.polls, 7u);
}

TEST(WaitLoop, ALastingWaitTimesOutNamingWhatItAwaited) {
  CountingWaiter w;
  const auto t0 = Clock::now();
  try {
    waitUntil(w, rule(0, 0, 0, 1, 30));
    FAIL() << "no timeout";
  } catch (const TimeoutError& e) {
    const auto took = Clock::now() - t0;
    EXPECT_GE(took, std::chrono::milliseconds(30));
    EXPECT_LT(took, std::chrono::seconds(5));
    EXPECT_EQ(std::string(e.what()),
              "timed out after 30 ms waiting for the counting waiter (GDR_TIMEOUT_MS)");
    EXPECT_GE(w.checks, 1u);  // the slow checks ran while it lasted
  }
}

TEST(WaitLoop, AGivenDeadlineWinsOverTheRulesTimeout) {
  CountingWaiter w;
  const Deadline by = Deadline::in(20);
  const auto t0 = Clock::now();
  try {
    waitUntil(w, rule(0, 0, 0, 1, 600000), &by);
    FAIL() << "no timeout";
  } catch (const TimeoutError& e) {
    EXPECT_LT(Clock::now() - t0, std::chrono::seconds(5));
    EXPECT_NE(std::string(e.what()).find("after 20 ms"), std::string::npos) << e.what();
  }
}

TEST(WaitLoop, PollUntilEndsWithTheOwnersFailure) {
  int polls = 0;
  try {
    pollUntil([&] { return ++polls > 1000000000; }, Deadline::in(60000),
              [] { return std::string("for a word"); },
              [&] { return polls >= 5 ? gdrRemoteError : gdrSuccess; });
    FAIL() << "the wait did not end";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), gdrRemoteError);
    EXPECT_EQ(polls, 5);
    EXPECT_NE(std::string(e.what()).find("failed while waiting for a word"), std::string::npos)
        << e.what();
  }
}

TEST(WaitLoop, PollUntilTimesOutNamingWhatItAwaited) {
  try {
    pollUntil([] { return false; }, Deadline::in(25), [] { return std::string("for a word"); });
    FAIL() << "no timeout";
  } catch (const TimeoutError& e) {
    EXPECT_EQ(std::string(e.what()), "timed out after 25 ms waiting for a word (GDR_TIMEOUT_MS)");
  }
}

}  // namespace
}  // namespace gdr::progress

// The progress engine without CUDA: flag words are a plain vector and a
// "stream" is a test thread that writes a job's start word and then waits
// on its done word, as cuStreamWriteValue32 / cuStreamWaitValue32 do on the
// GPU. Checks order, gating, deadlines, and that failures release every
// stream and put the owner in its error state.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "progress/progress_engine.h"

namespace gdr::progress {
namespace {

struct Harness {
  std::vector<uint32_t> words;
  std::atomic<gdrResult_t> error{gdrSuccess};
  std::atomic<int> errorCalls{0};
  std::string errorText;
  std::unique_ptr<Engine> engine;

  explicit Harness(int64_t timeoutMs = 5000, size_t ring = 8, size_t extra = 4) : words(2 * ring + extra, 0) {
    EngineConfig cfg;
    cfg.timeoutMs = timeoutMs;
    cfg.ringSlots = ring;
    cfg.onError = [this](gdrResult_t c, const std::string& t) {
      errorText = t;
      ++errorCalls;
      error = c;
    };
    cfg.asyncError = [this] { return error.load(); };
    engine = std::make_unique<Engine>(cfg, words.data(), words.size());
  }
  // The stream side: reaching the operation and waiting for its release.
  void reach(const Ticket& t) { engine->store(t.startWord(), t.seq); }
  bool released(const Ticket& t) const { return static_cast<int32_t>(engine->load(t.doneWord()) - t.seq) >= 0; }
  void waitReleased(const Ticket& t) {
    while (!released(t)) std::this_thread::yield();
  }
};

TEST(ProgressEngine, RunsJobsInSubmitOrderOnceTheirStreamReachesThem) {
  Harness h;
  std::vector<int> order;
  std::vector<Ticket> ts;
  std::mt19937 rng(std::random_device{}());
  const int n = 40;  // more than the ring: slots are reused
  for (int i = 0; i < n; ++i) {
    Ticket t = h.engine->reserve();
    h.engine->submit(t, "job " + std::to_string(i), [&order, i](const Deadline&) { order.push_back(i); });
    // Random delay before the stream reaches it: the job must not run early.
    if (rng() % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 500));
    EXPECT_FALSE(h.released(t));
    h.reach(t);
    h.waitReleased(t);
    ts.push_back(t);
  }
  h.engine->waitIdle();
  ASSERT_EQ(order.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) EXPECT_EQ(order[i], i);
  EXPECT_EQ(h.error.load(), gdrSuccess);
}

TEST(ProgressEngine, JobWaitsForItsGateAndTheCallerDoesNotBlock) {
  Harness h;
  std::atomic<bool> ran{false};
  Ticket t = h.engine->reserve();
  h.engine->submit(t, "gated", [&](const Deadline&) { ran = true; });  // returns at once
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_FALSE(ran.load()) << "the job ran before its stream reached it";
  EXPECT_FALSE(h.engine->idle());
  h.reach(t);
  h.waitReleased(t);
  EXPECT_TRUE(ran.load());
}

TEST(ProgressEngine, AGateThatNeverOpensTimesOutFailsTheOwnerAndReleasesEveryStream) {
  Harness h(/*timeoutMs=*/100);
  Ticket stuck = h.engine->reserve();
  h.engine->submit(stuck, "all-reduce of 8 B", [](const Deadline&) { FAIL() << "must not run"; });
  Ticket later = h.engine->reserve();
  std::atomic<bool> laterRan{false};
  h.engine->submit(later, "broadcast", [&](const Deadline&) { laterRan = true; });
  h.reach(later);  // never reach `stuck`
  h.waitReleased(stuck);
  h.waitReleased(later);
  h.engine->waitIdle();
  EXPECT_EQ(h.error.load(), gdrTimeout);
  EXPECT_EQ(h.errorCalls.load(), 1);
  EXPECT_NE(h.errorText.find("all-reduce of 8 B"), std::string::npos) << h.errorText;
  EXPECT_NE(h.errorText.find("GDR_TIMEOUT_MS"), std::string::npos) << h.errorText;
  EXPECT_FALSE(laterRan.load()) << "a job after a failure must not run";
}

TEST(ProgressEngine, AFailingJobReleasesItsStreamAndLaterOnesFailFast) {
  Harness h;
  Ticket a = h.engine->reserve();
  h.engine->submit(a, "send", [](const Deadline&) { throw RemoteError("peer 1 died"); });
  Ticket b = h.engine->reserve();
  std::atomic<bool> bRan{false};
  h.engine->submit(b, "recv", [&](const Deadline&) { bRan = true; });
  h.reach(a);
  h.reach(b);
  h.waitReleased(a);
  h.waitReleased(b);
  h.engine->waitIdle();
  EXPECT_EQ(h.error.load(), gdrRemoteError);
  EXPECT_NE(h.errorText.find("peer 1 died"), std::string::npos);
  EXPECT_FALSE(bRan.load());
}

TEST(ProgressEngine, AnOwnerFailureElsewhereStopsAWaitingJob) {
  Harness h;
  Ticket t = h.engine->reserve();
  h.engine->submit(t, "all-gather", [](const Deadline&) {});
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  h.error = gdrRemoteError;  // e.g. gdrCommAbort on another thread
  h.waitReleased(t);         // released long before the 5 s timeout
  h.engine->waitIdle();
}

TEST(ProgressEngine, JobWaitsInsideRunHaveADeadline) {
  Harness h(/*timeoutMs=*/100);
  Ticket t = h.engine->reserve();
  h.engine->submit(t, "copy", [&](const Deadline& d) {
    pollUntil([] { return false; }, d, [] { return std::string("for a copy that never ends"); });
  });
  h.reach(t);
  h.waitReleased(t);
  EXPECT_EQ(h.error.load(), gdrTimeout);
  EXPECT_NE(h.errorText.find("a copy that never ends"), std::string::npos) << h.errorText;
}

TEST(ProgressEngine, UngatedJobsAndExtraWordsServeReplayedGraphs) {
  Harness h(5000, 4, 2);
  size_t w0 = h.engine->allocWord(), w1 = h.engine->allocWord();
  EXPECT_EQ(w0, 8u);
  EXPECT_EQ(w1, 9u);
  EXPECT_THROW(h.engine->allocWord(), NotSupported);
  int runs = 0;
  for (int replay = 0; replay < 5; ++replay) {
    h.engine->store(w0, 0);  // the graph resets its word, then pushes
    Job j;
    j.what = "captured all-reduce";
    j.run = [&](const Deadline&) { ++runs; };
    j.doneWord = static_cast<int64_t>(w0);
    j.doneValue = 1;
    h.engine->push(std::move(j));
    while (h.engine->load(w0) != 1) std::this_thread::yield();
  }
  EXPECT_EQ(runs, 5);
}

TEST(ProgressEngine, ReserveWaitsForAFreeSlot) {
  Harness h(5000, /*ring=*/2);
  Ticket a = h.engine->reserve();
  Ticket b = h.engine->reserve();
  EXPECT_NE(a.slot, b.slot);
  h.engine->submit(a, "a", [](const Deadline&) {});
  h.engine->submit(b, "b", [](const Deadline&) {});
  std::atomic<bool> reached{false};
  std::thread stream([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    reached = true;
    h.reach(a);
  });
  Ticket c = h.engine->reserve();  // both slots busy until `a` is released
  EXPECT_TRUE(reached.load());
  EXPECT_EQ(c.slot, a.slot);
  EXPECT_TRUE(h.released(a));
  stream.join();
  h.reach(b);
  h.engine->submit(c, "c", [](const Deadline&) {});
  h.reach(c);
  h.engine->waitIdle();
  EXPECT_EQ(h.error.load(), gdrSuccess);
}

TEST(ProgressEngine, WaitIdleFollowsEverySubmittedJob) {
  Harness h;
  std::atomic<int> done{0};
  for (int i = 0; i < 5; ++i) {
    Ticket t = h.engine->reserve();
    h.engine->submit(t, "j", [&](const Deadline&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      ++done;
    });
    h.reach(t);
  }
  h.engine->waitIdle();
  EXPECT_EQ(done.load(), 5);
  EXPECT_TRUE(h.engine->idle());
}

TEST(ProgressEngine, DestructionRunsWhatIsQueued) {
  std::atomic<int> done{0};
  {
    Harness h;
    for (int i = 0; i < 3; ++i) {
      Ticket t = h.engine->reserve();
      h.engine->submit(t, "j", [&](const Deadline&) { ++done; });
      h.reach(t);
    }
  }
  EXPECT_EQ(done.load(), 3);
}

}  // namespace
}  // namespace gdr::progress

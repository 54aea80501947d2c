// paths::progressThreadConfig, the progress engine's configuration the
// staged and GPUDirect paths share, on a real communicator: the thread
// runs the caller's start hook, its waits stop at once when a revoke is
// requested elsewhere, and the failure reaches the communicator (a revoke
// applied) while the job's stream is still released.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "comm/comm.h"
#include "paths/progress_thread.h"
#include "progress/progress_engine.h"
#include "support/multiproc.h"

namespace {

int stopsOnRevoke(gdrComm_t comm) {
  auto& c = *static_cast<gdr::Communicator*>(comm);
  std::atomic<bool> started{false};
  std::vector<uint32_t> words(2 * 8, 0);
  const auto t0 = std::chrono::steady_clock::now();
  {
    gdr::progress::EngineConfig cfg =
        gdr::paths::progressThreadConfig(c, 8, "test progress thread", [&] { started = true; });
    CHILD_CHECK(cfg.timeoutMs == c.config().timeoutMs, "timeout %lld, want the communicator's %lld",
                (long long)cfg.timeoutMs, (long long)c.config().timeoutMs);
    CHILD_CHECK(cfg.ringSlots == 8, "ring of %zu slots, want 8", cfg.ringSlots);
    gdr::progress::Engine engine(cfg, words.data(), words.size());
    gdr::progress::Job job;
    job.what = "a job whose stream never reaches it";
    job.run = [](const gdr::progress::Deadline&) {};
    job.gateWord = 0;  // nobody writes it
    job.gateValue = 1;
    job.doneWord = 1;
    job.doneValue = 7;
    engine.push(job);
    c.requestRevoke();  // e.g. gdrCommRevoke from another thread
    engine.waitIdle();
  }
  const auto took = std::chrono::steady_clock::now() - t0;
  CHILD_CHECK(started.load(), "the start hook did not run on the thread");
  CHILD_CHECK(words[1] == 7, "the job's stream was not released (done word %u)", words[1]);
  CHILD_CHECK(c.asyncError() == gdrRemoteError, "async error %d, want the revoke's gdrRemoteError",
              c.asyncError());
  CHILD_CHECK(took < std::chrono::seconds(10), "the wait did not stop at the revoke (%lld ms)",
              (long long)std::chrono::duration_cast<std::chrono::milliseconds>(took).count());
  return gdrtest::childFailures() ? 1 : 0;
}

TEST(PathsProgressThread, ARevokeStopsTheThreadsWaitsAndReachesTheCommunicator) {
  auto exits = gdrtest::runRanks(
      1, [](int, int, gdrComm_t comm) { return stopsOnRevoke(comm); }, {}, 60);
  std::string why;
  EXPECT_TRUE(gdrtest::allOk(exits, &why)) << why;
}

}  // namespace

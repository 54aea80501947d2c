// The verbs congestion controller (cc_window.h) driven by synthetic traces:
// a bottleneck link (a rate, a base delay, a FIFO queue) simulated in
// virtual time, and hand-made signal sequences.
#if GDR_HAVE_IB
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>

#include "core/error.h"
#include "support/cc_config.h"
#include "transport/ib/cc_window.h"
#include "transport/ib/retry_counters.h"

namespace gdr::transport::ib {
namespace {

constexpr size_t kKiB = 1024;

// One sender behind a bottleneck: a chunk waits for the link to be free,
// takes bytes/rate on it, then baseUs more to be acknowledged. The sender
// posts while the window allows (one chunk always when nothing is in flight).
struct LinkSim {
  CcWindow& cc;
  double rate;    // bytes per microsecond
  double baseUs;  // propagation and processing, both ways
  size_t chunk = 64 * kKiB;
  double now = 0, freeAt = 0;
  size_t inFlight = 0;
  uint64_t doneBytes = 0;
  std::multimap<double, std::pair<size_t, double>> pending;  // done time -> (bytes, sent time)

  void runUntil(double endUs, const std::function<void(double)>& each = nullptr) {
    while (now < endUs) {
      while (inFlight == 0 || inFlight + chunk <= cc.window()) {
        const double start = std::max(now, freeAt);
        freeAt = start + static_cast<double>(chunk) / rate;
        pending.emplace(freeAt + baseUs, std::make_pair(chunk, now));
        inFlight += chunk;
      }
      auto it = pending.begin();
      now = it->first;
      cc.onComplete(it->second.first, it->second.second, now);
      inFlight -= it->second.first;
      doneBytes += it->second.first;
      pending.erase(it);
      if (each) each(now);
    }
  }
};

CcConfig config(CcMode m) { return test::ccTestConfig(m); }

TEST(IbCc, ParsesModes) {
  EXPECT_EQ(parseCcMode("off"), CcMode::Off);
  EXPECT_EQ(parseCcMode("FIXED"), CcMode::Fixed);
  EXPECT_EQ(parseCcMode("linerate"), CcMode::Linerate);
  EXPECT_EQ(parseCcMode("Auto"), CcMode::Auto);
  EXPECT_THROW(parseCcMode("timely"), InvalidArgument);
  for (CcMode m : {CcMode::Off, CcMode::Fixed, CcMode::Linerate, CcMode::Auto})
    EXPECT_EQ(parseCcMode(ccModeName(m)), m);
}

// Bandwidth-delay product (3 MB) above the largest window: once the window
// is ack-clocked nothing queues, so it reaches the full window and stays.
// (Startup sends two chunks per acknowledgement, which queues half a window
// at the link near its end: at most that one decrease.)
TEST(IbCc, CleanLinkGrowsToTheFullWindowAndStays) {
  CcWindow cc(config(CcMode::Auto));
  EXPECT_EQ(cc.phase(), CcPhase::Startup);
  EXPECT_EQ(cc.window(), 128 * kKiB);
  LinkSim sim{cc, 1000.0, 3000.0};
  sim.runUntil(200000);
  EXPECT_NE(cc.phase(), CcPhase::Startup);
  EXPECT_EQ(cc.window(), 2048 * kKiB);
  EXPECT_LE(cc.stats().decreases, 1u);
  const uint64_t d0 = cc.stats().decreases;
  sim.runUntil(1.2e6, [&](double) { ASSERT_EQ(cc.window(), 2048 * kKiB); });
  EXPECT_EQ(cc.stats().decreases, d0);
  EXPECT_GE(cc.stats().probes, 8u);  // probes still fire (clamped at the full window)
}

// BDP 500 KB below the largest window: a queue forms once the window passes
// it. The window must settle near BDP + rate * target (1 MB) and keep the
// link busy, without collapsing or running to the maximum.
TEST(IbCc, ConvergesNearTheDelayTargetAndKeepsTheLinkBusy) {
  CcWindow cc(config(CcMode::Auto));
  LinkSim sim{cc, 1000.0, 500.0};
  sim.runUntil(200000);
  const uint64_t b0 = sim.doneBytes;
  const double t0 = sim.now;
  size_t lo = SIZE_MAX, hi = 0;
  sim.runUntil(1.2e6, [&](double) {
    lo = std::min(lo, cc.window());
    hi = std::max(hi, cc.window());
  });
  const double util = static_cast<double>(sim.doneBytes - b0) / (sim.now - t0) / 1000.0;
  EXPECT_GE(util, 0.9) << "window " << lo << ".." << hi;
  EXPECT_GE(lo, 500 * kKiB * 7 / 10);
  EXPECT_LE(hi, 1600 * kKiB);
  EXPECT_GT(cc.stats().decreases, 0u);
}

// At the full window on a clean link; then the link's rate halves (another
// flow arrives): the queue builds delay and the window must come down, and
// go back up when the rate returns.
TEST(IbCc, BacksOffWhenAQueueBuildsAndRecovers) {
  CcWindow cc(config(CcMode::Auto));
  LinkSim sim{cc, 1000.0, 3000.0};
  sim.runUntil(200000);
  ASSERT_EQ(cc.window(), 2048 * kKiB);
  const uint64_t d0 = cc.stats().decreases;
  sim.rate = 250.0;  // BDP 750 KB, so 2 MiB in flight queues 5 ms
  sim.runUntil(1.2e6);
  EXPECT_GT(cc.stats().decreases, d0);
  EXPECT_LT(cc.window(), 1400 * kKiB);
  EXPECT_GE(cc.window(), 128 * kKiB);
  sim.rate = 1000.0;
  sim.runUntil(4e6);
  EXPECT_GE(cc.window(), 1800 * kKiB);
}

TEST(IbCc, RetransmissionsDecreaseOncePerRound) {
  CcWindow cc(config(CcMode::Auto));
  LinkSim sim{cc, 1000.0, 3000.0};
  sim.runUntil(200000);
  ASSERT_EQ(cc.window(), 2048 * kKiB);
  cc.onRetry(1, sim.now);
  const size_t w1 = cc.window();
  EXPECT_NEAR(static_cast<double>(w1), 0.7 * 2048 * kKiB, 4096);
  cc.onRetry(3, sim.now + 1);  // the same round: the chunks in flight left before the decrease
  EXPECT_EQ(cc.window(), w1);
  sim.runUntil(sim.now + 7000);  // more than a round of the old window completes
  const size_t w2 = cc.window();
  cc.onRetry(1, sim.now);
  EXPECT_LT(cc.window(), w2);
  EXPECT_EQ(cc.stats().retries, 5u);
  cc.onRetry(0, sim.now);  // no news is not a signal
  EXPECT_EQ(cc.stats().retries, 5u);
}

// Stable with no additive increase, on a link where the probes cost nothing:
// one probe per period, each kept (+5%).
TEST(IbCc, ProbeFiresEveryPeriod) {
  CcConfig c = config(CcMode::Auto);
  c.increaseBytes = 0;
  c.maxWindow = 64 * 1024 * kKiB;
  c.probeUs = 50000;
  CcWindow cc(c);
  LinkSim sim{cc, 1000.0, 500.0};
  sim.runUntil(100000);  // startup overshoots the BDP and leaves at the first queue
  ASSERT_NE(cc.phase(), CcPhase::Startup);
  const uint64_t p0 = cc.stats().probes;
  std::vector<double> starts;
  CcPhase last = cc.phase();
  sim.runUntil(1.1e6, [&](double t) {
    if (cc.phase() == CcPhase::Probe && last != CcPhase::Probe) starts.push_back(t);
    last = cc.phase();
  });
  const uint64_t n = cc.stats().probes - p0;
  EXPECT_GE(n, 18u);
  EXPECT_LE(n, 21u);
  ASSERT_GE(starts.size(), 2u);
  for (size_t i = 1; i < starts.size(); ++i) {
    EXPECT_GE(starts[i] - starts[i - 1], 50000.0);
    EXPECT_LE(starts[i] - starts[i - 1], 60000.0);  // the period plus at most a round
  }
}

// A probe that builds a queue is undone: the window returns to its value
// before the probe.
TEST(IbCc, ProbeThatBuildsAQueueIsUndone) {
  CcConfig c = config(CcMode::Auto);
  c.increaseBytes = 0;
  CcWindow cc(c);
  // Startup on a clean trace (1 ms per chunk), left at a queue of 4 ms.
  double t = 0;
  for (int i = 0; i < 8; ++i, t += 100) cc.onComplete(64 * kKiB, t, t + 1000);
  for (int i = 0; i < 20 && cc.phase() == CcPhase::Startup; ++i, t += 100)
    cc.onComplete(64 * kKiB, t, t + 5000);
  ASSERT_EQ(cc.phase(), CcPhase::Stable);
  ASSERT_LT(cc.window(), c.maxWindow);
  while (cc.phase() != CcPhase::Probe) {
    cc.onComplete(64 * kKiB, t, t + 1000);
    t += 1000;
  }
  const size_t probing = cc.window();
  for (int i = 0; i < 20 && cc.phase() == CcPhase::Probe; ++i, t += 1000)
    cc.onComplete(64 * kKiB, t, t + 5000);  // 4 ms of queue
  EXPECT_EQ(cc.phase(), CcPhase::Stable);
  EXPECT_LT(cc.window(), probing);
  EXPECT_EQ(cc.stats().probesKept, 0u);
}

TEST(IbCc, LinerateStartsFullAndOnlyDecreases) {
  std::mt19937_64 rng(std::random_device{}());
  CcWindow cc(config(CcMode::Linerate));
  EXPECT_EQ(cc.window(), 2048 * kKiB);
  double t = 0;
  size_t prev = cc.window();
  for (int i = 0; i < 20000; ++i) {
    t += 100;
    const double rtt = 200 + static_cast<double>(rng() % 3000);
    cc.onComplete(64 * kKiB * (1 + rng() % 4), t - rtt, t);
    if (rng() % 500 == 0) cc.onRetry(1, t);
    ASSERT_LE(cc.window(), prev);
    ASSERT_GE(cc.window(), 128 * kKiB);
    prev = cc.window();
  }
  EXPECT_LT(cc.window(), 2048 * kKiB);
  EXPECT_EQ(cc.stats().probes, 0u);
  // On a clean link it stays where it is.
  LinkSim sim{cc, 1000.0, 3000.0};
  sim.now = sim.freeAt = t;
  const size_t w = cc.window();
  sim.runUntil(t + 1e6);
  EXPECT_EQ(cc.window(), w);
}

TEST(IbCc, FixedNeverMoves) {
  std::mt19937_64 rng(std::random_device{}());
  CcWindow cc(config(CcMode::Fixed));
  double t = 0;
  for (int i = 0; i < 20000; ++i) {
    t += 100;
    cc.onComplete(64 * kKiB, t - static_cast<double>(rng() % 20000), t);
    if (rng() % 100 == 0) cc.onRetry(2, t);
    ASSERT_EQ(cc.window(), 512 * kKiB);
  }
  EXPECT_EQ(cc.stats().decreases, 0u);
  EXPECT_GT(cc.stats().retries, 0u);  // seen, not acted on
}

TEST(IbCc, OffHasNoWindowAndLeavesTheChunkToTheHillClimb) {
  CcWindow cc(config(CcMode::Off));
  EXPECT_EQ(cc.window(), SIZE_MAX);
  cc.onRetry(5, 1);
  cc.onComplete(64 * kKiB, 0, 1e6);
  EXPECT_EQ(cc.window(), SIZE_MAX);
  EXPECT_EQ(cc.chunk(192 * kKiB, 64 * kKiB, 256 * kKiB), 192 * kKiB);
}

TEST(IbCc, ChunkFollowsTheWindowAlignedAndInRange) {
  CcConfig c = config(CcMode::Fixed);
  for (size_t w : {4 * kKiB, 128 * kKiB, 300 * kKiB, 601 * kKiB, 1024 * kKiB, 4096 * kKiB}) {
    c.fixedWindow = w;
    CcWindow cc(c);
    for (size_t hill : {64 * kKiB, 128 * kKiB, 256 * kKiB}) {
      const size_t ch = cc.chunk(hill, 64 * kKiB, 256 * kKiB);
      EXPECT_EQ(ch % 4096, 0u);
      EXPECT_GE(ch, 64 * kKiB);
      EXPECT_LE(ch, std::max(hill, 64 * kKiB));
      if (w / CcWindow::kChunksPerWindow >= 64 * kKiB) {
        EXPECT_LE(ch, w / CcWindow::kChunksPerWindow);
      }
    }
  }
}

TEST(IbCc, RetryCountersReadTheDriversNamesAndSkipTheRest) {
  char tmpl[] = "/tmp/gdr-cc-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  auto put = [&](const char* name, int v) {
    FILE* f = std::fopen((dir + "/" + name).c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fprintf(f, "%d\n", v);
    std::fclose(f);
  };
  put("completer_retry_err", 3);
  put("rcvd_seq_err", 1);
  put("sent_pkts", 1000);
  RetryCounters rc(dir);
  EXPECT_TRUE(rc.available());
  EXPECT_EQ(rc.names().size(), 2u);
  EXPECT_EQ(rc.total(), 4u);
  EXPECT_EQ(rc.poll(0), 0u);
  put("completer_retry_err", 10);
  EXPECT_EQ(rc.poll(100), 0u);  // within the period: not read
  EXPECT_EQ(rc.poll(RetryCounters::kPeriodUs + 1), 7u);
  EXPECT_FALSE(RetryCounters(dir + "/missing").available());
  for (const char* n : {"completer_retry_err", "rcvd_seq_err", "sent_pkts"})
    std::remove((dir + "/" + n).c_str());
  rmdir(tmpl);
}

}  // namespace
}  // namespace gdr::transport::ib
#endif

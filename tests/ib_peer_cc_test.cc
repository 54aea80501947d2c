// A verbs connection's congestion control over several devices (peer_cc.h):
// one window per device, each fed by its own chunks' completions and by the
// retransmission counters of its own ports. Synthetic traces per device: a
// bottleneck link per device simulated in virtual time, and counter files
// written by hand.
#if GDR_HAVE_IB
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "support/cc_config.h"
#include "transport/ib/peer_cc.h"

namespace gdr::transport::ib {
namespace {

constexpr size_t kKiB = 1024;

CcConfig config(CcMode m) { return test::ccTestConfig(m); }

// Every device behind its own bottleneck (rate in bytes per us, base delay
// both ways); chunks of 64 KiB posted on a device while its window allows,
// completions delivered in time order across devices. At most `credit`
// bytes in flight per device (the endpoint's receive slots bound it too).
struct DevicesSim {
  struct Link {
    double rate, baseUs;
    double freeAt = 0;
    uint64_t doneBytes = 0;
  };
  PeerCc& cc;
  std::vector<Link> links;
  size_t chunk = 64 * kKiB;
  size_t credit = 2048 * kKiB;
  double now = 0;
  std::multimap<double, std::tuple<int, size_t, double>> pending;  // done -> (dev, bytes, sent)

  void runUntil(double endUs) {
    while (now < endUs) {
      for (int d = 0; d < static_cast<int>(links.size()); ++d)
        while (cc.mayPost(d, chunk) && cc.inFlight(d) + chunk <= credit) {
          Link& l = links[d];
          const double start = std::max(now, l.freeAt);
          l.freeAt = start + static_cast<double>(chunk) / l.rate;
          pending.emplace(l.freeAt + l.baseUs, std::make_tuple(d, chunk, now));
          cc.sent(d, chunk);
          cc.noteChunk(d, chunk);
        }
      auto it = pending.begin();
      now = it->first;
      const auto [d, bytes, sent] = it->second;
      cc.completed(d, bytes, sent, now);
      links[d].doneBytes += bytes;
      pending.erase(it);
    }
  }
};

// A folder standing for one port's hw_counters, removed at the end.
struct CounterDir {
  std::string dir;
  CounterDir() {
    char tmpl[] = "/tmp/gdr-peercc-XXXXXX";
    if (mkdtemp(tmpl)) dir = tmpl;
  }
  ~CounterDir() {
    for (const char* n : {"completer_retry_err", "rcvd_seq_err"})
      std::remove((dir + "/" + n).c_str());
    rmdir(dir.c_str());
  }
  void put(const char* name, int v) const {
    FILE* f = std::fopen((dir + "/" + name).c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fprintf(f, "%d\n", v);
    std::fclose(f);
  }
};

// Device 0 is clean, device 1's link is ten times slower with the same base
// delay, so a queue builds there: only device 1's window comes down, and
// device 0's grows to the full window as it would alone.
TEST(IbPeerCc, ACongestedDeviceShrinksOnlyItsOwnWindow) {
  PeerCc cc(config(CcMode::Auto), {{"dev0", {}}, {"dev1", {}}}, 0, 1);
  ASSERT_EQ(cc.paths(), 2);
  DevicesSim sim{cc, {{1000.0, 3000.0}, {100.0, 3000.0}}};
  sim.runUntil(1.5e6);
  EXPECT_EQ(cc.window(0).window(), 2048 * kKiB);
  EXPECT_LE(cc.window(0).stats().decreases, 1u);
  EXPECT_GT(cc.window(1).stats().decreases, 2u);
  EXPECT_GT(cc.window(1).stats().delayHigh, 0u);
  // BDP of device 1 is 300 KB; with the 500 us target the window stays
  // near BDP + rate * target, far below device 0's.
  EXPECT_LT(cc.window(1).window(), 800 * kKiB);
  // Each device kept busy: device 0 at what its full window allows over its
  // 3 ms (2 MiB / 3.1 ms = 676 bytes/us), device 1 near its link's rate.
  const double t = sim.now;
  EXPECT_GT(static_cast<double>(sim.links[0].doneBytes) / t, 600.0);
  EXPECT_GT(static_cast<double>(sim.links[1].doneBytes) / t, 0.8 * 100.0);
  // The chunk each device gets follows its own window.
  ChunkPolicy adaptive(0, 256 * kKiB);
  EXPECT_EQ(cc.chunk(adaptive, 0), 256 * kKiB);
  EXPECT_LT(cc.chunk(adaptive, 1), 256 * kKiB);
}

// Retransmissions counted on device 1's port decrease device 1's window
// only; device 0's port counted none.
TEST(IbPeerCc, RetransmissionsCountOnTheDeviceWhosePortSawThem) {
  CounterDir p0, p1;
  ASSERT_FALSE(p0.dir.empty());
  ASSERT_FALSE(p1.dir.empty());
  for (const CounterDir* p : {&p0, &p1}) {
    p->put("completer_retry_err", 10);
    p->put("rcvd_seq_err", 2);
  }
  PeerCc cc(config(CcMode::Auto), {{"dev0", {p0.dir}}, {"dev1", {p1.dir}}}, 0, 1);
  DevicesSim sim{cc, {{1000.0, 3000.0}, {1000.0, 3000.0}}};
  sim.runUntil(300000);
  ASSERT_EQ(cc.window(0).window(), 2048 * kKiB);
  ASSERT_EQ(cc.window(1).window(), 2048 * kKiB);
  EXPECT_EQ(cc.window(0).stats().retries, 0u);
  EXPECT_EQ(cc.window(1).stats().retries, 0u);
  p1.put("completer_retry_err", 13);
  p1.put("rcvd_seq_err", 4);
  sim.runUntil(sim.now + 2 * RetryCounters::kPeriodUs + 10000);
  EXPECT_EQ(cc.window(0).stats().retries, 0u);
  EXPECT_EQ(cc.window(1).stats().retries, 5u);
  EXPECT_EQ(cc.window(0).window(), 2048 * kKiB);
  EXPECT_LT(cc.window(1).window(), 2048 * kKiB);
  EXPECT_GE(cc.window(1).stats().decreases, 1u);
}

// Two ports of one device: one window, the counters of both ports summed.
TEST(IbPeerCc, PortsOfOneDeviceShareItsWindowAndCounters) {
  CounterDir a, b;
  a.put("completer_retry_err", 1);
  b.put("completer_retry_err", 1);
  b.put("rcvd_seq_err", 1);
  RetryCounters rc({a.dir, b.dir});
  EXPECT_EQ(rc.names().size(), 3u);
  EXPECT_EQ(rc.total(), 3u);
  EXPECT_EQ(rc.poll(0), 0u);
  a.put("completer_retry_err", 3);
  b.put("rcvd_seq_err", 5);
  EXPECT_EQ(rc.poll(RetryCounters::kPeriodUs + 1), 6u);
  EXPECT_FALSE(RetryCounters(std::vector<std::string>{"", a.dir + "/missing"}).available());

  PeerCc cc(config(CcMode::Auto), {{"dev0", {a.dir, b.dir}}}, 0, 1);
  DevicesSim sim{cc, {{1000.0, 3000.0}}};
  sim.runUntil(300000);
  ASSERT_EQ(cc.window(0).window(), 2048 * kKiB);
  b.put("completer_retry_err", 3);
  sim.runUntil(sim.now + 2 * RetryCounters::kPeriodUs + 10000);
  EXPECT_EQ(cc.window(0).stats().retries, 2u);
  EXPECT_LT(cc.window(0).window(), 2048 * kKiB);
}

// Bytes in flight are per device; a chunk resent on another device's QP
// takes its bytes there.
TEST(IbPeerCc, InFlightIsPerDeviceAndMovesWithAResend) {
  PeerCc cc(config(CcMode::Fixed), {{"dev0", {}}, {"dev1", {}}}, 0, 1);
  cc.sent(0, 512 * kKiB);
  EXPECT_FALSE(cc.mayPost(0, 4096));  // device 0's fixed window is full
  EXPECT_TRUE(cc.mayPost(1, 256 * kKiB));
  cc.sent(1, 256 * kKiB);
  EXPECT_TRUE(cc.mayPost(1, 256 * kKiB));
  EXPECT_FALSE(cc.mayPost(1, 256 * kKiB + 4096));
  cc.moved(0, 1, 256 * kKiB);
  EXPECT_EQ(cc.inFlight(0), 256 * kKiB);
  EXPECT_EQ(cc.inFlight(1), 512 * kKiB);
  EXPECT_TRUE(cc.mayPost(0, 256 * kKiB));
  EXPECT_FALSE(cc.mayPost(1, 4096));
  cc.completed(1, 256 * kKiB, 0, 100);
  EXPECT_EQ(cc.inFlight(1), 256 * kKiB);
  cc.dropInFlight();
  EXPECT_EQ(cc.inFlight(0), 0u);
  EXPECT_EQ(cc.inFlight(1), 0u);
  // Nothing in flight: one chunk may always go, however small the window.
  EXPECT_TRUE(cc.mayPost(0, 4 * 1024 * kKiB));
  EXPECT_THROW(PeerCc(config(CcMode::Auto), {}, 0, 1), Error);
}

// off: no window on any device, and the counters are not read.
TEST(IbPeerCc, OffHasNoWindowOnAnyDevice) {
  CounterDir p;
  p.put("completer_retry_err", 1);
  PeerCc cc(config(CcMode::Off), {{"dev0", {p.dir}}, {"dev1", {p.dir}}}, 0, 1);
  DevicesSim sim{cc, {{1000.0, 3000.0}, {100.0, 3000.0}}};
  sim.chunk = 256 * kKiB;
  sim.runUntil(20000);
  p.put("completer_retry_err", 100);
  sim.runUntil(40000);
  for (int d = 0; d < 2; ++d) {
    EXPECT_TRUE(cc.mayPost(d, 1u << 30));
    EXPECT_EQ(cc.window(d).stats().retries, 0u);
    EXPECT_EQ(cc.window(d).stats().decreases, 0u);
  }
}

}  // namespace
}  // namespace gdr::transport::ib
#endif

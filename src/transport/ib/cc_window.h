// Congestion control of one verbs peer connection: how many bytes may be in
// flight (posted, not yet acknowledged by the peer's NIC), and from that the
// chunk size.
//
// Terms. A chunk's delay is its completion time minus its send time, minus
// the base delay of chunks of its size (the smallest delay seen for its
// 64 KiB size class over the last two epochs of kBaseEpochUs): what is left
// is queueing, at the bottleneck or behind this connection's own chunks. A
// round is one window's worth of completed bytes. Congestion is a delay
// above the target or a retransmission the NIC reports (device counters,
// fed in through onRetry); the window shrinks by the decrease factor at most
// once per round.
//
// Modes (GDR_IB_CC):
// - off: no window (only the receiver's credits limit what is in flight).
// - fixed: a constant window.
// - linerate: starts at the full window and only ever decreases.
// - auto: three phases. Startup doubles the window every round until the
//   first congestion (decrease, then stable) or the full window. Stable
//   grows it additively (the increase per round) while the delay is under
//   the target and decreases on congestion. Every probe period stable tries
//   the window +5% for one round (probe): kept when that round saw no
//   congestion, otherwise the window before the probe comes back.
// Pure logic: times come in as arguments, so tests drive it with traces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gdr::transport::ib {

enum class CcMode { Off, Fixed, Linerate, Auto };
enum class CcPhase { Startup, Stable, Probe };

const char* ccModeName(CcMode m);
const char* ccPhaseName(CcPhase p);
// "off", "fixed", "linerate", "auto" (any case); throws InvalidArgument.
CcMode parseCcMode(const std::string& s);

struct CcConfig {
  CcMode mode = CcMode::Auto;
  double targetUs = 500;             // queueing delay allowed above the base
  size_t increaseBytes = 64 * 1024;  // stable: added per round without congestion
  double decrease = 0.7;             // window kept on congestion
  double probeUs = 100000;           // stable: how often to probe +5%
  size_t minWindow = 128 * 1024;
  size_t maxWindow = 2 * 1024 * 1024;
  size_t fixedWindow = 1024 * 1024;  // mode fixed
};

class CcWindow {
 public:
  static constexpr double kProbeGain = 1.05;
  static constexpr double kBaseEpochUs = 2e6;
  static constexpr size_t kClass = 64 * 1024;  // size class of the base delay
  static constexpr int kClasses = 5;           // <=64K, <=128K, <=192K, <=256K, larger
  static constexpr size_t kChunksPerWindow = 4;

  explicit CcWindow(const CcConfig& cfg);

  CcMode mode() const { return cfg_.mode; }
  CcPhase phase() const { return phase_; }
  // Bytes allowed in flight (SIZE_MAX when off). The caller still lets one
  // chunk go when nothing is in flight.
  size_t window() const;
  // The chunk for the next write: the hill-climb's choice, capped so that a
  // window holds kChunksPerWindow chunks, within [lo, hi] and 4 KiB aligned.
  size_t chunk(size_t hillClimb, size_t lo, size_t hi) const;

  // A chunk of `bytes` sent at sentUs was acknowledged at doneUs.
  void onComplete(size_t bytes, double sentUs, double doneUs);
  // `n` retransmissions (timeouts, sequence NAKs) were seen at nowUs.
  void onRetry(uint64_t n, double nowUs);

  struct Stats {
    uint64_t completions = 0, bytes = 0, rounds = 0;
    uint64_t decreases = 0, delayHigh = 0, retries = 0;
    uint64_t probes = 0, probesKept = 0;
    size_t minWindow = 0, maxWindow = 0;
    double lastDelayUs = 0, maxDelayUs = 0;
    int phaseChanges = 0;
  };
  const Stats& stats() const { return st_; }

 private:
  void congestion(double nowUs);
  void endRound(double nowUs);
  void setPhase(CcPhase p);
  void setWindow(double w);
  double baseFor(size_t bytes, double rttUs, double nowUs);

  CcConfig cfg_;
  CcPhase phase_ = CcPhase::Startup;
  double win_ = 0;
  double roundBytes_ = 0;   // completed in this round
  double roundTarget_ = 0;  // bytes that end it
  bool roundCongested_ = false, roundDecreased_ = false;
  double lastProbeUs_ = -1;
  double probeSaved_ = 0;
  double base_[kClasses][2];  // per size class: this epoch's and the previous minimum
  double epochStartUs_ = -1;
  Stats st_;
};

}  // namespace gdr::transport::ib

#include "transport/ib/peer_cc.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/log.h"
#include "core/params.h"

namespace gdr::transport::ib {

CcConfig ccConfigFromParams() {
  CcConfig c;
  c.mode = parseCcMode(param::getString("GDR_IB_CC"));
  const int64_t target = param::getInt("GDR_IB_CC_TARGET_US");
  const int64_t inc = param::getInt("GDR_IB_CC_INCREASE");
  const int64_t dec = param::getInt("GDR_IB_CC_DECREASE");
  const int64_t probe = param::getInt("GDR_IB_CC_PROBE_MS");
  const int64_t win = param::getInt("GDR_IB_CC_WINDOW");
  if (target < 1 || inc < 0 || dec < 5 || dec > 100 || probe < 1 || win < 4096)
    throw InvalidArgument(
        "GDR_IB_CC_TARGET_US >= 1, GDR_IB_CC_INCREASE >= 0, GDR_IB_CC_DECREASE in [5,100], "
        "GDR_IB_CC_PROBE_MS >= 1 and GDR_IB_CC_WINDOW >= 4096 are required");
  c.targetUs = static_cast<double>(target);
  c.increaseBytes = static_cast<size_t>(inc);
  c.decrease = static_cast<double>(dec) / 100.0;
  c.probeUs = static_cast<double>(probe) * 1000.0;
  c.fixedWindow = static_cast<size_t>(win);
  return c;
}

PeerCc::PeerCc(const CcConfig& cfg, const std::string& countersDir, int myRank, int peerRank)
    : cc_(cfg),
      retry_(cfg.mode == CcMode::Off ? std::string() : countersDir),
      me_(myRank),
      peer_(peerRank) {
  retryAtStart_ = retry_.total();
}

size_t PeerCc::chunk(const ChunkPolicy& p) const {
  if (!p.adaptive()) return p.chunk();
  return cc_.chunk(p.chunk(), ChunkPolicy::kMin, ChunkPolicy::kMax);
}

void PeerCc::noteChunk(size_t bytes) {
  ++chunks_;
  chunkBytes_ += bytes;
}

void PeerCc::completed(size_t bytes, double sentUs, double nowUs) {
  inFlight_ -= std::min(inFlight_, bytes);
  cc_.onComplete(bytes, sentUs, nowUs);
  const double rtt = std::max(nowUs - sentUs, 1.0);
  ++hist_[std::min(static_cast<int>(4.0 * std::log2(rtt)), kBuckets - 1)];
  if (uint64_t n = retry_.poll(nowUs)) cc_.onRetry(n, nowUs);
  const CcWindow::Stats& s = cc_.stats();
  if (s.decreases != lastDecreases_ || s.phaseChanges != lastPhaseChanges_) {
    trace(s.phaseChanges != lastPhaseChanges_ ? "phase" : "decrease", nowUs);
    lastDecreases_ = s.decreases;
    lastPhaseChanges_ = s.phaseChanges;
  }
}

double PeerCc::quantileUs(double q) const {
  uint64_t n = 0;
  for (uint64_t h : hist_) n += h;
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += hist_[i];
    if (seen > 0 && static_cast<double>(seen) >= q * static_cast<double>(n))
      return std::exp2((i + 1) / 4.0);  // the bucket's upper edge
  }
  return 0;
}

void PeerCc::trace(const char* why, double nowUs) const {
  const CcWindow::Stats& s = cc_.stats();
  GDR_TRACE(kNet,
            "rank %d -> rank %d: cc %s (%s) at %.0f us: window %zu, phase %s, delay %.0f us, "
            "retries %llu",
            me_, peer_, ccModeName(cc_.mode()), why, nowUs, cc_.window(), ccPhaseName(cc_.phase()),
            s.lastDelayUs, (unsigned long long)s.retries);
}

PeerCc::~PeerCc() {
  const CcWindow::Stats& s = cc_.stats();
  if (s.completions == 0) return;
  const uint64_t portRetries = retry_.available() ? retry_.total() - retryAtStart_ : 0;
  GDR_INFO(
      kNet,
      "rank %d -> rank %d: cc %s: %llu chunks (mean %llu bytes), window %zu now (%zu-%zu), "
      "phase %s, %llu decreases (%llu high delay, %llu retransmissions seen, %llu on the "
      "port), %llu probes (%llu kept), queueing delay max %.0f us, chunk completion p50 %.0f us "
      "p99 %.0f us",
      me_, peer_, ccModeName(cc_.mode()), (unsigned long long)chunks_,
      (unsigned long long)(chunks_ ? chunkBytes_ / chunks_ : 0),
      cc_.mode() == CcMode::Off ? 0 : cc_.window(), s.minWindow, s.maxWindow,
      ccPhaseName(cc_.phase()), (unsigned long long)s.decreases, (unsigned long long)s.delayHigh,
      (unsigned long long)s.retries, (unsigned long long)portRetries, (unsigned long long)s.probes,
      (unsigned long long)s.probesKept, s.maxDelayUs, quantileUs(0.5), quantileUs(0.99));
}

}  // namespace gdr::transport::ib

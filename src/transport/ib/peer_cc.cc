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

PeerCc::Path::Path(const CcConfig& cfg, const CcPath& p)
    : cc(cfg),
      retry(cfg.mode == CcMode::Off ? std::vector<std::string>() : p.countersDirs),
      name(p.name),
      ports(static_cast<int>(p.countersDirs.size())) {
  retryAtStart = retry.total();
}

PeerCc::PeerCc(const CcConfig& cfg, const std::vector<CcPath>& paths, int myRank, int peerRank)
    : me_(myRank), peer_(peerRank) {
  if (paths.empty()) throw InvalidArgument("a verbs connection's congestion control needs a path");
  paths_.reserve(paths.size());
  for (const CcPath& p : paths) paths_.emplace_back(cfg, p);
}

size_t PeerCc::chunk(const ChunkPolicy& p, int d) const {
  if (!p.adaptive()) return p.chunk();
  return paths_[d].cc.chunk(p.chunk(), ChunkPolicy::kMin, ChunkPolicy::kMax);
}

void PeerCc::noteChunk(int d, size_t bytes) {
  ++paths_[d].chunks;
  paths_[d].chunkBytes += bytes;
}

void PeerCc::moved(int from, int to, size_t bytes) {
  if (from == to) return;
  paths_[from].inFlight -= std::min(paths_[from].inFlight, bytes);
  paths_[to].inFlight += bytes;
}

void PeerCc::completed(int d, size_t bytes, double sentUs, double nowUs) {
  Path& p = paths_[d];
  p.inFlight -= std::min(p.inFlight, bytes);
  p.cc.onComplete(bytes, sentUs, nowUs);
  const double rtt = std::max(nowUs - sentUs, 1.0);
  ++p.hist[std::min(static_cast<int>(4.0 * std::log2(rtt)), kBuckets - 1)];
  if (uint64_t n = p.retry.poll(nowUs)) p.cc.onRetry(n, nowUs);
  const CcWindow::Stats& s = p.cc.stats();
  if (s.decreases != p.lastDecreases || s.phaseChanges != p.lastPhaseChanges) {
    trace(p, s.phaseChanges != p.lastPhaseChanges ? "phase" : "decrease", nowUs);
    p.lastDecreases = s.decreases;
    p.lastPhaseChanges = s.phaseChanges;
  }
}

double PeerCc::Path::quantileUs(double q) const {
  uint64_t n = 0;
  for (uint64_t h : hist) n += h;
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += hist[i];
    if (seen > 0 && static_cast<double>(seen) >= q * static_cast<double>(n))
      return std::exp2((i + 1) / 4.0);  // the bucket's upper edge
  }
  return 0;
}

std::string PeerCc::via(const Path& p) const {
  return paths_.size() > 1 ? " via " + p.name : std::string();
}

void PeerCc::trace(const Path& p, const char* why, double nowUs) const {
  const CcWindow::Stats& s = p.cc.stats();
  GDR_TRACE(kNet,
            "rank %d -> rank %d%s: cc %s (%s) at %.0f us: window %zu, phase %s, delay %.0f us, "
            "retries %llu",
            me_, peer_, via(p).c_str(), ccModeName(p.cc.mode()), why, nowUs, p.cc.window(),
            ccPhaseName(p.cc.phase()), s.lastDelayUs, (unsigned long long)s.retries);
}

void PeerCc::summary(const Path& p) const {
  const CcWindow::Stats& s = p.cc.stats();
  if (s.completions == 0) return;
  const uint64_t portRetries = p.retry.available() ? p.retry.total() - p.retryAtStart : 0;
  GDR_INFO(
      kNet,
      "rank %d -> rank %d%s: cc %s: %llu chunks (mean %llu bytes), window %zu now (%zu-%zu), "
      "phase %s, %llu decreases (%llu high delay, %llu retransmissions seen, %llu on the "
      "%s), %llu probes (%llu kept), queueing delay max %.0f us, chunk completion p50 %.0f "
      "us p99 %.0f us",
      me_, peer_, via(p).c_str(), ccModeName(p.cc.mode()), (unsigned long long)p.chunks,
      (unsigned long long)(p.chunks ? p.chunkBytes / p.chunks : 0),
      p.cc.mode() == CcMode::Off ? 0 : p.cc.window(), s.minWindow, s.maxWindow,
      ccPhaseName(p.cc.phase()), (unsigned long long)s.decreases, (unsigned long long)s.delayHigh,
      (unsigned long long)s.retries, (unsigned long long)portRetries,
      p.ports > 1 ? strprintf("%d ports", p.ports).c_str() : "port", (unsigned long long)s.probes,
      (unsigned long long)s.probesKept, s.maxDelayUs, p.quantileUs(0.5), p.quantileUs(0.99));
}

PeerCc::~PeerCc() {
  for (const Path& p : paths_) summary(p);
}

}  // namespace gdr::transport::ib

#include "transport/ib/cc_window.h"

#include <strings.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/error.h"

namespace gdr::transport::ib {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
// Weight of a new sample in the smoothed delay: one scheduling hiccup of a
// busy host does not halve the window, a queue that lasts a few chunks does.
constexpr double kDelayGain = 0.25;
}  // namespace

const char* ccModeName(CcMode m) {
  switch (m) {
    case CcMode::Off:
      return "off";
    case CcMode::Fixed:
      return "fixed";
    case CcMode::Linerate:
      return "linerate";
    default:
      return "auto";
  }
}

const char* ccPhaseName(CcPhase p) {
  switch (p) {
    case CcPhase::Startup:
      return "startup";
    case CcPhase::Stable:
      return "stable";
    default:
      return "probe";
  }
}

CcMode parseCcMode(const std::string& s) {
  for (CcMode m : {CcMode::Off, CcMode::Fixed, CcMode::Linerate, CcMode::Auto})
    if (strcasecmp(s.c_str(), ccModeName(m)) == 0) return m;
  throw InvalidArgument("GDR_IB_CC=" + s + " must be off, fixed, linerate or auto");
}

CcWindow::CcWindow(const CcConfig& cfg) : cfg_(cfg) {
  cfg_.minWindow = std::max<size_t>(cfg_.minWindow, 1);
  cfg_.maxWindow = std::max(cfg_.maxWindow, cfg_.minWindow);
  cfg_.decrease = std::clamp(cfg_.decrease, 0.05, 1.0);
  switch (cfg_.mode) {
    case CcMode::Fixed:
      win_ = static_cast<double>(cfg_.fixedWindow);
      phase_ = CcPhase::Stable;
      break;
    case CcMode::Linerate:
      win_ = static_cast<double>(cfg_.maxWindow);
      phase_ = CcPhase::Stable;
      break;
    default:
      win_ = static_cast<double>(cfg_.minWindow);
      break;
  }
  roundTarget_ = win_;
  for (auto& b : base_) b[0] = b[1] = kInf;
  st_.minWindow = st_.maxWindow = static_cast<size_t>(win_);
}

size_t CcWindow::window() const {
  if (cfg_.mode == CcMode::Off) return SIZE_MAX;
  return static_cast<size_t>(win_);
}

size_t CcWindow::chunk(size_t hillClimb, size_t lo, size_t hi) const {
  constexpr size_t kAlign = 4096;
  size_t c = hillClimb;
  if (cfg_.mode != CcMode::Off) c = std::min(c, window() / kChunksPerWindow);
  c = std::clamp(c, lo, hi);
  return std::max(c / kAlign * kAlign, kAlign);
}

double CcWindow::baseFor(size_t bytes, double rttUs, double nowUs) {
  if (epochStartUs_ < 0) epochStartUs_ = nowUs;
  if (nowUs - epochStartUs_ >= kBaseEpochUs) {
    for (auto& b : base_) {
      b[1] = b[0];
      b[0] = kInf;
    }
    epochStartUs_ = nowUs;
  }
  const size_t c = std::min<size_t>(bytes == 0 ? 0 : (bytes - 1) / kClass, kClasses - 1);
  base_[c][0] = std::min(base_[c][0], rttUs);
  return std::min(base_[c][0], base_[c][1]);
}

void CcWindow::setPhase(CcPhase p) {
  if (p != phase_) ++st_.phaseChanges;
  phase_ = p;
}

void CcWindow::setWindow(double w) {
  win_ = std::clamp(w, static_cast<double>(cfg_.minWindow), static_cast<double>(cfg_.maxWindow));
  st_.minWindow = std::min(st_.minWindow, static_cast<size_t>(win_));
  st_.maxWindow = std::max(st_.maxWindow, static_cast<size_t>(win_));
}

void CcWindow::congestion(double nowUs) {
  roundCongested_ = true;
  if (cfg_.mode == CcMode::Fixed || cfg_.mode == CcMode::Off) return;
  if (phase_ == CcPhase::Probe) {
    // The extra 5% built a queue: back to the window before the probe.
    setWindow(probeSaved_);
    setPhase(CcPhase::Stable);
    lastProbeUs_ = nowUs;
    roundDecreased_ = true;
  } else if (!roundDecreased_) {
    // The chunks now in flight left under the old window and will report
    // the same queue: the next decrease waits until they have completed.
    roundTarget_ = win_;
    setWindow(win_ * cfg_.decrease);
    ++st_.decreases;
    roundDecreased_ = true;
    if (phase_ == CcPhase::Startup) {
      setPhase(CcPhase::Stable);
      lastProbeUs_ = nowUs;
    }
  } else {
    return;
  }
  roundBytes_ = 0;
}

void CcWindow::endRound(double nowUs) {
  ++st_.rounds;
  if (phase_ == CcPhase::Probe && !roundCongested_) {
    ++st_.probesKept;
    setPhase(CcPhase::Stable);
    lastProbeUs_ = nowUs;
  }
  roundBytes_ = 0;
  roundTarget_ = win_;
  roundCongested_ = roundDecreased_ = false;
}

void CcWindow::onComplete(size_t bytes, double sentUs, double doneUs) {
  ++st_.completions;
  st_.bytes += bytes;
  const double rtt = std::max(doneUs - sentUs, 0.0);
  const double delay = rtt - baseFor(bytes, rtt, doneUs);
  st_.lastDelayUs =
      st_.completions == 1 ? delay : st_.lastDelayUs + kDelayGain * (delay - st_.lastDelayUs);
  st_.maxDelayUs = std::max(st_.maxDelayUs, delay);
  if (cfg_.mode == CcMode::Off || cfg_.mode == CcMode::Fixed) return;

  const bool high = st_.lastDelayUs > cfg_.targetUs;
  if (high) {
    ++st_.delayHigh;
    congestion(doneUs);
  } else if (phase_ == CcPhase::Startup) {
    setWindow(win_ + static_cast<double>(bytes));  // doubles per round
    if (win_ >= static_cast<double>(cfg_.maxWindow)) {
      setPhase(CcPhase::Stable);
      lastProbeUs_ = doneUs;
    }
  } else if (phase_ == CcPhase::Stable && cfg_.mode == CcMode::Auto) {
    setWindow(win_ + static_cast<double>(cfg_.increaseBytes) * static_cast<double>(bytes) / win_);
  }
  roundBytes_ += static_cast<double>(bytes);
  if (roundBytes_ >= roundTarget_) endRound(doneUs);

  if (cfg_.mode == CcMode::Auto && phase_ == CcPhase::Stable && lastProbeUs_ >= 0 &&
      doneUs - lastProbeUs_ >= cfg_.probeUs) {
    ++st_.probes;
    probeSaved_ = win_;
    setPhase(CcPhase::Probe);
    setWindow(win_ * kProbeGain);
    roundBytes_ = 0;
    roundTarget_ = win_;
    roundCongested_ = roundDecreased_ = false;
  }
}

void CcWindow::onRetry(uint64_t n, double nowUs) {
  if (n == 0) return;
  st_.retries += n;
  if (cfg_.mode == CcMode::Off || cfg_.mode == CcMode::Fixed) return;
  congestion(nowUs);
}

}  // namespace gdr::transport::ib

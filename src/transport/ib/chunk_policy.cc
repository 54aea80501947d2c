#include "transport/ib/chunk_policy.h"

#include <algorithm>

namespace gdr::transport::ib {

ChunkPolicy::ChunkPolicy(size_t fixedBytes, size_t startBytes)
    : fixed_((fixedBytes + kAlign - 1) / kAlign * kAlign),
      cur_(fixed_ ? fixed_ : std::clamp((startBytes + kAlign - 1) / kAlign * kAlign, kMin, kMax)) {}

void ChunkPolicy::onComplete(size_t bytes, double nowUs, double occupancy) {
  if (fixed_) return;
  if (winStartUs_ < 0) {
    winStartUs_ = nowUs;  // the window's clock starts at its first completion
    winBytes_ = 0;
    winOcc_ = 0;
    n_ = 0;
    return;
  }
  winBytes_ += static_cast<double>(bytes);
  winOcc_ += occupancy;
  if (++n_ < kWindow) return;
  const double elapsed = std::max(nowUs - winStartUs_, 1e-3);
  const double rate = winBytes_ / elapsed;
  const bool receiverBound = winOcc_ / n_ >= 0.9;
  if (receiverBound)
    dir_ = +1;
  else if (lastRate_ > 0 && rate < lastRate_)
    dir_ = -dir_;
  lastRate_ = rate;
  size_t next = cur_;
  if (dir_ > 0)
    next = std::min(cur_ + kStep, kMax);
  else
    next = cur_ > kMin + kStep ? cur_ - kStep : kMin;
  if (next != cur_) ++changes_;
  cur_ = next;
  winStartUs_ = nowUs;
  winBytes_ = 0;
  winOcc_ = 0;
  n_ = 0;
}

}  // namespace gdr::transport::ib

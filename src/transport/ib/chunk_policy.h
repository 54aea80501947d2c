// How big a piece of a message one RDMA write carries.
//
// Fixed when GDR_IB_CHUNK is set (any multiple of 4 KiB, tiny ones included,
// for tests). Otherwise adaptive between 64 KiB and 256 KiB in 4 KiB-aligned
// steps of 64 KiB: after every window of completed chunks the policy compares
// the window's throughput (bytes over the wall time the window took) with the
// previous window's, keeps stepping in the direction that helped and turns
// back when it hurt. When the window ran with the receiver's slots nearly all
// in use (occupancy ≥ 90%), the receiver is the bottleneck and bigger chunks
// (fewer completions, fewer credit updates) win, so it steps up.
// Pure logic: time and occupancy come in as arguments, so tests drive it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gdr::transport::ib {

class ChunkPolicy {
 public:
  static constexpr size_t kAlign = 4096;
  static constexpr size_t kMin = 64 * 1024;
  static constexpr size_t kMax = 256 * 1024;
  static constexpr size_t kStep = 64 * 1024;
  static constexpr int kWindow = 16;

  // fixedBytes 0: adaptive. Otherwise rounded up to kAlign and used as is.
  explicit ChunkPolicy(size_t fixedBytes = 0, size_t startBytes = 128 * 1024);

  size_t chunk() const { return cur_; }
  bool adaptive() const { return fixed_ == 0; }
  // One chunk completed at time nowUs; `occupancy` in [0,1] is the share of
  // the receiver's slots in use when it was posted.
  void onComplete(size_t bytes, double nowUs, double occupancy);
  int changes() const { return changes_; }
  // The last window's throughput in bytes per microsecond (MB/s); 0 before the first.
  double lastRate() const { return lastRate_; }

 private:
  size_t fixed_;
  size_t cur_;
  int dir_ = +1;
  int n_ = 0;
  double winStartUs_ = -1, winBytes_ = 0, winOcc_ = 0;
  double lastRate_ = 0;
  int changes_ = 0;
};

}  // namespace gdr::transport::ib

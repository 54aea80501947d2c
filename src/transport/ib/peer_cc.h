// The congestion controller as one verbs connection uses it: the window
// (cc_window.h) with the bytes this connection has in flight, the NIC's
// retransmission counters as its loss signal, and its log lines (TRACE per
// window decrease and phase change, one INFO summary when the connection
// closes, i.e. when the communicator is destroyed).
#pragma once

#include <string>

#include "transport/ib/cc_window.h"
#include "transport/ib/chunk_policy.h"
#include "transport/ib/retry_counters.h"

namespace gdr::transport::ib {

// GDR_IB_CC and GDR_IB_CC_*; maxWindow is the caller's (the credit window).
CcConfig ccConfigFromParams();

class PeerCc {
 public:
  PeerCc(const CcConfig& cfg, const std::string& countersDir, int myRank, int peerRank);
  ~PeerCc();

  // Whether a chunk of `bytes` may be posted now; one always may when
  // nothing is in flight, so a tiny window still makes progress.
  bool mayPost(size_t bytes) const { return inFlight_ == 0 || inFlight_ + bytes <= cc_.window(); }
  // The next chunk: a fixed GDR_IB_CHUNK as it is, else the hill-climb's
  // choice capped by the window.
  size_t chunk(const ChunkPolicy& p) const;
  void sent(size_t bytes) { inFlight_ += bytes; }
  void completed(size_t bytes, double sentUs, double nowUs);
  size_t inFlight() const { return inFlight_; }
  // The connection dropped its posted chunks (reset after a failure).
  void dropInFlight() { inFlight_ = 0; }
  const CcWindow& window() const { return cc_; }
  // Chunk bytes posted by size (for the summary).
  void noteChunk(size_t bytes);

 private:
  void trace(const char* why, double nowUs) const;

  CcWindow cc_;
  RetryCounters retry_;
  int me_, peer_;
  size_t inFlight_ = 0;
  uint64_t chunks_ = 0, chunkBytes_ = 0;
  uint64_t lastDecreases_ = 0;
  int lastPhaseChanges_ = 0;
  uint64_t retryAtStart_ = 0;
  // Chunk completion times (send to acknowledgement), log-spaced buckets of
  // 2^(1/4) from 1 us: the summary's p50 and p99 within 19%.
  static constexpr int kBuckets = 96;
  uint64_t hist_[kBuckets] = {};
  double quantileUs(double q) const;
};

}  // namespace gdr::transport::ib

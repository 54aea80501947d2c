// The congestion controller as one verbs connection uses it: one window
// (cc_window.h) per device the connection's QPs are on, each with the bytes
// in flight on that device's QPs and the NIC's retransmission counters of
// the ports they use as its loss signal, and their log lines (TRACE per
// window decrease and phase change, one INFO summary per device when the
// connection closes, i.e. when the communicator is destroyed).
//
// Why per device: each device is its own path to the peer (its own link,
// switch port and queues), so one congested NIC must not shrink the window
// of the others, and a retransmission counted on one device's port says
// nothing about another's. Within one device the ports share the window (and
// its counters are summed over them): they are one NIC's, usually behind one
// switch. Chunks are still placed by sequence (qp_lanes.h), not by which
// window has room, so a chunk whose device's window is full waits, and the
// chunks behind it with it: the connection goes at the pace of its slowest
// device times the number of devices, which keeps the receiver's in-order
// consumption simple.
#pragma once

#include <string>
#include <vector>

#include "transport/ib/cc_window.h"
#include "transport/ib/chunk_policy.h"
#include "transport/ib/retry_counters.h"

namespace gdr::transport::ib {

// GDR_IB_CC and GDR_IB_CC_*; maxWindow is the caller's (the credit window).
CcConfig ccConfigFromParams();

// One device of a connection, as the controller sees it: its name (logs)
// and the hw_counters folders of the ports its QPs use.
struct CcPath {
  std::string name;
  std::vector<std::string> countersDirs;
};

class PeerCc {
 public:
  // One window per path, each with `cfg` (maxWindow: the whole credit
  // window, which any one device may fill when the others are idle).
  PeerCc(const CcConfig& cfg, const std::vector<CcPath>& paths, int myRank, int peerRank);
  ~PeerCc();

  int paths() const { return static_cast<int>(paths_.size()); }
  // Whether a chunk of `bytes` may be posted on path d now; one always may
  // when nothing is in flight there, so a tiny window still makes progress.
  bool mayPost(int d, size_t bytes) const {
    const Path& p = paths_[d];
    return p.inFlight == 0 || p.inFlight + bytes <= p.cc.window();
  }
  // The next chunk on path d: a fixed GDR_IB_CHUNK as it is, else the
  // hill-climb's choice capped by d's window.
  size_t chunk(const ChunkPolicy& p, int d) const;
  void sent(int d, size_t bytes) { paths_[d].inFlight += bytes; }
  void completed(int d, size_t bytes, double sentUs, double nowUs);
  // A chunk charged to path `from` goes again on a QP of path `to`
  // (failover): its bytes are in flight there now.
  void moved(int from, int to, size_t bytes);
  size_t inFlight(int d) const { return paths_[d].inFlight; }
  // The connection dropped its posted chunks (reset after a failure).
  void dropInFlight() {
    for (Path& p : paths_) p.inFlight = 0;
  }
  const CcWindow& window(int d) const { return paths_[d].cc; }
  // Chunk bytes posted on path d by size (for the summary).
  void noteChunk(int d, size_t bytes);

 private:
  // Chunk completion times (send to acknowledgement), log-spaced buckets of
  // 2^(1/4) from 1 us: the summary's p50 and p99 within 19%.
  static constexpr int kBuckets = 96;
  struct Path {
    Path(const CcConfig& cfg, const CcPath& p);
    CcWindow cc;
    RetryCounters retry;
    std::string name;
    int ports;  // whose counters are summed
    size_t inFlight = 0;
    uint64_t chunks = 0, chunkBytes = 0;
    uint64_t lastDecreases = 0;
    int lastPhaseChanges = 0;
    uint64_t retryAtStart = 0;
    uint64_t hist[kBuckets] = {};
    double quantileUs(double q) const;
  };
  void trace(const Path& p, const char* why, double nowUs) const;
  void summary(const Path& p) const;
  // "" with one path, " via <device>" with several (log lines).
  std::string via(const Path& p) const;

  std::vector<Path> paths_;
  int me_, peer_;
};

}  // namespace gdr::transport::ib

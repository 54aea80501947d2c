// The per-rank costs both walkers (events and symmetry) charge: local work
// at the calibrated rates, slowed by ranks sharing a core, and a message's
// latency on its path.
#pragma once

#include <algorithm>
#include <cstddef>

#include "collectives/schedule.h"
#include "sim/cluster.h"
#include "sim/network.h"

namespace gdr::sim {

inline double cpuUs(const Cluster& c, size_t bytes, double gbps) {
  return gbps > 0 ? static_cast<double>(bytes) / (gbps * 1e3) * c.oversub() : 0.0;
}
inline double reduceUs(const Cluster& c, size_t bytes) {
  if (c.device)
    return c.kernelReduceGBps > 0 ? static_cast<double>(bytes) / (c.kernelReduceGBps * 1e3) : 0.0;
  return cpuUs(c, bytes, c.reduceGBps);
}
inline double copyUs(const Cluster& c, size_t bytes) {
  return c.device ? 0.0 : cpuUs(c, bytes, c.copyGBps);
}
inline double sendUs(const Cluster& c) { return c.sendUs * c.oversub(); }
// The same for a schedule that runs without the runner (cluster.h short_send_us).
inline double sendUs(const Cluster& c, bool runnerFree) {
  return runnerFree && !c.device && c.shortSendUs >= 0 ? c.shortSendUs * c.oversub() : sendUs(c);
}
// What a message in its slot's header line saves (cluster.h inline_bytes).
inline double inlineSavedUs(const Cluster& c, const Path& p, size_t bytes) {
  const bool inl = !c.device && p.cls == LinkClass::Shm && bytes <= c.inlineBytes;
  return inl ? std::min(c.inlineUs, p.latencyUs) : 0.0;
}
inline double latencyUs(const Cluster& c, const Path& p, size_t bytes) {
  const bool smallLane = !c.device && p.cls == LinkClass::Shm && bytes <= c.smallLaneBytes;
  return p.latencyUs - inlineSavedUs(c, p, bytes) +
         (smallLane ? 0.0 : c.schedUs * (c.oversub() - 1.0));
}
// A local Copy (none when in place) or Reduce step.
inline double localStepUs(const Cluster& c, const coll::Step& st, size_t bytes) {
  if (st.kind == coll::StepKind::Reduce) return reduceUs(c, bytes);
  const bool inPlace = st.src.buf == st.dst.buf && st.src.offset == st.dst.offset;
  return inPlace ? 0.0 : copyUs(c, bytes);
}
// An eager shm message above the small lane's slot size takes the main lane:
// its receiver touches the slot's payload lines, colder the more ranks share
// a core's caches (x ranks per core where they outnumber the cores).
inline double laneUs(const Cluster& c, const Path& p, size_t bytes) {
  if (c.device || p.cls != LinkClass::Shm || bytes <= c.smallLaneBytes) return 0.0;
  return c.laneUs * c.oversub();
}
// A late receiver of an eager host message still copies it out of the slots.
inline double copyOutUs(const Cluster& c, const Path& p, size_t bytes) {
  if (c.device || p.cls != LinkClass::Shm || p.flowCapGBps <= 0) return 0.0;
  return static_cast<double>(bytes) / (2.0 * p.flowCapGBps * 1e3) * c.oversub();
}

// When a receive posted at `recvPost` finishes, its message having arrived
// at `arrival`: an eager one no earlier than the receiver's own message
// cost and copy-out; a RecvReduce adds the reduction.
inline double receiveDoneUs(const Cluster& c, const coll::Step& st, size_t bytes, double t,
                            double arrival, bool isEager, double recvPost, const Path& p,
                            bool runnerFree = false) {
  t = t > arrival ? t : arrival;
  if (isEager) {
    const double own = recvPost + sendUs(c, runnerFree) + copyOutUs(c, p, bytes) + laneUs(c, p, bytes);
    t = t > own ? t : own;
  }
  if (st.kind == coll::StepKind::RecvReduce) t += reduceUs(c, bytes);
  return t;
}

}  // namespace gdr::sim

#include "sim/message_policy.h"

#include "core/call.h"

namespace gdr::sim {

bool singleCopy(const Cluster& c, coll::CollKind kind, size_t bytes) {
  using coll::CollKind;
  size_t th = c.cmaThreshold;
  if (kind == CollKind::AllGather || kind == CollKind::AllToAll || kind == CollKind::AllToAllv ||
      kind == CollKind::ReduceScatter)
    th = c.cmaThresholdExchange;
  else if (kind == CollKind::Reduce)
    th = c.cmaThresholdReduce;
  else if (kind == CollKind::Broadcast && c.oversub() <= 1.0)
    th = c.cmaThresholdOwnCores;
  return bytes >= th;
}

bool sharedCopy(const Cluster& c, coll::CollKind kind) { return c.cmaShare && traitsOf(kind).sharedCopy; }

bool socketPair(const Cluster& c, bool sameHost) {
  return sameHost ? !c.device && c.hostTransport == "socket" : c.netTransport == "socket";
}

bool eager(const Cluster& c, coll::CollKind kind, size_t bytes, bool sameHost) {
  if (sameHost && !c.device && c.hostTransport == "shm") return !singleCopy(c, kind, bytes);
  if (socketPair(c, sameHost)) return bytes <= c.socketBufferBytes;
  return bytes <= static_cast<size_t>(c.slots) * c.slotBytes;
}

}  // namespace gdr::sim

#include "collectives/fused.h"

namespace gdr::coll {

FusedKind fusedAllReduceKind(int nranks, size_t bytes, size_t oneShotMax, size_t llMax) {
  if (bytes <= llMax) return FusedKind::LL;
  const size_t limit = oneShotMax ? oneShotMax : nranks <= 2 ? (16u << 20) - 1 : 256u << 10;
  return bytes <= limit ? FusedKind::OneShot : FusedKind::TwoShot;
}

FusedTraffic fusedTraffic(CollKind k, int nranks, size_t bytes, size_t oneShotMax) {
  FusedTraffic t;
  const double n = nranks, s = static_cast<double>(bytes), part = (n - 1) / n * s;
  switch (k) {
    case CollKind::AllReduce:
      t.kind = fusedAllReduceKind(nranks, bytes, oneShotMax);
      if (t.kind == FusedKind::OneShot) {
        // Every GPU's whole input goes to every peer; each reduces all of it.
        t.peerOut = t.peerIn = (n - 1) * s;
        t.reduced = (n - 1) * s;
      } else if (t.kind == FusedKind::LL) {
        // One-shot's traffic in packets of half data, half flags.
        t.peerOut = t.peerIn = 2 * (n - 1) * s;
        t.reduced = (n - 1) * s;
      } else {
        // Reduce-scatter then all-gather: 1/n each way per peer, twice.
        t.peerOut = t.peerIn = 2 * part;
        t.reduced = part;
        t.barriers = 2;
      }
      break;
    case CollKind::ReduceScatter:
      t.kind = FusedKind::ReduceScatter;
      t.peerOut = t.peerIn = part;
      t.reduced = part;
      break;
    case CollKind::Reduce:
      t.kind = FusedKind::Reduce;
      t.peerIn = (n - 1) * s;  // the root takes every other input
      t.reduced = (n - 1) * s;
      break;
    case CollKind::Broadcast:
      t.peerOut = (n - 1) * s;  // the root's copies
      break;
    case CollKind::AllGather:
    case CollKind::AllToAll:
    case CollKind::AllToAllv:
      t.peerOut = t.peerIn = part;
      break;
    case CollKind::Barrier:
      break;
  }
  return t;
}

}  // namespace gdr::coll

#include "paths/single_rank.h"

#include "core/datatype.h"

namespace gdr::paths {

SingleRankCopy singleRankCopy(const CollCall& call) {
  using coll::CollKind;
  SingleRankCopy c;
  const size_t eb = gdr::typeSize(call.type);
  if (call.inPlace) return c;
  switch (call.kind) {
    case CollKind::Barrier:
      return c;
    case CollKind::Broadcast:  // in place: nothing; gdrBroadcastFrom: sendbuf to recvbuf
      c.src = call.sendbuf;
      c.dst = call.recvbuf;
      c.bytes = call.count * eb;
      break;
    case CollKind::AllToAllv:
      c.src = static_cast<const char*>(call.sendbuf) + call.sendDispls[0] * eb;
      c.dst = static_cast<char*>(call.recvbuf) + call.recvDispls[0] * eb;
      c.bytes = call.recvCounts[0] * eb;
      break;
    default:  // all-reduce, reduce, reduce-scatter, all-gather, all-to-all: count elements
      c.src = call.sendbuf;
      c.dst = call.recvbuf;
      c.bytes = call.count * eb;
      break;
  }
  if (c.src == c.dst) c.bytes = 0;
  return c;
}

}  // namespace gdr::paths

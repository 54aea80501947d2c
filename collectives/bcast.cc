// Broadcast: the root's Input ends in every rank's Output. Ranks are
// renumbered so that the root is vrank 0 (schedule_common.h).
//
// Binomial tree: vrank v receives from v minus its lowest set bit and
// forwards to v + 2^k for each 2^k below that bit, largest subtree first.
// ceil(log2 n) rounds: ceil(log2 n)·(alpha + count·beta); chunking lets a
// rank forward chunk c while chunk c+1 is on its way in.
//
// Pipelined chain: vrank v receives each chunk from v-1 and forwards it to
// v+1. (n-1 + chunks-1)·(alpha + chunk·beta): for large messages close to
// count·beta, independent of n.
//
// The root sends from Input and copies Input to Output last (nothing to do
// in place). Only the root reads Input.
#include "collectives/algorithms.h"
#include "collectives/schedule_common.h"

namespace gdr::coll::detail {

Schedule binomialBroadcast(const CollArgs& a) {
  Schedule s;
  const int n = a.nranks, v = toVrank(a.rank, a.root, n);
  const std::vector<int> kids = binomialChildren(v, n);
  const Span whole{0, a.count};
  for (size_t c = 0; c < numChunks(a.count, a.chunkElems); ++c) {
    const int ci = static_cast<int>(c);
    const Span ch = chunkOf(whole, a.chunkElems, c);
    Region src = in(ch);
    if (v != 0) {
      addRecv(s, fromVrank(binomialParent(v), a.root, n), out(ch), ci);
      src = out(ch);
    }
    for (auto it = kids.rbegin(); it != kids.rend(); ++it)
      addSend(s, fromVrank(*it, a.root, n), src, ci);
  }
  if (v == 0) copyInputToOutput(s, a, whole);
  return s;
}

Schedule chainBroadcast(const CollArgs& a) {
  Schedule s;
  const int n = a.nranks, v = toVrank(a.rank, a.root, n);
  const Span whole{0, a.count};
  for (size_t c = 0; c < numChunks(a.count, a.chunkElems); ++c) {
    const int ci = static_cast<int>(c);
    const Span ch = chunkOf(whole, a.chunkElems, c);
    if (v != 0) addRecv(s, fromVrank(v - 1, a.root, n), out(ch), ci);
    if (v + 1 < n) addSend(s, fromVrank(v + 1, a.root, n), v == 0 ? in(ch) : out(ch), ci);
  }
  if (v == 0) copyInputToOutput(s, a, whole);
  return s;
}

}  // namespace gdr::coll::detail

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
// Direct (flat): the root sends each chunk to every other rank in vrank
// order, and every other rank receives it from the root. One hop: for tiny
// messages on a few ranks the root's n-1 sends cost less than the tree's
// ceil(log2 n) latencies, and no rank waits for another to forward (with
// more ranks than cores, a forwarder that is not running stalls its whole
// subtree).
//
// The root sends from Input and copies Input to Output last (nothing to do
// in place). Only the root reads Input.
#include <algorithm>

#include "collectives/algorithms.h"
#include "collectives/schedule_common.h"

namespace gdr::coll::detail {
namespace {

// Every chunk: received from `parent` (a vrank; none for the root) into
// Output, then sent on to `kids` (vranks, in order).
Schedule alongTree(const CollArgs& a, int parent, const std::vector<int>& kids) {
  Schedule s;
  const int n = a.nranks;
  const Span whole{0, a.count};
  for (size_t c = 0; c < numChunks(a.count, a.chunkElems); ++c) {
    const int ci = static_cast<int>(c);
    const Span ch = chunkOf(whole, a.chunkElems, c);
    Region src = in(ch);
    if (parent >= 0) {
      addRecv(s, fromVrank(parent, a.root, n), out(ch), ci);
      src = out(ch);
    }
    for (int kid : kids) addSend(s, fromVrank(kid, a.root, n), src, ci);
  }
  if (parent < 0) copyInputToOutput(s, a, whole);
  return s;
}

}  // namespace

Schedule binomialBroadcast(const CollArgs& a) {
  const int v = toVrank(a.rank, a.root, a.nranks);
  std::vector<int> kids = binomialChildren(v, a.nranks);
  std::reverse(kids.begin(), kids.end());  // largest subtree first
  return alongTree(a, v == 0 ? -1 : binomialParent(v), kids);
}

Schedule chainBroadcast(const CollArgs& a) {
  const int v = toVrank(a.rank, a.root, a.nranks);
  std::vector<int> kids;
  if (v + 1 < a.nranks) kids.push_back(v + 1);
  return alongTree(a, v - 1, kids);
}

Schedule directBroadcast(const CollArgs& a) {
  const int v = toVrank(a.rank, a.root, a.nranks);
  std::vector<int> kids;
  if (v == 0)
    for (int u = 1; u < a.nranks; ++u) kids.push_back(u);
  return alongTree(a, v == 0 ? -1 : 0, kids);
}

}  // namespace gdr::coll::detail

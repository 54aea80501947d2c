// Reduce: the reduction of every rank's Input ends in the root's Output.
// Ranks are renumbered so that the root is vrank 0. Non-roots have no
// Output: a rank that reduces before forwarding accumulates in Scratch
// (count elements); a leaf forwards its Input as is.
//
// Binomial tree: the broadcast tree run backwards. vrank v receive-reduces
// from its children v + 2^k (smallest subtree first, as those finish first),
// then sends the partial result to its parent.
// ceil(log2 n)·(alpha + count·beta + count·gamma).
//
// Pipelined chain: vrank n-1 sends each chunk to n-2, which reduces it with
// its own and passes it on, down to the root.
// (n-1 + chunks-1)·(alpha + chunk·(beta + gamma)).
//
// Direct (flat): every other rank sends its Input to the root, which
// receive-reduces them in vrank order. One hop, as for the direct broadcast
// (bcast.cc): for tiny messages on a few ranks.
//
// In place on the root: its first reduction reads Input and writes Output,
// the same memory at the same index.
#include "collectives/algorithms.h"
#include "collectives/schedule_common.h"

namespace gdr::coll::detail {
namespace {

// The steps of one chunk: reduce what `from` ranks send into the
// accumulator, then pass the result to `to` (-1: this is the root).
void reduceChunk(Schedule& s, const CollArgs& a, Span ch, int ci, const std::vector<int>& from,
                 int to) {
  const BufId acc = to < 0 ? BufId::Output : BufId::Scratch;
  Region src = in(ch);
  for (int peer : from) {
    addRecvReduce(s, peer, src, at(acc, ch), ci);
    src = at(acc, ch);
  }
  if (to >= 0)
    addSend(s, to, src, ci);
  else if (from.empty() && !a.inPlace)
    addCopy(s, src, out(ch), ci);
}

Schedule reduceAlong(const CollArgs& a, const std::vector<int>& from, int to) {
  Schedule s;
  if (to >= 0 && !from.empty()) s.scratchElems = a.count;
  const Span whole{0, a.count};
  for (size_t c = 0; c < numChunks(a.count, a.chunkElems); ++c)
    reduceChunk(s, a, chunkOf(whole, a.chunkElems, c), static_cast<int>(c), from, to);
  return s;
}

}  // namespace

Schedule binomialReduce(const CollArgs& a) {
  const int n = a.nranks, v = toVrank(a.rank, a.root, n);
  std::vector<int> from;
  for (int kid : binomialChildren(v, n)) from.push_back(fromVrank(kid, a.root, n));
  const int to = v == 0 ? -1 : fromVrank(binomialParent(v), a.root, n);
  return reduceAlong(a, from, to);
}

Schedule chainReduce(const CollArgs& a) {
  const int n = a.nranks, v = toVrank(a.rank, a.root, n);
  std::vector<int> from;
  if (v + 1 < n) from.push_back(fromVrank(v + 1, a.root, n));
  const int to = v == 0 ? -1 : fromVrank(v - 1, a.root, n);
  return reduceAlong(a, from, to);
}

Schedule directReduce(const CollArgs& a) {
  const int n = a.nranks, v = toVrank(a.rank, a.root, n);
  std::vector<int> from;
  if (v == 0)
    for (int u = 1; u < n; ++u) from.push_back(fromVrank(u, a.root, n));
  return reduceAlong(a, from, v == 0 ? -1 : a.root);
}

}  // namespace gdr::coll::detail

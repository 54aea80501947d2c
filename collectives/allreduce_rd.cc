// Recursive-doubling all-reduce, for small messages: in step j ranks at
// distance 2^j swap their whole (partially reduced) buffer and each reduces
// the other's into its own, so after log2(n) steps every rank holds the full
// reduction. log2(n)·(alpha + count·beta + count·gamma): the fewest rounds,
// but every round carries the whole buffer.
//
// Other rank counts fold in (schedule_common.h): even rank 2v (v < rem)
// sends its Input to rank 2v+1, which reduces it into Output and plays
// virtual rank v; the result goes back to rank 2v at the end (+2 steps).
//
// Both partners compute op(mine, theirs) with a commutative op, so all ranks
// end with identical bits. In place is safe: each Send reads by value before
// the RecvReduce that overwrites the same elements.
#include "collectives/algorithms.h"
#include "collectives/halving_doubling.h"

namespace gdr::coll::detail {

Schedule recursiveDoublingAllReduce(const CollArgs& a) {
  Schedule s;
  const int n = a.nranks, r = a.rank;
  const Span whole{0, a.count};
  if (trivialAllReduce(s, a)) return s;
  const Fold f = foldIn(r, n);
  BufId cur;
  if (!foldInReduction(s, a, f, whole, whole, BufId::Output, &cur)) return s;
  for (int dist = 1; dist < f.pof2; dist *= 2) {
    const int partner = foldRealRank(f.vrank ^ dist, f);
    for (size_t c = 0; c < numChunks(a.count, a.chunkElems); ++c) {
      const Span ch = chunkOf(whole, a.chunkElems, c);
      addSend(s, partner, at(cur, ch), static_cast<int>(c));
      addRecvReduce(s, partner, at(cur, ch), out(ch), static_cast<int>(c));
    }
    cur = BufId::Output;
  }
  if (r < 2 * f.rem) sendSpan(s, r - 1, BufId::Output, whole, a.chunkElems);
  return s;
}

}  // namespace gdr::coll::detail

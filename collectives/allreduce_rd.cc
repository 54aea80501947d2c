// Recursive-doubling all-reduce, for small messages: in step j ranks at
// distance 2^j swap their whole (partially reduced) buffer and each reduces
// the other's into its own, so after log2(n) steps every rank holds the full
// reduction. log2(n)·(alpha + count·beta + count·gamma): the fewest rounds,
// but every round carries the whole buffer.
//
// Other rank counts fold in (schedule_common.h): even rank 2v (v < rem)
// sends its Input to rank 2v+1, which reduces it in and plays virtual rank
// v; the result goes back to rank 2v at the end (+2 steps).
//
// Ping-pong: a step never reduces into the memory its own send is reading
// (both partners would then wait for their send to be taken before posting
// the receive that takes the other's: a deadlock under a rendezvous
// transport). Steps alternate between Output and Scratch, planned so that
// the last lands in Output; in place with an odd step count that is
// impossible and a final local Copy fixes it.
//
// Both partners compute op(mine, theirs) with a commutative op, so all ranks
// end with identical bits.
#include "collectives/algorithms.h"
#include "collectives/halving_doubling.h"

namespace gdr::coll::detail {

Schedule recursiveDoublingAllReduce(const CollArgs& a) {
  Schedule s;
  if (trivialAllReduce(s, a)) return s;
  const int r = a.rank;
  const Span whole{0, a.count};
  const Fold f = foldIn(r, a.nranks);
  int steps = 0;
  while ((1 << steps) < f.pof2) ++steps;
  // Step j's planned destination: Output for the last step, alternating back.
  auto planned = [&](int j) { return (steps - 1 - j) % 2 == 0 ? BufId::Output : BufId::Scratch; };
  auto other = [](BufId b) { return b == BufId::Output ? BufId::Scratch : BufId::Output; };
  auto memoryOf = [&](BufId b) { return b == BufId::Input && a.inPlace ? BufId::Output : b; };
  BufId cur;
  if (!foldInReduction(s, a, f, whole, whole, other(planned(0)), &cur)) return s;
  bool usesScratch = cur == BufId::Scratch;
  for (int j = 0; j < steps; ++j) {
    const int partner = foldRealRank(f.vrank ^ (1 << j), f);
    BufId dst = planned(j);
    if (dst == memoryOf(cur)) dst = other(dst);
    usesScratch = usesScratch || dst == BufId::Scratch;
    for (size_t c = 0; c < numChunks(a.count, a.chunkElems); ++c) {
      const Span ch = chunkOf(whole, a.chunkElems, c);
      addSend(s, partner, at(cur, ch), static_cast<int>(c));
      addRecvReduce(s, partner, at(cur, ch), at(dst, ch), static_cast<int>(c));
    }
    cur = dst;
  }
  if (r < 2 * f.rem) sendSpan(s, r - 1, cur, whole, a.chunkElems);
  if (cur != BufId::Output) addCopy(s, at(cur, whole), out(whole), 0);
  if (usesScratch) s.scratchElems = a.count;
  return s;
}

}  // namespace gdr::coll::detail

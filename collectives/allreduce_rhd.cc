// Recursive halving/doubling all-reduce (Rabenseifner), for medium messages:
// a reduce-scatter by recursive halving, then an all-gather by recursive
// doubling (halving_doubling.h), over pof2 balanced blocks of the count, one
// per virtual rank. 2·log2(n)·alpha + 2(n-1)/n·count·beta +
// (n-1)/n·count·gamma for a power of two: ring's bandwidth with log rounds.
//
// Other rank counts fold in: even rank 2v (v < rem) sends its Input to rank
// 2v+1, which reduces it into Output and plays virtual rank v, and sends the
// result back at the end (+2 whole-buffer steps).
//
// The first halving step sends from Input and reduces Input with the
// incoming half into Output; later steps work in Output. In place, the half
// sent first is overwritten only by the doubling phase.
#include "collectives/algorithms.h"
#include "collectives/halving_doubling.h"

namespace gdr::coll::detail {

Schedule rabenseifnerAllReduce(const CollArgs& a) {
  Schedule s;
  const int n = a.nranks, r = a.rank;
  const Span whole{0, a.count};
  if (trivialAllReduce(s, a)) return s;
  HalvingPlan p;
  p.fold = foldIn(r, n);
  p.chunkElems = a.chunkElems;
  BufId source;
  if (!foldInReduction(s, a, p.fold, whole, whole, BufId::Output, &source)) return s;
  for (int v = 0; v < p.fold.pof2; ++v)
    p.start.push_back(balancedBlock(a.count, p.fold.pof2, v).offset);
  p.start.push_back(a.count);
  recursiveHalving(s, p, source, BufId::Output);
  recursiveDoubling(s, p, BufId::Output);
  if (r < 2 * p.fold.rem) sendSpan(s, r - 1, BufId::Output, whole, a.chunkElems);
  return s;
}

}  // namespace gdr::coll::detail

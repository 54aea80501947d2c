// Reduce-scatter: Input holds nranks blocks of count elements; rank r ends
// with the reduction of every rank's block r in Output (count elements).
//
// Ring: one reduce-scatter pass (ring.h). At step k rank r sends block
// r-1-k and receives block r-2-k, reducing it with its Input's block. Partial
// sums live in two Scratch slots of count elements used alternately (step k
// receives into slot k%2 while step k+1 sends from it), and the last step
// reduces straight into Output. (n-1)·alpha + (n-1)·count·beta.
//
// Recursive halving: pairs at distance n/2, n/4, ..., 1 split their common
// range, send the half the partner keeps and reduce the half they keep
// (halving_doubling.h), in a Scratch copy of the whole Input. log2(n)·alpha +
// (n-1)·count·beta for a power of two. Other counts fold in: even rank 2v
// (v < rem) hands its whole Input to rank 2v+1, which reduces it in, carries
// both ranks' blocks through the halving and hands block 2v back at the end.
#include "collectives/algorithms.h"
#include "collectives/halving_doubling.h"
#include "collectives/ring.h"

namespace gdr::coll::detail {

Schedule ringReduceScatter(const CollArgs& a) {
  Schedule s;
  const int n = a.nranks, r = a.rank;
  const size_t cnt = a.count;
  if (cnt == 0) return s;
  if (n == 1) {
    addCopy(s, in(Span{0, cnt}), out(Span{0, cnt}), 0);
    return s;
  }
  std::vector<Span> blocks(n);
  for (int i = 0; i < n; ++i) blocks[i] = Span{static_cast<size_t>(i) * cnt, cnt};
  s.scratchElems = static_cast<size_t>(std::min(n - 2, 2)) * cnt;
  // Where step k's received partial sum lives (offset within the block).
  auto partial = [&](int k, Span ch) -> Region {
    const size_t rel = ch.offset % cnt;
    if (k == n - 2) return out(Span{rel, ch.count});
    return scratch(Span{static_cast<size_t>(k % 2) * cnt + rel, ch.count});
  };
  const int next = ringNext(r, n), prev = ringPrev(r, n);
  for (size_t c = 0; c < numChunks(cnt, a.chunkElems); ++c) {
    const int ci = static_cast<int>(c);
    ringPass(
        a, blocks, 1, c,
        [&](int k, int, Span ch) { addSend(s, next, k == 0 ? in(ch) : partial(k - 1, ch), ci); },
        [&](int k, int, Span ch) { addRecvReduce(s, prev, in(ch), partial(k, ch), ci); });
  }
  return s;
}

Schedule recursiveHalvingReduceScatter(const CollArgs& a) {
  Schedule s;
  const int n = a.nranks, r = a.rank;
  const size_t cnt = a.count;
  if (cnt == 0) return s;
  HalvingPlan p;
  p.fold = foldIn(r, n);
  p.chunkElems = a.chunkElems;
  const Span all{0, static_cast<size_t>(n) * cnt};
  auto block = [&](int i) { return Span{static_cast<size_t>(i) * cnt, cnt}; };
  if (n == 1) {
    addCopy(s, in(all), out(all), 0);
    return s;
  }
  BufId source;
  if (!foldInReduction(s, a, p.fold, all, Span{0, cnt}, BufId::Scratch, &source)) return s;
  s.scratchElems = all.count;
  for (int v = 0; v <= p.fold.pof2; ++v)
    p.start.push_back(static_cast<size_t>(foldFirstReal(v, p.fold)) * cnt);
  const bool carrier = r < 2 * p.fold.rem;
  recursiveHalving(s, p, source, BufId::Scratch);
  if (carrier) sendSpan(s, r - 1, BufId::Scratch, block(r - 1), a.chunkElems);
  addCopy(s, scratch(block(r)), out(Span{0, cnt}), 0);
  return s;
}

}  // namespace gdr::coll::detail

// All-gather: rank r's count elements land in block r of every rank's Output
// (nranks * count elements).
//
// Ring: rank r copies its Input into Output block r, then runs one
// all-gather pass (ring.h): at step k it forwards block r-k to its next
// neighbour and receives block r-1-k from its previous one. (n-1)·alpha +
// (n-1)·count·beta; chunked blocks pipeline round the ring.
//
// Recursive doubling: rank pairs at distance 1, 2, 4, ... swap everything
// they hold, doubling it each step (halving_doubling.h): log2(n)·alpha +
// (n-1)·count·beta for a power of two. Other counts fold in: even rank 2v
// (v < rem) first hands its block to rank 2v+1, which carries both through
// the doubling, and gets the whole Output back at the end (+2 steps).
#include "collectives/algorithms.h"
#include "collectives/halving_doubling.h"
#include "collectives/ring.h"

namespace gdr::coll::detail {
namespace {

Span blockOfRank(const CollArgs& a, int r) {
  return Span{static_cast<size_t>(r) * a.count, a.count};
}

}  // namespace

Schedule ringAllGather(const CollArgs& a) {
  Schedule s;
  const int n = a.nranks, r = a.rank;
  if (a.count == 0) return s;
  addCopy(s, in(Span{0, a.count}), out(blockOfRank(a, r)), 0);
  std::vector<Span> blocks(n);
  for (int i = 0; i < n; ++i) blocks[i] = blockOfRank(a, i);
  const int next = ringNext(r, n), prev = ringPrev(r, n);
  const size_t chunks = numChunks(a.count, a.chunkElems);
  for (size_t c = 0; c < chunks; ++c) {
    const int ci = static_cast<int>(c);
    ringPass(
        a, blocks, 0, c,
        [&](int k, int, Span ch) {
          // Step 0 reads Input so that it does not wait on the local copy.
          const Region src = k == 0 ? in(Span{ch.offset - blocks[r].offset, ch.count}) : out(ch);
          addSend(s, next, src, ci);
        },
        [&](int, int, Span ch) { addRecv(s, prev, out(ch), ci); });
  }
  return s;
}

Schedule recursiveDoublingAllGather(const CollArgs& a) {
  Schedule s;
  const int n = a.nranks, r = a.rank;
  if (a.count == 0) return s;
  HalvingPlan p;
  p.fold = foldIn(r, n);
  p.chunkElems = a.chunkElems;
  const Span mine{0, a.count};
  const Span all{0, static_cast<size_t>(n) * a.count};
  if (p.fold.vrank < 0) {  // folded out: hand over, get everything back
    sendSpan(s, r + 1, BufId::Input, mine, a.chunkElems);
    recvSpan(s, r + 1, BufId::Output, all, a.chunkElems);
    return s;
  }
  for (int v = 0; v <= p.fold.pof2; ++v)
    p.start.push_back(static_cast<size_t>(foldFirstReal(v, p.fold)) * a.count);
  const bool carrier = r < 2 * p.fold.rem;  // also carries rank r-1's block
  if (carrier) recvSpan(s, r - 1, BufId::Output, blockOfRank(a, r - 1), a.chunkElems);
  addCopy(s, in(mine), out(blockOfRank(a, r)), 0);
  recursiveDoubling(s, p, BufId::Output);
  if (carrier) sendSpan(s, r - 1, BufId::Output, all, a.chunkElems);
  return s;
}

}  // namespace gdr::coll::detail

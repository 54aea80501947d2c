// Ring all-reduce: a reduce-scatter pass then an all-gather pass round the
// ring (see ring.h), the bandwidth-optimal all-reduce.
//
// The count is cut into nranks balanced blocks (the first count % nranks one
// element longer; with count < nranks some are empty and carry no message).
// Reduce-scatter: at step k rank r sends block r-1-k and receives block r-2-k,
// reducing it into Output with its own Input (Output = Input + incoming), so
// after nranks-1 steps Output's block r holds the full sum. All-gather: rank
// r passes the finished blocks on; each arrives straight into Output.
//
// Cost: 2(n-1) steps of one block each: 2(n-1)·alpha + 2(n-1)/n·count·beta
// (+ (n-1)/n·count·gamma for the reductions), times the chunks per block in
// alpha when pipelined.
//
// In place: the first step sends Input's block r-1, which Output overwrites
// only in the all-gather pass; every reduction reads and writes one index.
#include "collectives/algorithms.h"
#include "collectives/ring.h"

namespace gdr::coll::detail {

Schedule ringAllReduce(const CollArgs& a) {
  Schedule s;
  const int n = a.nranks;
  if (trivialAllReduce(s, a)) return s;
  const std::vector<Span> blocks = ringBlocks(a.count, n);
  const int next = ringNext(a.rank, n), prev = ringPrev(a.rank, n);
  const size_t chunks = maxChunks(blocks, a.chunkElems);
  for (size_t c = 0; c < chunks; ++c) {
    const int ci = static_cast<int>(c);
    ringPass(
        a, blocks, 1, c,
        [&](int k, int, Span ch) { addSend(s, next, k == 0 ? in(ch) : out(ch), ci); },
        [&](int, int, Span ch) { addRecvReduce(s, prev, in(ch), out(ch), ci); });
    ringPass(
        a, blocks, 0, c, [&](int, int, Span ch) { addSend(s, next, out(ch), ci); },
        [&](int, int, Span ch) { addRecv(s, prev, out(ch), ci); });
  }
  return s;
}

}  // namespace gdr::coll::detail

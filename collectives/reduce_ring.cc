// Ring reduce: a ring reduce-scatter pass (ring.h, shift 1), then every rank
// sends the block it finished to the root. Each rank reduces 1/n of the
// data instead of the root (or the tree's inner ranks) reducing all of it,
// so for large messages it is the bandwidth- and compute-balanced reduce
// (Rabenseifner's reduce with a ring instead of halving).
//
// Work buffer: the root accumulates in Output (its blocks land where they
// belong); a non-root accumulates in Scratch (count elements) and sends its
// block from there. Step k of the pass sends Input's block at k = 0 and the
// work buffer's afterwards; the receive-reduce reads Input and writes the
// work buffer at one index, so Input and Output may alias on the root.
//
// Cost: (n-1)·(alpha + count/n·(beta + gamma)) for the pass, then the root
// receives n-1 blocks: about 2(n-1)/n·count·beta on the root's link, against
// ceil(log2 n)·count·(beta + gamma) for the binomial tree.
#include "collectives/algorithms.h"
#include "collectives/ring.h"

namespace gdr::coll::detail {

Schedule ringReduce(const CollArgs& a) {
  Schedule s;
  const int n = a.nranks;
  const bool root = a.rank == a.root;
  const Span whole{0, a.count};
  if (n == 1) {
    if (!a.inPlace && a.count) addCopy(s, in(whole), out(whole), 0);
    return s;
  }
  const BufId work = root ? BufId::Output : BufId::Scratch;
  if (!root) s.scratchElems = a.count;
  const std::vector<Span> blocks = ringBlocks(a.count, n);
  const int next = ringNext(a.rank, n), prev = ringPrev(a.rank, n);
  const size_t chunks = maxChunks(blocks, a.chunkElems);
  for (size_t c = 0; c < chunks; ++c) {
    const int ci = static_cast<int>(c);
    ringPass(
        a, blocks, 1, c, [&](int k, int, Span ch) { addSend(s, next, k == 0 ? in(ch) : at(work, ch), ci); },
        [&](int, int, Span ch) { addRecvReduce(s, prev, in(ch), at(work, ch), ci); });
    // Gather: block r (finished on rank r) goes to the root.
    if (!root) {
      if (c < numChunks(blocks[a.rank].count, a.chunkElems))
        addSend(s, a.root, at(work, chunkOf(blocks[a.rank], a.chunkElems, c)), ci);
    } else {
      for (int r = 0; r < n; ++r)
        if (r != a.rank && c < numChunks(blocks[r].count, a.chunkElems))
          addRecv(s, r, out(chunkOf(blocks[r], a.chunkElems, c)), ci);
    }
  }
  return s;
}

}  // namespace gdr::coll::detail

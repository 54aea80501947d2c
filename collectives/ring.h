// The ring pass shared by ring all-reduce, all-gather and reduce-scatter.
//
// The buffer is cut into nranks blocks. In a pass of nranks-1 steps, at step k
// rank r sends block (r - shift - k) to its next neighbour and receives block
// (r - shift - 1 - k) from its previous one, so each block travels once round
// the ring. A reduce-scatter pass uses shift 1 (rank r ends owning block r
// fully reduced); an all-gather pass uses shift 0 (rank r starts owning block
// r). The caller says what to send from and where to receive into.
//
// Pipelining: each block is cut into chunks of at most chunkElems elements
// and the caller loops chunk-major (chunk c's whole pass, then chunk c+1's),
// so chunk c+1 follows chunk c round the ring one step behind. Blocks may
// differ in size (uneven counts): a block with fewer chunks, or none, is
// skipped for the missing chunk indices by sender and receiver alike.
#pragma once

#include <algorithm>
#include <vector>

#include "collectives/schedule_common.h"

namespace gdr::coll::detail {

inline int ringBlock(int rank, int shift, int k, int nranks) {
  return ((rank - shift - k) % nranks + 2 * nranks) % nranks;
}

// The count cut into nranks balanced blocks, as every ring pass uses it.
inline std::vector<Span> ringBlocks(size_t count, int nranks) {
  std::vector<Span> blocks(nranks);
  for (int i = 0; i < nranks; ++i) blocks[i] = balancedBlock(count, nranks, i);
  return blocks;
}

inline size_t maxChunks(const std::vector<Span>& blocks, size_t chunkElems) {
  size_t m = 0;
  for (const Span& b : blocks) m = std::max(m, numChunks(b.count, chunkElems));
  return m;
}

// One pass for chunk index c. sendFn(k, block, chunk) and recvFn(k, block,
// chunk) append the step (chunk is the absolute element span).
template <class SendFn, class RecvFn>
void ringPass(const CollArgs& a, const std::vector<Span>& blocks, int shift, size_t c,
              SendFn sendFn, RecvFn recvFn) {
  const int n = a.nranks;
  for (int k = 0; k + 1 < n; ++k) {
    const int sb = ringBlock(a.rank, shift, k, n), rb = ringBlock(a.rank, shift + 1, k, n);
    if (c < numChunks(blocks[sb].count, a.chunkElems))
      sendFn(k, sb, chunkOf(blocks[sb], a.chunkElems, c));
    if (c < numChunks(blocks[rb].count, a.chunkElems))
      recvFn(k, rb, chunkOf(blocks[rb], a.chunkElems, c));
  }
}

}  // namespace gdr::coll::detail

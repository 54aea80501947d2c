// All-to-all(v) by pairwise exchange: in step k = 1..n-1 rank r sends its
// block for rank r+k and receives rank r-k's block for it (mod n), so every
// step is a permutation and no rank is hit by two senders at once. The
// rank's own block is a local Copy, done first. (n-1)·alpha + (n-1)/n of the
// data in beta. All-to-allv takes the blocks from the per-peer counts and
// displacements; an empty block sends nothing (both sides see a zero count).
// Messages are chunked, sends and receives alternating chunk by chunk.
//
// Direct all-to-all, for small blocks: every send is posted first, then the
// receives are taken in turn, so all n-1 messages are in flight at once and
// the whole exchange costs about one alpha instead of n-1 (a step that waits
// on a receive no longer holds back the sends after it). Large blocks stay
// pairwise: n-1 messages in flight at once would contend for the links.
// Both forms send the same chunks between any two ranks in the same order,
// so ranks may choose differently: for all-to-allv each rank judges by its
// own blocks.
#include <algorithm>
#include <functional>

#include "collectives/algorithms.h"
#include "collectives/schedule_common.h"

namespace gdr::coll::detail {
namespace {

// Pairwise: step k's sends and receives alternate chunk by chunk. Direct
// (sendsFirst): every step's sends, then every step's receives.
Schedule exchange(const CollArgs& a, const std::function<Span(int)>& sendBlock,
                  const std::function<Span(int)>& recvBlock, bool sendsFirst) {
  Schedule s;
  const int n = a.nranks, r = a.rank;
  const Span own = sendBlock(r);
  if (own.count > 0) addCopy(s, in(own), out(recvBlock(r)), 0);
  auto recvChunk = [&](int from, const Span& rb, size_t c) {
    addRecv(s, from, out(chunkOf(rb, a.chunkElems, c)), static_cast<int>(c));
  };
  for (int k = 1; k < n; ++k) {
    const int to = (r + k) % n, from = (r - k + n) % n;
    const Span sb = sendBlock(to), rb = recvBlock(from);
    const size_t ns = numChunks(sb.count, a.chunkElems);
    const size_t nr = sendsFirst ? 0 : numChunks(rb.count, a.chunkElems);
    for (size_t c = 0; c < std::max(ns, nr); ++c) {
      if (c < ns) addSend(s, to, in(chunkOf(sb, a.chunkElems, c)), static_cast<int>(c));
      if (c < nr) recvChunk(from, rb, c);
    }
  }
  if (sendsFirst) {
    for (int k = 1; k < n; ++k) {
      const int from = (r - k + n) % n;
      const Span rb = recvBlock(from);
      for (size_t c = 0; c < numChunks(rb.count, a.chunkElems); ++c) recvChunk(from, rb, c);
    }
  }
  return s;
}

Span vSend(const CollArgs& a, int i) { return Span{a.sendDispls[i], a.sendCounts[i]}; }
Span vRecv(const CollArgs& a, int i) { return Span{a.recvDispls[i], a.recvCounts[i]}; }

}  // namespace

Schedule pairwiseAllToAll(const CollArgs& a) {
  auto block = [&](int i) { return Span{static_cast<size_t>(i) * a.count, a.count}; };
  return exchange(a, block, block, false);
}

Schedule pairwiseAllToAllv(const CollArgs& a) {
  return exchange(
      a, [&](int i) { return vSend(a, i); }, [&](int i) { return vRecv(a, i); }, false);
}

Schedule directAllToAll(const CollArgs& a) {
  auto block = [&](int i) { return Span{static_cast<size_t>(i) * a.count, a.count}; };
  return exchange(a, block, block, true);
}

Schedule directAllToAllv(const CollArgs& a) {
  return exchange(
      a, [&](int i) { return vSend(a, i); }, [&](int i) { return vRecv(a, i); }, true);
}

}  // namespace gdr::coll::detail

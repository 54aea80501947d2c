#include "collectives/halving_doubling.h"

#include <algorithm>

namespace gdr::coll::detail {
namespace {

Span rangeOf(const HalvingPlan& p, int lo, int hi) {
  return Span{p.start[lo], p.start[hi] - p.start[lo]};
}

// One exchange with `peer`: send `out` from `src`, take in `inSpan`. With
// reduceSrc set, the incoming data is reduced with reduceSrc into dst.
void exchange(Schedule& s, int peer, size_t chunkElems, BufId src, Span outSpan, Span inSpan,
              bool reduce, BufId reduceSrc, BufId dst) {
  const size_t ns = numChunks(outSpan.count, chunkElems), nr = numChunks(inSpan.count, chunkElems);
  for (size_t c = 0; c < std::max(ns, nr); ++c) {
    const int ci = static_cast<int>(c);
    if (c < ns) addSend(s, peer, at(src, chunkOf(outSpan, chunkElems, c)), ci);
    if (c >= nr) continue;
    const Span ch = chunkOf(inSpan, chunkElems, c);
    if (reduce)
      addRecvReduce(s, peer, at(reduceSrc, ch), at(dst, ch), ci);
    else
      addRecv(s, peer, at(dst, ch), ci);
  }
}

}  // namespace

void recursiveHalving(Schedule& s, const HalvingPlan& p, BufId source, BufId work) {
  const int v = p.fold.vrank;
  int lo = 0, hi = p.fold.pof2;
  BufId cur = source;
  for (int dist = p.fold.pof2 / 2; dist >= 1; dist /= 2) {
    const int partner = v ^ dist, mid = lo + dist;
    const bool lower = v < mid;
    const Span keep = lower ? rangeOf(p, lo, mid) : rangeOf(p, mid, hi);
    const Span give = lower ? rangeOf(p, mid, hi) : rangeOf(p, lo, mid);
    exchange(s, foldRealRank(partner, p.fold), p.chunkElems, cur, give, keep, true, cur, work);
    cur = work;
    if (lower)
      hi = mid;
    else
      lo = mid;
  }
}

void recursiveDoubling(Schedule& s, const HalvingPlan& p, BufId work) {
  const int v = p.fold.vrank;
  int lo = v, hi = v + 1;
  for (int dist = 1; dist < p.fold.pof2; dist *= 2) {
    const int partner = v ^ dist;
    const int plo = lo ^ dist, phi = plo + (hi - lo);  // the partner's range
    exchange(s, foldRealRank(partner, p.fold), p.chunkElems, work, rangeOf(p, lo, hi),
             rangeOf(p, plo, phi), false, work, work);
    lo = std::min(lo, plo);
    hi = std::max(hi, phi);
  }
}

bool foldInReduction(Schedule& s, const CollArgs& a, const Fold& f, Span given, Span back,
                     BufId work, BufId* source) {
  if (f.vrank < 0) {
    sendSpan(s, a.rank + 1, BufId::Input, given, a.chunkElems);
    recvSpan(s, a.rank + 1, BufId::Output, back, a.chunkElems);
    return false;
  }
  *source = BufId::Input;
  if (a.rank < 2 * f.rem) {
    recvReduceSpan(s, a.rank - 1, BufId::Input, work, given, a.chunkElems);
    *source = work;
  }
  return true;
}

void sendSpan(Schedule& s, int peer, BufId buf, Span span, size_t chunkElems) {
  for (size_t c = 0; c < numChunks(span.count, chunkElems); ++c)
    addSend(s, peer, at(buf, chunkOf(span, chunkElems, c)), static_cast<int>(c));
}

void recvSpan(Schedule& s, int peer, BufId buf, Span span, size_t chunkElems) {
  for (size_t c = 0; c < numChunks(span.count, chunkElems); ++c)
    addRecv(s, peer, at(buf, chunkOf(span, chunkElems, c)), static_cast<int>(c));
}

void recvReduceSpan(Schedule& s, int peer, BufId src, BufId dst, Span span, size_t chunkElems) {
  for (size_t c = 0; c < numChunks(span.count, chunkElems); ++c) {
    const Span ch = chunkOf(span, chunkElems, c);
    addRecvReduce(s, peer, at(src, ch), at(dst, ch), static_cast<int>(c));
  }
}

}  // namespace gdr::coll::detail

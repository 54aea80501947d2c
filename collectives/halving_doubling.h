// Recursive halving (a reduce-scatter) and recursive doubling (an all-gather)
// over the pof2 virtual ranks of a fold-in (schedule_common.h), shared by
// Rabenseifner all-reduce, recursive-halving reduce-scatter and
// recursive-doubling all-gather.
//
// Virtual rank v owns the element range [start[v], start[v+1]) of a working
// buffer (start has pof2 + 1 entries). Halving: with distance pof2/2, then
// pof2/4, ..., 1, v and its partner v ^ distance split their common range in
// two; each sends the half the partner keeps and reduces the half it keeps,
// so after log2(pof2) steps v's range is fully reduced. Doubling runs the
// steps backwards: v and its partner swap what they own, doubling it each
// step, so all ranges end up everywhere.
//
// Messages are chunked (at most chunkElems elements); a step's sends and
// receives alternate chunk by chunk, and empty ranges send nothing.
#pragma once

#include <vector>

#include "collectives/schedule_common.h"

namespace gdr::coll::detail {

struct HalvingPlan {
  Fold fold;                  // this rank's virtual rank and the fold's shape
  std::vector<size_t> start;  // pof2 + 1 range starts, in elements
  size_t chunkElems = 0;
};

// Recursive halving for fold.vrank >= 0. The first step reduces from
// `source` (Input, or `work` when the fold already reduced into it); the rest
// read `work`. Results land in `work`.
void recursiveHalving(Schedule& s, const HalvingPlan& p, BufId source, BufId work);
// Recursive doubling for fold.vrank >= 0 over `work`: v's range must already
// hold its data.
void recursiveDoubling(Schedule& s, const HalvingPlan& p, BufId work);
// The fold-in's hand-over for a reduction. A rank that sits out gets its
// whole schedule here (send `given` of its Input to rank+1, receive `back`
// into Output from it) and the call returns false. Otherwise *source says
// where the rank's data is now: in `work` for a carrier (rank 2v+1, v < rem),
// which has reduced rank 2v's Input with its own into it; in Input for the
// rest.
bool foldInReduction(Schedule& s, const CollArgs& a, const Fold& f, Span given, Span back,
                     BufId work, BufId* source);
// Chunked send / receive / receive-reduce of a whole span to or from one peer
// (the fold-in's hand-over and hand-back).
void sendSpan(Schedule& s, int peer, BufId buf, Span span, size_t chunkElems);
void recvSpan(Schedule& s, int peer, BufId buf, Span span, size_t chunkElems);
void recvReduceSpan(Schedule& s, int peer, BufId src, BufId dst, Span span, size_t chunkElems);

}  // namespace gdr::coll::detail

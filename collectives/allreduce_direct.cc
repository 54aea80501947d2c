// Direct all-reduce, for tiny messages on few ranks: every rank sends its
// whole Input to every other rank, receives theirs into Scratch (one block
// per rank), and reduces the n contributions locally in rank order.
//
// One round of independent messages instead of log2(n) dependent ones: with
// ranks sharing cores, each round of recursive doubling waits for a partner
// to be scheduled, so fewer dependent rounds is what matters there.
// Reducing in rank order (x0 op x1 op ... op x(n-1)) gives every rank the
// same bits, whatever the op's rounding.
//
// Cost: alpha + (n-1)·count·beta + (n-1)·count·gamma per rank; only worth
// it while count·(n-1) is small.
//
// In place: own Input is copied into its Scratch block first, since Output
// (the same memory) is overwritten by the first contribution.
#include "collectives/algorithms.h"
#include "collectives/schedule_common.h"

namespace gdr::coll::detail {

Schedule directAllReduce(const CollArgs& a) {
  Schedule s;
  if (trivialAllReduce(s, a)) return s;
  const int n = a.nranks, r = a.rank;
  const Span whole{0, a.count};
  auto block = [&](int peer) { return scratch(Span{static_cast<size_t>(peer) * a.count, a.count}); };
  s.scratchElems = static_cast<size_t>(n) * a.count;
  Region own = in(whole);
  if (a.inPlace) {
    addCopy(s, in(whole), block(r), 0);
    own = block(r);
  }
  for (size_t c = 0; c < numChunks(a.count, a.chunkElems); ++c) {
    const Span ch = chunkOf(whole, a.chunkElems, c);
    const int ci = static_cast<int>(c);
    for (int d = 1; d < n; ++d) addSend(s, (r + d) % n, in(ch), ci);
    for (int d = 1; d < n; ++d) {
      const int from = (r - d + n) % n;
      addRecv(s, from, scratch(Span{static_cast<size_t>(from) * a.count + ch.offset, ch.count}), ci);
    }
  }
  addCopy(s, r == 0 ? own : block(0), out(whole), 0);
  for (int p = 1; p < n; ++p) {
    Step st;
    st.kind = StepKind::Reduce;
    st.src = p == r ? own : block(p);
    st.dst = out(whole);
    s.steps.push_back(st);
  }
  return s;
}

}  // namespace gdr::coll::detail

// Double binary tree all-reduce (as NCCL does it): the count is cut in two
// halves, each reduced up one binary tree to its root and broadcast back
// down it. The two trees (schedule_common.h) are complementary: most ranks
// that are leaves in one are interior in the other, so every rank sends and
// receives about one half's worth each way and no link idles. Per chunk:
// 2·height·alpha latency, log-depth like recursive doubling, but pipelined by
// chunk, so large messages approach count·beta per rank.
//
// Per tree and chunk, "up": receive-reduce each child's chunk into Output
// (the first with Input as the other operand), then send the result to the
// parent (a leaf sends its Input chunk as is). "Down": receive the final
// chunk from the parent into Output, then send it to the children.
//
// Pipelining: the list interleaves up(chunk i) of both trees with
// down(chunk i - lag), lag = tallest height + 1, so a rank keeps feeding
// chunks upwards while earlier ones come back down. Any lag is deadlock-free:
// a rank's down(j) needs its parent's down(j), which follows only up steps
// the rank itself has already taken. Within a chunk, a rank whose step in
// one tree needs no receive (a leaf's send up, a root's sends down) takes it
// before the other tree's: under an in-order executor with blocking
// receives the send otherwise waits for receives it does not depend on.
#include <algorithm>

#include "collectives/algorithms.h"
#include "collectives/schedule_common.h"

namespace gdr::coll::detail {
namespace {

struct TreeHalf {
  TreeNode node;
  Span half;
  size_t chunks = 0;
};

void up(Schedule& s, const TreeHalf& t, size_t chunkElems, size_t c) {
  const Span ch = chunkOf(t.half, chunkElems, c);
  const int ci = static_cast<int>(c);
  Region src = in(ch);
  for (int kid : t.node.child) {
    if (kid < 0) continue;
    addRecvReduce(s, kid, src, out(ch), ci);
    src = out(ch);
  }
  if (t.node.parent >= 0) addSend(s, t.node.parent, src, ci);
}

void down(Schedule& s, const TreeHalf& t, size_t chunkElems, size_t c) {
  const Span ch = chunkOf(t.half, chunkElems, c);
  const int ci = static_cast<int>(c);
  if (t.node.parent >= 0) addRecv(s, t.node.parent, out(ch), ci);
  for (int kid : t.node.child)
    if (kid >= 0) addSend(s, kid, out(ch), ci);
}

}  // namespace

Schedule doubleTreeAllReduce(const CollArgs& a) {
  Schedule s;
  const int n = a.nranks;
  if (trivialAllReduce(s, a)) return s;
  TreeHalf trees[2];
  const size_t firstHalf = (a.count + 1) / 2;
  trees[0].half = Span{0, firstHalf};
  trees[1].half = Span{firstHalf, a.count - firstHalf};
  size_t most = 0;
  int height = 0;
  for (int t = 0; t < 2; ++t) {
    trees[t].node = doubleTreeNode(t, a.rank, n);
    trees[t].chunks = numChunks(trees[t].half.count, a.chunkElems);
    most = std::max(most, trees[t].chunks);
    height = std::max(height, treeHeight(t, n));
  }
  const size_t lag = static_cast<size_t>(height) + 1;
  // Steps that wait for nothing go first (see the top). Messages between a
  // pair are matched in order, so a swap that would reorder two messages to
  // one peer (the same parent in both trees, a child in both) is not taken.
  auto leaf = [](const TreeNode& t) { return t.child[0] < 0 && t.child[1] < 0; };
  auto childOf = [](const TreeNode& t, int r) {
    return r >= 0 && (t.child[0] == r || t.child[1] == r);
  };
  const TreeNode& t0 = trees[0].node;
  const TreeNode& t1 = trees[1].node;
  const bool upFirst = leaf(t1) && !leaf(t0) && t1.parent != t0.parent;
  const bool downFirst =
      t1.parent < 0 && t0.parent >= 0 && !childOf(t0, t1.child[0]) && !childOf(t0, t1.child[1]);
  for (size_t i = 0; i < most + lag; ++i) {
    for (int k = 0; k < 2; ++k) {
      const TreeHalf& t = trees[upFirst ? 1 - k : k];
      if (i < t.chunks) up(s, t, a.chunkElems, i);
    }
    if (i < lag) continue;
    for (int k = 0; k < 2; ++k) {
      const TreeHalf& t = trees[downFirst ? 1 - k : k];
      if (i - lag < t.chunks) down(s, t, a.chunkElems, i - lag);
    }
  }
  return s;
}

}  // namespace gdr::coll::detail

#include "collectives/schedule_common.h"

#include <algorithm>

namespace gdr::coll::detail {

Span balancedBlock(size_t count, int nblocks, int i) {
  const size_t n = static_cast<size_t>(nblocks), idx = static_cast<size_t>(i);
  const size_t base = count / n, extra = count % n;
  return Span{idx * base + std::min(idx, extra), base + (idx < extra ? 1 : 0)};
}

size_t numChunks(size_t count, size_t chunkElems) {
  if (count == 0) return 0;
  if (chunkElems == 0) return 1;
  return (count + chunkElems - 1) / chunkElems;
}

Span chunkOf(Span block, size_t chunkElems, size_t c) {
  if (chunkElems == 0) return block;
  const size_t start = c * chunkElems;
  return Span{block.offset + start, std::min(chunkElems, block.count - start)};
}

int binomialParent(int vrank) { return vrank == 0 ? -1 : vrank & (vrank - 1); }

std::vector<int> binomialChildren(int vrank, int nranks) {
  std::vector<int> kids;
  const int low = vrank == 0 ? nranks : (vrank & -vrank);
  for (int mask = 1; mask < low && vrank + mask < nranks; mask <<= 1) kids.push_back(vrank + mask);
  return kids;
}

TreeNode binaryTreeNode(int rank, int nranks) {
  TreeNode t;
  if (nranks <= 1) return t;
  if (rank == 0) {
    int top = 1;
    while (top < nranks) top <<= 1;
    t.child[0] = top >> 1;  // the root's single child heads the whole tree
    return t;
  }
  const int bit = rank & -rank;
  int up = (rank ^ bit) | (bit << 1);
  if (up >= nranks) up = rank ^ bit;  // no right-hand ancestor at this level
  t.parent = up;
  const int half = bit >> 1;
  if (half == 0) return t;  // odd ranks are leaves
  t.child[0] = rank - half;
  int h = half;
  while (h != 0 && rank + h >= nranks) h >>= 1;
  if (h != 0) t.child[1] = rank + h;
  return t;
}

TreeNode doubleTreeNode(int tree, int rank, int nranks) {
  if (tree == 0) return binaryTreeNode(rank, nranks);
  // Tree 1 is tree 0 relabelled: mirrored for even n, shifted for odd n.
  const bool mirror = nranks % 2 == 0;
  auto toT0 = [&](int r) { return mirror ? nranks - 1 - r : (r + nranks - 1) % nranks; };
  auto fromT0 = [&](int t) { return t < 0 ? -1 : mirror ? nranks - 1 - t : (t + 1) % nranks; };
  const TreeNode t0 = binaryTreeNode(toT0(rank), nranks);
  TreeNode t;
  t.parent = fromT0(t0.parent);
  t.child[0] = fromT0(t0.child[0]);
  t.child[1] = fromT0(t0.child[1]);
  if (t.child[0] >= 0 && t.child[1] >= 0 && t.child[0] > t.child[1])
    std::swap(t.child[0], t.child[1]);
  if (t.child[0] < 0) std::swap(t.child[0], t.child[1]);
  return t;
}

int treeHeight(int tree, int nranks) {
  // Every rank's builder asks for the same height, and walking the tree is
  // O(n log n): the simulator, which builds all n ranks' lists, would pay
  // it n times. The answer is a pure function of its arguments.
  thread_local int cachedRanks[2] = {-1, -1}, cachedHeight[2] = {0, 0};
  if (nranks == cachedRanks[tree & 1]) return cachedHeight[tree & 1];
  int height = 0;
  for (int r = 0; r < nranks; ++r) {
    int depth = 0;
    for (int p = doubleTreeNode(tree, r, nranks).parent; p >= 0;
         p = doubleTreeNode(tree, p, nranks).parent)
      ++depth;
    height = std::max(height, depth);
  }
  cachedRanks[tree & 1] = nranks;
  cachedHeight[tree & 1] = height;
  return height;
}

Fold foldIn(int rank, int nranks) {
  Fold f;
  f.pof2 = largestPow2AtMost(nranks);
  f.rem = nranks - f.pof2;
  if (rank < 2 * f.rem)
    f.vrank = rank % 2 == 0 ? -1 : rank / 2;
  else
    f.vrank = rank - f.rem;
  return f;
}

int foldRealRank(int vrank, const Fold& f) { return vrank < f.rem ? 2 * vrank + 1 : vrank + f.rem; }

int foldFirstReal(int vrank, const Fold& f) { return vrank < f.rem ? 2 * vrank : vrank + f.rem; }

void addSend(Schedule& s, int peer, Region src, int chunk) {
  s.steps.push_back(Step{StepKind::Send, peer, src, Region{}, chunk});
}

void addRecv(Schedule& s, int peer, Region dst, int chunk) {
  s.steps.push_back(Step{StepKind::Recv, peer, Region{}, dst, chunk});
}

void addRecvReduce(Schedule& s, int peer, Region src, Region dst, int chunk) {
  s.steps.push_back(Step{StepKind::RecvReduce, peer, src, dst, chunk});
}

void addCopy(Schedule& s, Region src, Region dst, int chunk) {
  s.steps.push_back(Step{StepKind::Copy, -1, src, dst, chunk});
}

void copyInputToOutput(Schedule& s, const CollArgs& a, Span whole) {
  if (a.inPlace || whole.count == 0) return;
  addCopy(s, in(whole), out(whole), 0);
}

bool trivialAllReduce(Schedule& s, const CollArgs& a) {
  if (a.count == 0) return true;
  if (a.nranks > 1) return false;
  copyInputToOutput(s, a, Span{0, a.count});
  return true;
}

}  // namespace gdr::coll::detail

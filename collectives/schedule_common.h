// Rank arithmetic and step-list helpers shared by the schedules. Everything
// here is pure (no transport, no state) and unit-tested exhaustively in
// tests/schedule_common_test.cc.
//
// Terms
//   block     a contiguous element range owned by one rank (or one virtual
//             rank) in a scatter/gather phase; Span{offset, count}.
//   chunk     a piece of a block of at most chunkElems elements (0: the whole
//             block); the pipelining unit. An empty block has no chunks, so no
//             message is sent for it: sender and receiver agree on that
//             because both compute the same block.
//   vrank     a rank renumbered so that the root (or the start of a chain) is 0.
//   fold-in   how power-of-two algorithms serve any rank count: with
//             pof2 = largest power of two <= nranks and rem = nranks - pof2,
//             each even rank below 2*rem hands its data to the odd rank above
//             it and sits out; the remaining pof2 ranks ("virtual ranks") run
//             the power-of-two algorithm; the result is handed back at the end.
#pragma once

#include <cstddef>
#include <vector>

#include "collectives/schedule.h"

namespace gdr::coll::detail {

struct Span {
  size_t offset = 0;
  size_t count = 0;
};

// ---- splitting -------------------------------------------------------------

// Block i of `count` elements split into `nblocks` nearly equal blocks: the
// first count % nblocks blocks get one element more.
Span balancedBlock(size_t count, int nblocks, int i);
// Number of chunks a block of `count` elements splits into (0 for an empty
// block; 1 when chunkElems is 0).
size_t numChunks(size_t count, size_t chunkElems);
// Chunk c of `block` (c < numChunks): chunkElems elements, the last one shorter.
Span chunkOf(Span block, size_t chunkElems, size_t c);

// ---- rings and chains --------------------------------------------------------

inline int ringNext(int rank, int nranks) { return (rank + 1) % nranks; }
inline int ringPrev(int rank, int nranks) { return (rank + nranks - 1) % nranks; }
// Rank renumbered so that `root` is 0, and back.
inline int toVrank(int rank, int root, int nranks) { return (rank - root + nranks) % nranks; }
inline int fromVrank(int vrank, int root, int nranks) { return (vrank + root) % nranks; }

// ---- binomial tree (vranks, root 0) ------------------------------------------
// vrank v's parent is v with its lowest set bit cleared; its children are
// v + 2^k for every 2^k below that bit (all 2^k < nranks for the root) that is
// < nranks. Children are listed smallest subtree first.
int binomialParent(int vrank);  // -1 for vrank 0
std::vector<int> binomialChildren(int vrank, int nranks);

// ---- binary trees for the double binary tree ----------------------------------
// An in-order binary tree over ranks 0..n-1: odd ranks are leaves, rank r with
// lowest set bit b sits at height log2(b) with children r - b/2 and r + b/2
// (the latter clipped to the largest in-range r + b/2^k). Rank 0 is the root
// and has a single child. The second tree is the first one mirrored
// (r -> n-1-r) for even n and shifted by one (r -> r-1) for odd n, so that
// most ranks that are leaves in one tree are interior in the other.
struct TreeNode {
  int parent = -1;
  int child[2] = {-1, -1};  // -1: absent; child[0] < child[1] when both exist
};
TreeNode binaryTreeNode(int rank, int nranks);
TreeNode doubleTreeNode(int tree, int rank, int nranks);  // tree 0 or 1
int treeHeight(int tree, int nranks);                     // edges root to deepest leaf

// ---- fold-in for power-of-two algorithms ---------------------------------------

inline int largestPow2AtMost(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}
struct Fold {
  int pof2 = 1;
  int rem = 0;
  // This rank's virtual rank, or -1 if it sits out (even rank below 2*rem).
  int vrank = 0;
};
Fold foldIn(int rank, int nranks);
// The real rank that plays virtual rank v.
int foldRealRank(int vrank, const Fold& f);
// The first real rank whose data virtual rank v carries (v < rem carries two
// ranks, 2v and 2v+1; the others one). Real ranks [foldFirstReal(v),
// foldFirstReal(v+1)) are v's; foldFirstReal(pof2) == nranks.
int foldFirstReal(int vrank, const Fold& f);

// ---- building step lists ---------------------------------------------------------

inline Region in(Span s) { return Region{BufId::Input, s.offset, s.count}; }
inline Region out(Span s) { return Region{BufId::Output, s.offset, s.count}; }
inline Region scratch(Span s) { return Region{BufId::Scratch, s.offset, s.count}; }
inline Region at(BufId buf, Span s) { return Region{buf, s.offset, s.count}; }

void addSend(Schedule& s, int peer, Region src, int chunk);
void addRecv(Schedule& s, int peer, Region dst, int chunk);
void addRecvReduce(Schedule& s, int peer, Region src, Region dst, int chunk);
void addCopy(Schedule& s, Region src, Region dst, int chunk);

// All-reduce's degenerate cases: nothing for count 0, Input -> Output for
// a single rank. True when it wrote the whole schedule.
bool trivialAllReduce(Schedule& s, const CollArgs& a);
// Input -> Output copy of `whole` (one local step), skipped in place.
void copyInputToOutput(Schedule& s, const CollArgs& a, Span whole);

}  // namespace gdr::coll::detail

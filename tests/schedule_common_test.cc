// Exhaustive tests of the rank arithmetic in collectives/schedule_common.h.
#include "collectives/schedule_common.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace gdr::coll::detail {
namespace {

constexpr int kMaxN = 64;

TEST(ScheduleCommon, BalancedBlocksTileTheCountNearlyEqually) {
  for (size_t count = 0; count <= 100; ++count) {
    for (int nb = 1; nb <= kMaxN; ++nb) {
      size_t next = 0;
      for (int i = 0; i < nb; ++i) {
        const Span b = balancedBlock(count, nb, i);
        ASSERT_EQ(b.offset, next) << count << " " << nb << " " << i;
        const size_t want = count / nb + (static_cast<size_t>(i) < count % nb ? 1 : 0);
        ASSERT_EQ(b.count, want) << count << " " << nb << " " << i;
        next += b.count;
      }
      ASSERT_EQ(next, count);
    }
  }
}

TEST(ScheduleCommon, ChunksTileABlock) {
  for (size_t count = 0; count <= 60; ++count) {
    for (size_t ce = 0; ce <= 12; ++ce) {
      const Span block{7, count};
      const size_t nc = numChunks(count, ce);
      if (count == 0) {
        ASSERT_EQ(nc, 0u);
      }
      if (count > 0 && ce == 0) {
        ASSERT_EQ(nc, 1u);
      }
      size_t next = block.offset;
      for (size_t c = 0; c < nc; ++c) {
        const Span ch = chunkOf(block, ce, c);
        ASSERT_EQ(ch.offset, next);
        ASSERT_GT(ch.count, 0u);
        if (ce > 0) {
          ASSERT_LE(ch.count, ce);
        }
        next += ch.count;
      }
      ASSERT_EQ(next, block.offset + count) << count << " " << ce;
    }
  }
}

TEST(ScheduleCommon, RingNeighboursAndVranksInvert) {
  for (int n = 1; n <= kMaxN; ++n) {
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(ringPrev(ringNext(r, n), n), r);
      EXPECT_EQ(ringNext(ringPrev(r, n), n), r);
      for (int root = 0; root < n; ++root) {
        EXPECT_EQ(fromVrank(toVrank(r, root, n), root, n), r);
        EXPECT_EQ(toVrank(root, root, n), 0);
      }
    }
    // Following ringNext visits every rank once.
    std::set<int> seen;
    for (int r = 0, i = 0; i < n; ++i, r = ringNext(r, n)) seen.insert(r);
    EXPECT_EQ(static_cast<int>(seen.size()), n);
  }
}

TEST(ScheduleCommon, BinomialTreeSpansAllVranks) {
  for (int n = 1; n <= kMaxN; ++n) {
    int depthMax = 0;
    for (int v = 0; v < n; ++v) {
      for (int kid : binomialChildren(v, n)) {
        ASSERT_LT(kid, n);
        ASSERT_EQ(binomialParent(kid), v) << n << " " << v << " " << kid;
      }
      if (v == 0) {
        ASSERT_EQ(binomialParent(v), -1);
        continue;
      }
      const int p = binomialParent(v);
      ASSERT_LT(p, v);
      const std::vector<int> sib = binomialChildren(p, n);
      ASSERT_EQ(std::count(sib.begin(), sib.end(), v), 1) << n << " " << v;
      int depth = 0;
      for (int u = v; u != 0; u = binomialParent(u)) ++depth;
      depthMax = std::max(depthMax, depth);
    }
    int log2ceil = 0;
    while ((1 << log2ceil) < n) ++log2ceil;
    EXPECT_LE(depthMax, log2ceil) << n;
  }
}

// Checks a tree given by node(r): one root, parent/child links agree, at most
// two children, every rank reachable from the root; returns its height.
template <class NodeFn>
int checkTree(int n, NodeFn node) {
  int roots = 0, height = 0;
  for (int r = 0; r < n; ++r) {
    const TreeNode t = node(r);
    if (t.parent < 0) ++roots;
    if (t.parent >= 0) {
      EXPECT_LT(t.parent, n);
      const TreeNode p = node(t.parent);
      EXPECT_TRUE(p.child[0] == r || p.child[1] == r) << "n " << n << " rank " << r;
    }
    for (int kid : t.child) {
      if (kid < 0) continue;
      EXPECT_LT(kid, n);
      EXPECT_EQ(node(kid).parent, r) << "n " << n << " rank " << r << " kid " << kid;
    }
    if (t.child[1] >= 0) {
      EXPECT_GE(t.child[0], 0);
    }
    if (t.child[0] >= 0 && t.child[1] >= 0) {
      EXPECT_LT(t.child[0], t.child[1]);
    }
    int depth = 0;
    for (int u = r; node(u).parent >= 0 && depth <= n; u = node(u).parent) ++depth;
    EXPECT_LT(depth, n) << "cycle above rank " << r << " for n " << n;
    height = std::max(height, depth);
  }
  EXPECT_EQ(roots, 1) << n;
  return height;
}

TEST(ScheduleCommon, DoubleBinaryTreesAreTreesAndComplementary) {
  for (int n = 1; n <= kMaxN; ++n) {
    int log2ceil = 0;
    while ((1 << log2ceil) < n) ++log2ceil;
    for (int tree = 0; tree < 2; ++tree) {
      const int h = checkTree(n, [&](int r) { return doubleTreeNode(tree, r, n); });
      EXPECT_EQ(h, treeHeight(tree, n));
      EXPECT_LE(h, log2ceil + 1) << "n " << n << " tree " << tree;
    }
    EXPECT_EQ(doubleTreeNode(0, 0, n).parent, -1);
    // Most ranks that are interior in one tree are leaves in the other: for
    // even n none is interior in both, for odd n at most one.
    int interiorInBoth = 0;
    for (int r = 0; r < n; ++r) {
      const bool in0 = doubleTreeNode(0, r, n).child[0] >= 0;
      const bool in1 = doubleTreeNode(1, r, n).child[0] >= 0;
      if (in0 && in1) ++interiorInBoth;
    }
    EXPECT_LE(interiorInBoth, n % 2) << n;
  }
}

TEST(ScheduleCommon, FoldInMapsVirtualRanksOntoRealOnes) {
  for (int n = 1; n <= kMaxN; ++n) {
    const Fold f0 = foldIn(0, n);
    EXPECT_EQ(f0.pof2, largestPow2AtMost(n));
    EXPECT_LE(f0.pof2, n);
    EXPECT_GT(2 * f0.pof2, n);
    EXPECT_EQ(f0.rem, n - f0.pof2);
    std::set<int> vranks;
    int sitting = 0;
    for (int r = 0; r < n; ++r) {
      const Fold f = foldIn(r, n);
      if (f.vrank < 0) {
        ++sitting;
        EXPECT_LT(r + 1, n);
        EXPECT_EQ(foldIn(r + 1, n).vrank >= 0, true);
        EXPECT_EQ(foldFirstReal(foldIn(r + 1, n).vrank, f), r);  // it carries r
        continue;
      }
      EXPECT_EQ(foldRealRank(f.vrank, f), r);
      vranks.insert(f.vrank);
    }
    EXPECT_EQ(sitting, f0.rem);
    EXPECT_EQ(static_cast<int>(vranks.size()), f0.pof2);
    EXPECT_EQ(*vranks.rbegin(), f0.pof2 - 1);
    EXPECT_EQ(foldFirstReal(0, f0), 0);
    EXPECT_EQ(foldFirstReal(f0.pof2, f0), n);
    for (int v = 0; v < f0.pof2; ++v) {
      const int lo = foldFirstReal(v, f0), hi = foldFirstReal(v + 1, f0);
      EXPECT_EQ(hi - lo, v < f0.rem ? 2 : 1);
      EXPECT_EQ(foldRealRank(v, f0), hi - 1);
    }
  }
}

}  // namespace
}  // namespace gdr::coll::detail

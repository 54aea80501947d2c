// Registration cache logic, without a device: registrations are recorded by
// injected functions.
#if GDR_HAVE_IB
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

#include "transport/ib/reg_cache.h"

namespace gdr::transport::ib {
namespace {

struct Fake {
  int next = 1;
  std::multiset<std::pair<uintptr_t, size_t>>
      live;  // a stale entry and its replacement may share a range
  int regs = 0, deregs = 0;
  RegCache make(bool keep, size_t maxUnused = 64) {
    return RegCache(
        [this](uintptr_t b, size_t l) {
          ++regs;
          EXPECT_EQ(b % 4096, 0u);
          EXPECT_EQ(l % 4096, 0u);
          live.insert({b, l});
          Registration r;
          r.handle = reinterpret_cast<void*>(b);
          r.lkey = static_cast<uint32_t>(next++);
          r.rkey = r.lkey;
          return r;
        },
        [this](const Registration& r) {
          ++deregs;
          for (auto it = live.begin(); it != live.end(); ++it)
            if (it->first == reinterpret_cast<uintptr_t>(r.handle)) {
              live.erase(it);
              return;
            }
          ADD_FAILURE() << "deregistered something never registered";
        },
        4096, keep, maxUnused);
  }
};

const void* at(uintptr_t a) { return reinterpret_cast<const void*>(a); }

TEST(IbRegCache, PageAlignedCoveringRange) {
  Fake f;
  RegCache c = f.make(true);
  const auto* e = c.acquire(at(0x10010), 5000);
  EXPECT_EQ(e->base, 0x10000u);
  EXPECT_EQ(e->len, 0x2000u);  // 0x10010 + 5000 ends in the second page
  EXPECT_GE(e->base + e->len, 0x10010u + 5000);
  c.release(e);
}

TEST(IbRegCache, ReuseIsAHitAndRefcounted) {
  Fake f;
  RegCache c = f.make(true);
  const auto* a = c.acquire(at(0x20000), 65536);
  const auto* b = c.acquire(at(0x20100), 100);  // inside: hit
  EXPECT_EQ(a, b);
  EXPECT_EQ(a->refs, 2);
  EXPECT_EQ(c.stats().hits, 1u);
  EXPECT_EQ(c.stats().misses, 1u);
  c.release(a);
  c.release(b);
  EXPECT_EQ(f.regs, 1);
  EXPECT_EQ(f.deregs, 0);  // kept for the next use
  const auto* again = c.acquire(at(0x20000), 65536);
  EXPECT_EQ(c.stats().hits, 2u);
  c.release(again);
}

TEST(IbRegCache, WithoutKeepDropsOnLastRelease) {
  Fake f;
  RegCache c = f.make(false);
  const auto* a = c.acquire(at(0x40000), 4096);
  const auto* b = c.acquire(at(0x40000), 4096);
  c.release(a);
  EXPECT_EQ(f.deregs, 0);
  c.release(b);
  EXPECT_EQ(f.deregs, 1);
  EXPECT_EQ(c.size(), 0u);
}

TEST(IbRegCache, InvalidateDropsUnusedAndMarksUsed) {
  Fake f;
  RegCache c = f.make(true);
  const auto* busy = c.acquire(at(0x100000), 8192);
  const auto* idle = c.acquire(at(0x200000), 8192);
  c.release(idle);
  c.invalidate(at(0x100000), 0x200000);  // covers both
  EXPECT_EQ(f.deregs, 1);                // the idle one at once
  EXPECT_TRUE(busy->stale);
  const auto* fresh = c.acquire(at(0x100000), 8192);  // a stale entry never hits
  EXPECT_NE(fresh, busy);
  c.release(busy);
  EXPECT_EQ(f.deregs, 2);  // the stale one went with its last reference
  c.release(fresh);
}

TEST(IbRegCache, LargerRequestSupersedesUnusedSmallerOnes) {
  Fake f;
  RegCache c = f.make(true);
  c.release(c.acquire(at(0x300000), 4096));
  c.release(c.acquire(at(0x302000), 4096));
  const auto* big = c.acquire(at(0x300000), 0x10000);
  EXPECT_EQ(f.deregs, 2);
  EXPECT_EQ(c.size(), 1u);
  c.release(big);
}

TEST(IbRegCache, UnusedEntriesAreBounded) {
  Fake f;
  RegCache c = f.make(true, 4);
  for (int i = 0; i < 20; ++i) c.release(c.acquire(at(0x1000000 + i * 0x10000), 4096));
  EXPECT_LE(c.size(), 4u);
  EXPECT_EQ(f.live.size(), c.size());
}

TEST(IbRegCache, RandomUseNeverLeaksAndAlwaysCovers) {
  Fake f;
  std::mt19937_64 rng(std::random_device{}());
  {
    RegCache c = f.make(rng() & 1, 8);
    std::vector<const RegCache::Entry*> held;
    for (int i = 0; i < 2000; ++i) {
      if (!held.empty() && (rng() % 3 == 0)) {
        size_t k = rng() % held.size();
        c.release(held[k]);
        held.erase(held.begin() + static_cast<long>(k));
        continue;
      }
      uintptr_t a = 0x10000000 + (rng() % 64) * 1000;
      size_t len = 1 + rng() % 50000;
      const auto* e = c.acquire(at(a), len);
      ASSERT_LE(e->base, a);
      ASSERT_GE(e->base + e->len, a + len);
      held.push_back(e);
      if (rng() % 50 == 0) c.invalidate(at(0x10000000 + (rng() % 64) * 1000), rng() % 100000);
    }
    for (auto* e : held) c.release(e);
  }
  EXPECT_TRUE(f.live.empty());
  EXPECT_EQ(f.regs, f.deregs);
}

}  // namespace
}  // namespace gdr::transport::ib
#endif  // GDR_HAVE_IB

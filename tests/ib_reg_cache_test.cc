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
        [this](uintptr_t b, size_t l, const void*) {
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

// ---- the default policy: keep only what the program vouches for ----------
#if GDR_HAVE_IB
#include <sys/mman.h>
#include <unistd.h>

#include "gdr_gpu/fake_verbs.h"
#include "gdrcoll.h"
#include "transport/ib/mr_register.h"
#include "transport/ib/user_ranges.h"

namespace gdr::transport::ib {
namespace {

using gdr::testing::FakeVerbs;

// A cache wired like the endpoint's: send sources through the fake verbs
// table, kept only inside UserRanges.
struct PolicyCache {
  IbvApi api = FakeVerbs::table();
  std::unique_ptr<RegCache> cache;
  PolicyCache() {
    FakeVerbs::get().reset();
    MrContext mc;
    mc.api = &api;
    mc.what = "a test";
    mc.kindOf = [](const void*) { return MemKind::Host; };
    const IbvApi* a = &api;
    cache = std::make_unique<RegCache>(
        cacheRegisterFn(mc), [a](const Registration& r) { deregister(*a, r); },
        static_cast<size_t>(sysconf(_SC_PAGESIZE)), true);
    cache->followUserRanges();
  }
  void use(const void* p, size_t n) { cache->release(cache->acquire(p, n)); }
};

TEST(IbRegCachePolicy, UnlistedBuffersAreNeverKept) {
  PolicyCache pc;
  std::vector<char> buf(100000);
  pc.use(buf.data(), buf.size());
  pc.use(buf.data(), buf.size());
  EXPECT_EQ(pc.cache->stats().hits, 0u);
  EXPECT_EQ(pc.cache->stats().misses, 2u);
  EXPECT_EQ(FakeVerbs::get().live, 0);  // nothing pinned once unused
  EXPECT_EQ(pc.cache->size(), 0u);
}

TEST(IbRegCachePolicy, ListedRangesHitUntilRemoved) {
  PolicyCache pc;
  std::vector<char> buf(100000);
  uint64_t id = UserRanges::instance().add(buf.data(), buf.size());
  pc.use(buf.data(), buf.size());
  pc.use(buf.data() + 5000, 1000);  // inside: a hit
  pc.use(buf.data(), buf.size());
  EXPECT_EQ(pc.cache->stats().misses, 1u);
  EXPECT_EQ(pc.cache->stats().hits, 2u);
  EXPECT_EQ(FakeVerbs::get().live, 1);
  // A request reaching past the listed range is not kept.
  pc.use(buf.data() + 90000, 20000);
  EXPECT_EQ(FakeVerbs::get().live, 1);
  EXPECT_TRUE(UserRanges::instance().remove(id));
  EXPECT_EQ(FakeVerbs::get().live, 0);  // dropped before remove() returned
  EXPECT_FALSE(UserRanges::instance().remove(id));
  pc.use(buf.data(), buf.size());
  EXPECT_EQ(pc.cache->stats().misses, 3u);
  EXPECT_EQ(FakeVerbs::get().live, 0);
}

TEST(IbRegCachePolicy, RemovalWhileInFlightDropsOnRelease) {
  PolicyCache pc;
  std::vector<char> buf(50000);
  uint64_t id = UserRanges::instance().add(buf.data(), buf.size());
  const auto* e = pc.cache->acquire(buf.data(), buf.size());
  UserRanges::instance().remove(id);
  EXPECT_TRUE(e->stale);
  EXPECT_EQ(FakeVerbs::get().live, 1);  // still used by the operation
  pc.cache->release(e);
  EXPECT_EQ(FakeVerbs::get().live, 0);
}

TEST(IbRegCachePolicy, OverlappingListedRanges) {
  PolicyCache pc;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* mem = mmap(nullptr, 16 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  char* p = static_cast<char*>(mem);
  uint64_t a = UserRanges::instance().add(p, 8 * page);
  uint64_t b = UserRanges::instance().add(p + 4 * page, 8 * page);  // overlaps a
  pc.use(p, 2 * page);               // inside a only
  pc.use(p + 10 * page, page);       // inside b only
  pc.use(p + 5 * page, 2 * page);    // inside both
  pc.use(p + 6 * page, 4 * page);    // inside b
  EXPECT_EQ(FakeVerbs::get().live, 4);
  // Removing a drops what overlaps a (even if b covers it too), keeps what
  // lies only in b.
  UserRanges::instance().remove(a);
  EXPECT_EQ(FakeVerbs::get().live, 1);
  const uint64_t hits = pc.cache->stats().hits;
  pc.use(p + 10 * page, page);  // still a hit
  EXPECT_EQ(pc.cache->stats().hits, hits + 1);
  // A range no single listed range covers is not kept; the unused entry
  // inside it goes too.
  pc.use(p + page, 10 * page);
  EXPECT_EQ(FakeVerbs::get().live, 0);
  pc.use(p + 10 * page, page);  // registered again, kept again
  EXPECT_EQ(FakeVerbs::get().live, 1);
  UserRanges::instance().remove(b);
  EXPECT_EQ(FakeVerbs::get().live, 0);
  munmap(mem, 16 * page);
}

TEST(IbRegCachePolicy, MemAllocAndFreeThroughTheApi) {
  PolicyCache pc;
  void* p = nullptr;
  ASSERT_EQ(gdrMemAlloc(&p, 300000), gdrSuccess);  // host memory here (no GPU current)
  ASSERT_NE(p, nullptr);
  pc.use(p, 300000);
  pc.use(static_cast<char*>(p) + 1000, 2000);
  EXPECT_EQ(pc.cache->stats().hits, 1u);
  EXPECT_EQ(FakeVerbs::get().live, 1);
  EXPECT_EQ(FakeVerbs::get().calls.at(0).access, 0);  // a send source: local read only
  ASSERT_EQ(gdrMemFree(p), gdrSuccess);
  EXPECT_EQ(FakeVerbs::get().live, 0);  // dropped with the free
  EXPECT_EQ(gdrMemFree(p), gdrInvalidArgument);  // twice
  int local = 0;
  EXPECT_EQ(gdrMemFree(&local), gdrInvalidArgument);  // not ours
  EXPECT_EQ(gdrMemFree(nullptr), gdrSuccess);
  EXPECT_EQ(gdrMemAlloc(nullptr, 10), gdrInvalidArgument);
  EXPECT_EQ(gdrMemAlloc(&p, 0), gdrInvalidArgument);
}

TEST(IbRegCachePolicy, CommRegisterAndDeregister) {
  gdrUniqueId id;
  ASSERT_EQ(gdrGetUniqueId(&id), gdrSuccess);
  gdrComm_t comm = nullptr;
  ASSERT_EQ(gdrCommInitRank(&comm, 1, id, 0), gdrSuccess);
  PolicyCache pc;
  std::vector<char> buf(200000);
  gdrRegHandle_t h = nullptr;
  ASSERT_EQ(gdrCommRegister(comm, buf.data(), buf.size(), &h), gdrSuccess);
  pc.use(buf.data(), buf.size());
  pc.use(buf.data(), buf.size());
  EXPECT_EQ(pc.cache->stats().hits, 1u);
  EXPECT_EQ(FakeVerbs::get().live, 1);
  ASSERT_EQ(gdrCommDeregister(comm, h), gdrSuccess);
  EXPECT_EQ(FakeVerbs::get().live, 0);
  EXPECT_EQ(gdrCommDeregister(comm, h), gdrInvalidArgument);  // stale handle
  EXPECT_EQ(gdrCommRegister(comm, nullptr, 10, &h), gdrInvalidArgument);
  EXPECT_EQ(gdrCommRegister(comm, buf.data(), 0, &h), gdrInvalidArgument);
  EXPECT_EQ(gdrCommRegister(nullptr, buf.data(), 10, &h), gdrInvalidArgument);
  EXPECT_EQ(gdrCommRegister(comm, buf.data(), 10, nullptr), gdrInvalidArgument);
  EXPECT_EQ(gdrCommDestroy(comm), gdrSuccess);
}

}  // namespace
}  // namespace gdr::transport::ib
#endif  // GDR_HAVE_IB

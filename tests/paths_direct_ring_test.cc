// The GPUDirect path's ring (paths/direct/phases.h, plan.h) beyond two
// ranks, run on host memory by a simulator of how the path executes a plan:
// a rank posts a phase's messages together (each send reads its source as
// the phase starts), the phase ends when all of them completed, a send only
// once its receiver has reached the phase holding the matching receive
// (rendezvous, as the verbs transport's zero-copy messages), and then the
// phase's local work runs. The simulator reports a deadlock, a send whose
// source the phase overwrote, two receives of a phase into one byte, and a
// size mismatch; then every rank's output is checked against the
// definition. The schedules the plans come from are the host path's ring,
// which the schedule simulator proves (tests/support/schedule_sim.h); it
// runs here on the same arguments too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "collectives/schedule.h"
#include "core/datatype.h"
#include "paths/direct/phases.h"
#include "paths/direct/plan.h"
#include "support/schedule_sim.h"

namespace gdr::paths::direct {
namespace {

struct Rank {
  std::vector<char> in, out, scratch;
  Plan plan;
};

template <typename T>
T apply(gdrRedOp_t op, T a, T b) {
  switch (op) {
    case gdrMax:
      return a > b ? a : b;
    case gdrMin:
      return a < b ? a : b;
    case gdrProd:
      return a * b;
    default:
      return a + b;
  }
}

template <typename T>
void runOp(const LocalOp& o) {
  T* d = reinterpret_cast<T*>(o.dst);
  const T* a = reinterpret_cast<const T*>(o.srcs[0]);
  const T* b = reinterpret_cast<const T*>(o.srcs[1]);
  for (size_t i = 0; i < o.count; ++i) {
    if (o.isCopy)
      d[i] = a[i];
    else if (o.nsrc == 1)
      d[i] = o.op == gdrAvg && o.avgDivisor ? static_cast<T>(a[i] / o.avgDivisor) : a[i];
    else
      d[i] = apply<T>(o.op, a[i], b[i]);
  }
}

void runLocal(const LocalOp& o) {
  if (o.type == gdrInt32)
    runOp<int32_t>(o);
  else
    runOp<float>(o);
}

bool overlap(const char* a, size_t na, const char* b, size_t nb) {
  return na && nb && a < b + nb && b < a + na;
}

// Runs every rank's phases together; "" when nothing went wrong.
std::string simulate(std::vector<Rank>& ranks) {
  const int n = static_cast<int>(ranks.size());
  struct Where {
    size_t phase;
    size_t bytes;
  };
  // Per ordered pair (from, to): the phase of each send and each receive.
  std::map<std::pair<int, int>, std::vector<Where>> sends, recvs;
  // Per rank and phase: each message's ordinal on its pair.
  std::vector<std::vector<std::vector<size_t>>> ordinal(n);
  for (int r = 0; r < n; ++r) {
    const auto& phases = ranks[r].plan.phases;
    ordinal[r].resize(phases.size());
    for (size_t p = 0; p < phases.size(); ++p)
      for (const Msg& m : phases[p].msgs) {
        if (m.peer == r) return "a message to oneself";
        auto& list = m.isSend ? sends[{r, m.peer}] : recvs[{m.peer, r}];
        ordinal[r][p].push_back(list.size());
        list.push_back({p, m.bytes});
      }
  }
  for (const auto& [pair, list] : sends) {
    const auto& other = recvs[pair];
    if (other.size() != list.size())
      return "rank " + std::to_string(pair.first) + " sends " + std::to_string(list.size()) +
             " messages to rank " + std::to_string(pair.second) + ", which receives " +
             std::to_string(other.size());
    for (size_t k = 0; k < list.size(); ++k)
      if (list[k].bytes != other[k].bytes) return "a send's size differs from its receive's";
  }
  for (const auto& [pair, list] : recvs)
    if (sends[pair].size() != list.size()) return "a receive nobody sends";
  // What each send carried, snapshot as its phase started.
  std::map<std::pair<int, int>, std::map<size_t, std::vector<char>>> wire;
  std::vector<size_t> cur(n, 0);
  auto start = [&](int r) {
    const auto& phases = ranks[r].plan.phases;
    if (cur[r] >= phases.size()) return;
    const Phase& ph = phases[cur[r]];
    for (size_t i = 0; i < ph.msgs.size(); ++i)
      if (ph.msgs[i].isSend)
        wire[{r, ph.msgs[i].peer}][ordinal[r][cur[r]][i]].assign(ph.msgs[i].buf,
                                                                 ph.msgs[i].buf + ph.msgs[i].bytes);
  };
  for (int r = 0; r < n; ++r) start(r);
  for (;;) {
    bool moved = false, left = false;
    for (int r = 0; r < n; ++r) {
      const auto& phases = ranks[r].plan.phases;
      if (cur[r] >= phases.size()) continue;
      left = true;
      const Phase& ph = phases[cur[r]];
      bool ready = true;
      for (size_t i = 0; i < ph.msgs.size() && ready; ++i) {
        const Msg& m = ph.msgs[i];
        const size_t k = ordinal[r][cur[r]][i];
        // The other side has reached the phase holding its half.
        const size_t theirs = m.isSend ? recvs[{r, m.peer}][k].phase : sends[{m.peer, r}][k].phase;
        ready = cur[m.peer] >= theirs;
      }
      if (!ready) continue;
      // The receives land.
      for (size_t i = 0; i < ph.msgs.size(); ++i) {
        const Msg& m = ph.msgs[i];
        if (m.isSend) continue;
        for (size_t j = 0; j < i; ++j)
          if (!ph.msgs[j].isSend && overlap(m.buf, m.bytes, ph.msgs[j].buf, ph.msgs[j].bytes))
            return "two receives of one phase write the same bytes (rank " + std::to_string(r) +
                   ")";
        const std::vector<char>& data = wire[{m.peer, r}][ordinal[r][cur[r]][i]];
        std::memcpy(m.buf, data.data(), m.bytes);
      }
      // A send's source must still hold what the send read.
      for (size_t i = 0; i < ph.msgs.size(); ++i) {
        const Msg& m = ph.msgs[i];
        if (!m.isSend) continue;
        const std::vector<char>& data = wire[{r, m.peer}][ordinal[r][cur[r]][i]];
        if (m.bytes && std::memcmp(m.buf, data.data(), m.bytes) != 0)
          return "a receive of the phase overwrote what a send of it reads (rank " +
                 std::to_string(r) + ", phase " + std::to_string(cur[r]) + ")";
      }
      for (const LocalOp& o : ph.ops) runLocal(o);
      ++cur[r];
      start(r);
      moved = true;
    }
    if (!left) return "";
    if (!moved) return "deadlock";
  }
}

template <typename T>
T valueOf(int r, size_t i) {
  return static_cast<T>((r * 131 + i * 7) % 13 + 1);
}

struct RingCase {
  CollKind kind;
  int n;
  size_t count;
  size_t chunk;
  bool inPlace;
  gdrRedOp_t op;
  gdrDataType_t type;
};

std::string name(const RingCase& c) {
  return std::string(collName(c.kind)) + " n=" + std::to_string(c.n) +
         " count=" + std::to_string(c.count) + " chunk=" + std::to_string(c.chunk) +
         (c.inPlace ? " in place" : "") + " op=" + std::to_string(c.op) +
         " type=" + std::to_string(c.type);
}

template <typename T>
std::string runRing(const RingCase& c) {
  const int n = c.n;
  const size_t eb = sizeof(T);
  const bool rs = c.kind == CollKind::ReduceScatter;
  const size_t inElems = rs ? n * c.count : c.count;
  std::vector<Rank> ranks(n);
  for (int r = 0; r < n; ++r) {
    Rank& k = ranks[r];
    k.in.resize(inElems * eb);
    k.out.assign(inElems * eb, 0x5a);
    T* in = reinterpret_cast<T*>(c.inPlace ? k.out.data() : k.in.data());
    for (size_t i = 0; i < inElems; ++i) in[i] = valueOf<T>(r, i);
    CollCall call;
    call.kind = c.kind;
    call.sendbuf = c.inPlace ? k.out.data() : k.in.data();
    call.recvbuf = k.out.data();
    call.count = c.count;
    call.type = c.type;
    call.op = c.op;
    call.inPlace = c.inPlace;
    if (!ringApplies(call, n) && n > 2) return "the ring does not apply";
    k.scratch.assign(scratchBytes(call, r, n, c.chunk) + 1, 0x77);
    k.plan = planCollective(call, r, n, k.scratch.data(), c.chunk);
    if (n > 2 && (k.plan.phases.empty() || !k.plan.msgs.empty() || k.plan.reduces))
      return "not a phased plan";
    // Nothing past the scratch the plan asked for.
    for (const Phase& ph : k.plan.phases) {
      for (const Msg& m : ph.msgs)
        if (m.buf >= k.scratch.data() && m.buf < k.scratch.data() + k.scratch.size() &&
            m.buf + m.bytes > k.scratch.data() + k.scratch.size() - 1)
          return "a message past the scratch";
    }
  }
  std::string err = simulate(ranks);
  if (!err.empty()) return err;
  const size_t outElems = c.count;
  for (int r = 0; r < n; ++r) {
    const T* out = reinterpret_cast<const T*>(ranks[r].out.data());
    for (size_t i = 0; i < outElems; ++i) {
      const size_t idx = rs ? r * c.count + i : i;
      T want = valueOf<T>(0, idx);
      for (int q = 1; q < n; ++q)
        want = apply<T>(c.op == gdrAvg ? gdrSum : c.op, want, valueOf<T>(q, idx));
      if (c.op == gdrAvg) want = static_cast<T>(want / n);
      if (out[i] != want)
        return "rank " + std::to_string(r) + " [" + std::to_string(i) +
               "] = " + std::to_string(static_cast<double>(out[i])) + ", want " +
               std::to_string(static_cast<double>(want));
    }
  }
  return "";
}

std::string run(const RingCase& c) {
  return c.type == gdrInt32 ? runRing<int32_t>(c) : runRing<float>(c);
}

TEST(DirectRing, AllReduceAndReduceScatterAreCorrectAndDeadlockFree) {
  int cases = 0;
  for (CollKind kind : {CollKind::AllReduce, CollKind::ReduceScatter})
    for (int n = 3; n <= 8; ++n)
      for (size_t count : {size_t{1}, size_t(n - 1), size_t{7}, size_t{100}, size_t{1001}})
        for (size_t chunk : {size_t{0}, size_t{3}, size_t{64}})
          for (bool inPlace : {false, true})
            for (gdrRedOp_t op : {gdrSum, gdrMax, gdrAvg})
              for (gdrDataType_t t : {gdrFloat32, gdrInt32}) {
                const RingCase c{kind, n, count, chunk, inPlace, op, t};
                const std::string err = run(c);
                ASSERT_EQ(err, "") << name(c);
                ++cases;
              }
  EXPECT_GT(cases, 1000);
}

TEST(DirectRing, TwoRanksAndOtherCollectivesStayOneShot) {
  CollCall c;
  c.kind = CollKind::AllReduce;
  c.count = 100;
  c.op = gdrSum;
  EXPECT_FALSE(ringApplies(c, 2));
  EXPECT_TRUE(ringApplies(c, 3));
  c.op = static_cast<gdrRedOp_t>(gdrNumOps);  // a PreMulSum op scales each input once
  EXPECT_FALSE(ringApplies(c, 3));
  c.op = gdrSum;
  c.kind = CollKind::Reduce;
  EXPECT_FALSE(ringApplies(c, 3));
  c.kind = CollKind::ReduceScatter;
  c.count = 0;
  EXPECT_FALSE(ringApplies(c, 3));
}

// Each rank moves 2(n - 1)/n of the buffer in an all-reduce (one-shot moved
// n - 1 buffers), and every block leaves a rank once per pass.
TEST(DirectRing, AllReduceMovesTwoPassesOfBlocks) {
  for (int n : {3, 4, 7}) {
    const size_t count = 7000;
    for (int r = 0; r < n; ++r) {
      std::vector<char> in(count * 4), out(count * 4);
      CollCall c;
      c.kind = CollKind::AllReduce;
      c.sendbuf = in.data();
      c.recvbuf = out.data();
      c.count = count;
      c.type = gdrFloat32;
      std::vector<char> scratch(scratchBytes(c, r, n));
      const Plan p = planCollective(c, r, n, scratch.data());
      size_t sent = 0, got = 0;
      for (const Phase& ph : p.phases)
        for (const Msg& m : ph.msgs) {
          (m.isSend ? sent : got) += m.bytes;
          EXPECT_TRUE(m.peer == (r + 1) % n || m.peer == (r + n - 1) % n) << "not a ring neighbour";
        }
      // Every block but this rank's in the first pass, every one but its
      // successor's in the second (blocks: count / n, the first count % n
      // one longer).
      auto block = [&](int b) { return count / n + (b < static_cast<int>(count % n) ? 1 : 0); };
      EXPECT_EQ(sent, 4 * (2 * count - block(r) - block((r + 1) % n)))
          << "n " << n << " rank " << r;
      EXPECT_EQ(got, 4 * (2 * count - block((r + n - 1) % n) - block(r)))
          << "n " << n << " rank " << r;
    }
  }
}

// The same arguments through the host path's schedule simulator: the
// schedules the phases come from are correct there too.
TEST(DirectRing, TheScheduleSimulatorAgrees) {
  for (CollKind kind : {CollKind::AllReduce, CollKind::ReduceScatter})
    for (int n = 3; n <= 8; ++n)
      for (size_t count : {size_t{1}, size_t{7}, size_t{1001}})
        for (size_t chunk : {size_t{0}, size_t{3}}) {
          coll::CollArgs a;
          a.kind = kind;
          a.nranks = n;
          a.count = count;
          a.chunkElems = chunk;
          EXPECT_EQ(coll::sim::check(coll::Algo::Ring, coll::sim::forAllRanks(a)), "")
              << coll::sim::caseName(coll::Algo::Ring, a);
        }
}

}  // namespace
}  // namespace gdr::paths::direct

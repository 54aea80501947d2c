// One process driving several communicators of one job (as an NCCL program
// drives one GPU each): created inside gdrGroupStart/gdrGroupEnd from one
// thread, then every collective issued on all of them inside one group.
// Host buffers here; tests/gpu/gpu_multidev_test.cc does the same on GPUs.
// Inputs and expected values come from bench/reference.h; outputs are
// poisoned before every call and checked element by element.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <functional>
#include <random>
#include <thread>
#include <vector>

#include "gdrcoll.h"
#include "reference.h"
#include "support/coll_check.h"

namespace {

const gdrDataType_t kTypes[] = {gdrInt8,   gdrUint8,    gdrInt32,   gdrUint32,  gdrInt64,
                                gdrUint64, gdrFloat16, gdrBfloat16, gdrFloat32, gdrFloat64};
const gdrRedOp_t kOps[] = {gdrSum, gdrProd, gdrMax, gdrMin, gdrAvg};
const size_t kCounts[] = {0, 1, 7, 1001};
constexpr char kPoison = 0x5c;

size_t tsize(gdrDataType_t t) {
  static const size_t s[] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8};
  return s[t];
}

unsigned freshSeed() {
  static std::mt19937 rng(std::random_device{}());
  return rng();
}

using Case = gdrtest::CollCase;

std::vector<char> inputs(const Case& c, int rank, size_t elems, size_t offset = 0) {
  std::vector<char> b(elems * tsize(c.type) + 1, kPoison);
  for (size_t i = 0; i < elems; ++i)
    gdrref::store(c.type, b.data(), i,
                  static_cast<double>(gdrref::inputValue(c.type, c.op, rank, offset + i, c.seed)));
  return b;
}

std::vector<char> poisoned(const Case& c, size_t elems) { return std::vector<char>(elems * tsize(c.type) + 1, kPoison); }

void expectAll(const char* what, const Case& c, int rank, const std::vector<char>& out, size_t elems,
               const std::function<double(size_t)>& want) {
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < elems; ++i)
    if (!gdrref::matches(c.type, gdrref::load(c.type, out.data(), i), want(i)) && !bad++) first = i;
  EXPECT_EQ(bad, 0u) << what << " rank " << rank << " type " << c.type << " op " << c.op << " count " << c.count
                     << " in-place " << c.inPlace << " root " << c.root << ": first wrong element " << first;
  EXPECT_EQ(out.back(), kPoison) << what << " rank " << rank << " wrote past its output";
}

// Each rank's buffers for one collective; issue() queues its call.
struct RankBufs {
  std::vector<char> in, out;
  std::vector<size_t> sc, sd, rc, rd;
};
using Issue = std::function<gdrResult_t(int rank, RankBufs&, gdrComm_t)>;

// One group holding rank r's call on comms[r] for every r.
void groupRound(const std::vector<gdrComm_t>& comms, std::vector<RankBufs>& bufs, const Issue& issue) {
  ASSERT_EQ(gdrGroupStart(), gdrSuccess);
  for (size_t r = 0; r < comms.size(); ++r)
    EXPECT_EQ(issue(static_cast<int>(r), bufs[r], comms[r]), gdrSuccess) << gdrGetLastError(comms[r]);
  ASSERT_EQ(gdrGroupEnd(), gdrSuccess) << gdrGetLastError(nullptr);
}

std::vector<gdrComm_t> makeComms(int n) {
  gdrUniqueId id;
  EXPECT_EQ(gdrGetUniqueId(&id), gdrSuccess);
  std::vector<gdrComm_t> comms(n, nullptr);
  EXPECT_EQ(gdrGroupStart(), gdrSuccess);
  for (int r = 0; r < n; ++r) EXPECT_EQ(gdrCommInitRank(&comms[r], n, id, r), gdrSuccess);
  for (int r = 0; r < n; ++r) EXPECT_NE(comms[r], nullptr);  // returned before the rendezvous
  EXPECT_EQ(gdrGroupEnd(), gdrSuccess) << gdrGetLastError(nullptr);
  for (int r = 0; r < n; ++r) {
    int rank = -1, size = -1;
    EXPECT_EQ(gdrCommRank(comms[r], &rank), gdrSuccess);
    EXPECT_EQ(gdrCommSize(comms[r], &size), gdrSuccess);
    EXPECT_EQ(rank, r);
    EXPECT_EQ(size, n);
  }
  return comms;
}

void destroyAll(const std::vector<gdrComm_t>& comms) {
  for (gdrComm_t c : comms) EXPECT_EQ(gdrCommDestroy(c), gdrSuccess);
}

void reductions(const std::vector<gdrComm_t>& comms) {
  const int n = static_cast<int>(comms.size());
  std::vector<RankBufs> b(n);
  for (gdrDataType_t t : kTypes)
    for (gdrRedOp_t op : kOps)
      for (size_t count : kCounts)
        for (bool ip : {false, true}) {
          Case c{t, op, count, ip, static_cast<int>(count % n), freshSeed()};
          auto want = [&](size_t i) { return gdrref::expectedReduce(t, op, i, n, c.seed); };
          for (int r = 0; r < n; ++r) b[r].in = inputs(c, r, count), b[r].out = ip ? b[r].in : poisoned(c, count);
          groupRound(comms, b, [&](int, RankBufs& x, gdrComm_t comm) {
            return gdrAllReduce(ip ? GDR_IN_PLACE : x.in.data(), x.out.data(), count, t, op, comm, nullptr);
          });
          for (int r = 0; r < n; ++r) expectAll("allreduce", c, r, b[r].out, count, want);

          for (int r = 0; r < n; ++r)
            b[r].in = inputs(c, r, count), b[r].out = ip && r == c.root ? b[r].in : poisoned(c, count);
          groupRound(comms, b, [&](int r, RankBufs& x, gdrComm_t comm) {
            const void* send = ip && r == c.root ? GDR_IN_PLACE : x.in.data();
            return gdrReduce(send, x.out.data(), count, t, op, c.root, comm, nullptr);
          });
          expectAll("reduce", c, c.root, b[c.root].out, count, want);
          for (int r = 0; r < n; ++r)
            if (r != c.root) {
              EXPECT_EQ(b[r].out, poisoned(c, count)) << "reduce wrote non-root rank " << r;
            }

          for (int r = 0; r < n; ++r) b[r].in = inputs(c, r, count * n), b[r].out = ip ? b[r].in : poisoned(c, count);
          groupRound(comms, b, [&](int, RankBufs& x, gdrComm_t comm) {
            return gdrReduceScatter(ip ? GDR_IN_PLACE : x.in.data(), x.out.data(), count, t, op, comm, nullptr);
          });
          for (int r = 0; r < n; ++r)
            expectAll("reducescatter", c, r, b[r].out, count,
                      [&](size_t i) { return gdrref::expectedReduce(t, op, r * count + i, n, c.seed); });
        }
}

void moves(const std::vector<gdrComm_t>& comms) {
  const int n = static_cast<int>(comms.size());
  std::vector<RankBufs> b(n);
  for (gdrDataType_t t : kTypes)
    for (size_t count : kCounts)
      for (bool ip : {false, true}) {
        Case c{t, gdrSum, count, ip, static_cast<int>((count + ip) % n), freshSeed()};
        auto value = [&](int rank, size_t i) { return static_cast<double>(gdrref::inputValue(t, gdrSum, rank, i, c.seed)); };
        for (int r = 0; r < n; ++r) b[r].out = r == c.root ? inputs(c, r, count) : poisoned(c, count);
        groupRound(comms, b, [&](int, RankBufs& x, gdrComm_t comm) {
          return gdrBroadcast(x.out.data(), count, t, c.root, comm, nullptr);
        });
        for (int r = 0; r < n; ++r) expectAll("broadcast", c, r, b[r].out, count, [&](size_t i) { return value(c.root, i); });

        const size_t eb = tsize(t);
        for (int r = 0; r < n; ++r) {
          b[r].in = inputs(c, r, count);
          b[r].out = poisoned(c, count * n);
          if (ip && count) std::memcpy(b[r].out.data() + r * count * eb, b[r].in.data(), count * eb);
        }
        groupRound(comms, b, [&](int, RankBufs& x, gdrComm_t comm) {
          return gdrAllGather(ip ? GDR_IN_PLACE : x.in.data(), count, x.out.data(), t, comm, nullptr);
        });
        for (int r = 0; r < n; ++r)
          expectAll("allgather", c, r, b[r].out, count * n,
                    [&](size_t i) { return value(static_cast<int>(i / count), i % count); });

        for (int r = 0; r < n; ++r) b[r].in = inputs(c, r, count * n), b[r].out = ip ? b[r].in : poisoned(c, count * n);
        groupRound(comms, b, [&](int, RankBufs& x, gdrComm_t comm) {
          return gdrAllToAll(ip ? GDR_IN_PLACE : x.in.data(), count, x.out.data(), t, comm, nullptr);
        });
        for (int r = 0; r < n; ++r)
          expectAll("alltoall", c, r, b[r].out, count * n,
                    [&](size_t i) { return value(static_cast<int>(i / count), r * count + i % count); });
      }
}

// All-to-all-v (rank s sends (s + d) % 3 * k elements to d; the count arrays
// go out of scope before gdrGroupEnd runs the call) and a send/recv ring with
// a message to oneself, all in one group.
void vectorAndP2P(const std::vector<gdrComm_t>& comms) {
  const int n = static_cast<int>(comms.size());
  std::vector<RankBufs> b(n), ring(n);
  std::vector<std::vector<char>> self(n);  // the message each rank sends itself
  for (size_t k : {size_t{0}, size_t{1}, size_t{333}}) {
    Case c{gdrInt32, gdrSum, k, false, 0, freshSeed()};
    auto cnt = [&](int s, int d) { return static_cast<size_t>((s + d) % 3) * k; };
    for (int r = 0; r < n; ++r) {
      size_t stot = 0, rtot = 0;
      for (int d = 0; d < n; ++d) stot += cnt(r, d), rtot += cnt(d, r);
      b[r].in = inputs(c, r, stot);
      b[r].out = poisoned(c, rtot);
      ring[r].in = inputs(c, r, k);
      ring[r].out = poisoned(c, k);
      self[r] = poisoned(c, k);
    }
    ASSERT_EQ(gdrGroupStart(), gdrSuccess);
    for (int r = 0; r < n; ++r) {
      std::vector<size_t> sc(n), sd(n), rc(n), rd(n);
      for (int d = 0, so = 0, ro = 0; d < n; ++d) {
        sc[d] = cnt(r, d), sd[d] = so, so += static_cast<int>(sc[d]);
        rc[d] = cnt(d, r), rd[d] = ro, ro += static_cast<int>(rc[d]);
      }
      EXPECT_EQ(gdrAllToAllv(b[r].in.data(), sc.data(), sd.data(), b[r].out.data(), rc.data(), rd.data(), gdrInt32,
                             comms[r], nullptr),
                gdrSuccess);
      EXPECT_EQ(gdrSend(ring[r].in.data(), k, gdrInt32, (r + 1) % n, comms[r], nullptr), gdrSuccess);
      EXPECT_EQ(gdrRecv(ring[r].out.data(), k, gdrInt32, (r + n - 1) % n, comms[r], nullptr), gdrSuccess);
      EXPECT_EQ(gdrSend(ring[r].in.data(), k, gdrInt32, r, comms[r], nullptr), gdrSuccess);
      EXPECT_EQ(gdrRecv(self[r].data(), k, gdrInt32, r, comms[r], nullptr), gdrSuccess);
    }
    ASSERT_EQ(gdrGroupEnd(), gdrSuccess) << gdrGetLastError(nullptr);
    for (int r = 0; r < n; ++r) {
      size_t ro = 0;
      for (int s = 0; s < n; ++s) {
        size_t so = 0;
        for (int d = 0; d < r; ++d) so += cnt(s, d);
        for (size_t j = 0; j < cnt(s, r); ++j)
          EXPECT_EQ(gdrref::load(gdrInt32, b[r].out.data(), ro + j), gdrref::inputValue(gdrInt32, gdrSum, s, so + j, c.seed))
              << "alltoallv rank " << r << " from " << s << " element " << j;
        ro += cnt(s, r);
      }
      const int prev = (r + n - 1) % n;
      expectAll("sendrecv ring", c, r, ring[r].out, k,
                [&](size_t i) { return static_cast<double>(gdrref::inputValue(gdrInt32, gdrSum, prev, i, c.seed)); });
      for (size_t i = 0; i < k; ++i)
        EXPECT_EQ(gdrref::load(gdrInt32, self[r].data(), i), gdrref::inputValue(gdrInt32, gdrSum, r, i, c.seed));
    }
  }
  ASSERT_EQ(gdrGroupStart(), gdrSuccess);
  for (gdrComm_t comm : comms) EXPECT_EQ(gdrBarrier(comm, nullptr), gdrSuccess);
  ASSERT_EQ(gdrGroupEnd(), gdrSuccess) << gdrGetLastError(nullptr);
}

class GroupMultiComm : public ::testing::TestWithParam<int> {};

TEST_P(GroupMultiComm, EveryCollectiveFromOneThread) {
  auto comms = makeComms(GetParam());
  reductions(comms);
  moves(comms);
  vectorAndP2P(comms);
  destroyAll(comms);
}

INSTANTIATE_TEST_SUITE_P(Ranks, GroupMultiComm, ::testing::Values(2, 3));

// Work queued in the same group as the inits runs after they connect.
TEST(GroupMultiCommInit, CollectiveInTheInitGroup) {
  const int n = 2;
  gdrUniqueId id;
  ASSERT_EQ(gdrGetUniqueId(&id), gdrSuccess);
  std::vector<gdrComm_t> comms(n);
  std::vector<std::vector<int64_t>> v(n, std::vector<int64_t>(100));
  ASSERT_EQ(gdrGroupStart(), gdrSuccess);
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(gdrCommInitRank(&comms[r], n, id, r), gdrSuccess);
    for (size_t i = 0; i < v[r].size(); ++i) v[r][i] = static_cast<int64_t>(i) * (r + 1);
    EXPECT_EQ(gdrAllReduce(GDR_IN_PLACE, v[r].data(), v[r].size(), gdrInt64, gdrSum, comms[r], nullptr), gdrSuccess);
  }
  ASSERT_EQ(gdrGroupEnd(), gdrSuccess) << gdrGetLastError(nullptr);
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < v[r].size(); ++i) ASSERT_EQ(v[r][i], static_cast<int64_t>(i) * 3);
  destroyAll(comms);
}

// A bad rank inside the init group: that call fails at once, gdrGroupEnd
// fails without waiting for the rank that will never come, and the other
// handle is a communicator in the error state (calls fail, destroy works).
TEST(GroupMultiCommInit, BadRankFailsTheGroupWithoutHanging) {
  gdrUniqueId id;
  ASSERT_EQ(gdrGetUniqueId(&id), gdrSuccess);
  gdrComm_t good = nullptr, bad = reinterpret_cast<gdrComm_t>(0x1);
  ASSERT_EQ(gdrGroupStart(), gdrSuccess);
  EXPECT_EQ(gdrCommInitRank(&good, 2, id, 0), gdrSuccess);
  EXPECT_EQ(gdrCommInitRank(&bad, 2, id, 5), gdrInvalidArgument);
  EXPECT_EQ(bad, nullptr);
  EXPECT_NE(std::string(gdrGetLastError(nullptr)).find("rank 5"), std::string::npos) << gdrGetLastError(nullptr);
  EXPECT_EQ(gdrGroupEnd(), gdrInvalidArgument);
  EXPECT_NE(std::string(gdrGetLastError(nullptr)).find("gdrCommInitRank"), std::string::npos);
  ASSERT_NE(good, nullptr);
  gdrResult_t async = gdrSuccess;
  EXPECT_EQ(gdrCommGetAsyncError(good, &async), gdrSuccess);
  EXPECT_EQ(async, gdrInvalidArgument);
  int x = 1;
  EXPECT_EQ(gdrAllReduce(&x, &x, 1, gdrInt32, gdrSum, good, nullptr), gdrInvalidArgument);
  EXPECT_NE(std::string(gdrGetLastError(good)).find("not created"), std::string::npos) << gdrGetLastError(good);
  EXPECT_EQ(gdrCommDestroy(good), gdrSuccess);
}

// Ranks that disagree on a collective inside a multi-communicator group get
// an error from gdrGroupEnd, not a hang.
TEST(GroupMultiCommInit, MismatchedCountsFailTheGroup) {
  auto comms = makeComms(2);
  std::vector<int32_t> a(64, 1), b(64, 1);
  ASSERT_EQ(gdrGroupStart(), gdrSuccess);
  EXPECT_EQ(gdrAllReduce(a.data(), a.data(), 10, gdrInt32, gdrSum, comms[0], nullptr), gdrSuccess);
  EXPECT_EQ(gdrAllReduce(b.data(), b.data(), 11, gdrInt32, gdrSum, comms[1], nullptr), gdrSuccess);
  EXPECT_NE(gdrGroupEnd(), gdrSuccess);
  EXPECT_STRNE(gdrGetLastError(nullptr), "");
  destroyAll(comms);
}

// Two forked processes, each driving two communicators of one 4-rank job.
TEST(GroupMultiCommInit, TwoProcessesOfTwoCommsEach) {
  const int procs = 2, per = 2, n = procs * per;
  std::vector<pid_t> pids;
  std::vector<int> pipes;
  for (int p = 0; p < procs; ++p) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
      close(fds[1]);
      alarm(120);  // a hang ends the child; the parent sees the signal
      gdrUniqueId id;
      if (read(fds[0], &id, sizeof(id)) != static_cast<ssize_t>(sizeof(id))) _exit(80);
      std::vector<gdrComm_t> comms(per);
      if (gdrGroupStart() != gdrSuccess) _exit(81);
      for (int i = 0; i < per; ++i)
        if (gdrCommInitRank(&comms[i], n, id, p * per + i) != gdrSuccess) _exit(82);
      if (gdrGroupEnd() != gdrSuccess) _exit(83);
      for (size_t count : {size_t{0}, size_t{5}, size_t{4097}}) {
        std::vector<std::vector<int64_t>> v(per, std::vector<int64_t>(count));
        std::vector<std::vector<int64_t>> g(per, std::vector<int64_t>(count * n, -1));
        if (gdrGroupStart() != gdrSuccess) _exit(84);
        for (int i = 0; i < per; ++i) {
          const int rank = p * per + i;
          for (size_t j = 0; j < count; ++j) v[i][j] = static_cast<int64_t>(j) * 10 + rank;
          if (gdrAllGather(v[i].data(), count, g[i].data(), gdrInt64, comms[i], nullptr) != gdrSuccess) _exit(85);
          if (gdrAllReduce(GDR_IN_PLACE, v[i].data(), count, gdrInt64, gdrSum, comms[i], nullptr) != gdrSuccess)
            _exit(86);
        }
        if (gdrGroupEnd() != gdrSuccess) {
          std::fprintf(stderr, "gdrGroupEnd: %s\n", gdrGetLastError(nullptr));
          _exit(87);
        }
        for (int i = 0; i < per; ++i)
          for (size_t j = 0; j < count; ++j) {
            if (v[i][j] != static_cast<int64_t>(j) * 10 * n + n * (n - 1) / 2) _exit(88);
            for (int r = 0; r < n; ++r)
              if (g[i][r * count + j] != static_cast<int64_t>(j) * 10 + r) _exit(89);
          }
      }
      for (gdrComm_t c : comms)
        if (gdrCommDestroy(c) != gdrSuccess) _exit(90);
      _exit(0);
    }
    close(fds[0]);
    pids.push_back(pid);
    pipes.push_back(fds[1]);
  }
  gdrUniqueId id;
  ASSERT_EQ(gdrGetUniqueId(&id), gdrSuccess);
  for (int fd : pipes) {
    EXPECT_EQ(write(fd, &id, sizeof(id)), static_cast<ssize_t>(sizeof(id)));
    close(fd);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "child " << pid << (WIFSIGNALED(status) ? " killed by signal " : " exited ")
        << (WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
  }
}

}  // namespace

// A random soak: N collectives of every kind, type, op, size and root, in
// place and not, single and in groups, on host buffers at np 3 (forked
// ranks, TCP bootstrap), every element checked. Seven tenths run on the
// default transport (shared memory here); the rest on a second
// communicator over sockets with GDR_ENCRYPT=1 (the crypto pool's threads),
// including groups that span both communicators (one worker thread per
// communicator). Rank 0 signals itself (SIGUSR1) now and then, so the
// status writer thread reads the boards while collectives run. Built under
// ThreadSanitizer by scripts/test.sh, where any report fails the run.
//
//   gdr-soak [--ops N] [--seed S]
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "support/coll_check.h"
#include "support/multiproc.h"

namespace {

using gdrtest::CollCase;

const gdrDataType_t kTypes[] = {gdrInt8,    gdrUint8,   gdrInt32,      gdrUint32,
                                gdrInt64,   gdrUint64,  gdrFloat16,    gdrBfloat16,
                                gdrFloat32, gdrFloat64, gdrFloat8e4m3, gdrFloat8e5m2};

size_t randomCount(std::mt19937_64& g) {
  const unsigned pick = g() % 100;
  if (pick < 70) return g() % 65;         // latency-sized, 0 included
  if (pick < 95) return 65 + g() % 4032;  // medium
  return 4097 + g() % 60000;              // a few chunks' worth
}

// An all-reduce on each communicator of `comms` and a broadcast on the
// first, all in one group (int32: exact).
void groupCase(const std::vector<gdrComm_t>& comms, int rank, int n, std::mt19937_64& g) {
  const size_t count = 1 + g() % 3000;
  const int root = static_cast<int>(g() % n);
  const int salt = static_cast<int>(g() % 1000);
  std::vector<std::vector<int32_t>> in(comms.size()), out(comms.size());
  std::vector<int32_t> b(count);
  for (size_t c = 0; c < comms.size(); ++c) {
    in[c].resize(count);
    out[c].assign(count, -1);
    for (size_t i = 0; i < count; ++i)
      in[c][i] = rank * 3 + static_cast<int32_t>(i % 11) + salt + static_cast<int>(c);
  }
  for (size_t i = 0; i < count; ++i) b[i] = rank == root ? salt * 7 + static_cast<int32_t>(i) : -1;
  gdrResult_t r = gdrGroupStart();
  for (size_t c = 0; c < comms.size(); ++c)
    if (r == gdrSuccess)
      r = gdrAllReduce(in[c].data(), out[c].data(), count, gdrInt32, gdrSum, comms[c], nullptr);
  if (r == gdrSuccess) r = gdrBroadcast(b.data(), count, gdrInt32, root, comms[0], nullptr);
  gdrResult_t e = gdrGroupEnd();
  CHILD_CHECK(r == gdrSuccess && e == gdrSuccess, "group: %d %d: %s", r, e,
              gdrGetLastError(nullptr));
  for (size_t c = 0; c < comms.size(); ++c)
    for (size_t i = 0; i < count; ++i) {
      int32_t want = 0;
      for (int q = 0; q < n; ++q)
        want += q * 3 + static_cast<int32_t>(i % 11) + salt + static_cast<int>(c);
      if (out[c][i] != want) {
        CHILD_CHECK(out[c][i] == want, "group all-reduce %zu element %zu: %d want %d", c, i,
                    out[c][i], want);
        break;
      }
    }
  for (size_t i = 0; i < count; ++i)
    if (b[i] != salt * 7 + static_cast<int32_t>(i)) {
      CHILD_CHECK(false, "group broadcast element %zu: %d", i, b[i]);
      break;
    }
}

void oneOp(gdrComm_t comm, const std::vector<gdrComm_t>& group, int rank, int n,
           std::mt19937_64& g) {
  CollCase c;
  c.type = kTypes[g() % (sizeof(kTypes) / sizeof(kTypes[0]))];
  c.op = static_cast<gdrRedOp_t>(g() % gdrNumOps);
  c.count = randomCount(g);
  c.inPlace = g() % 3 == 0;
  c.root = static_cast<int>(g() % n);
  c.seed = static_cast<unsigned>(g());
  using Check = void (*)(gdrComm_t, int, int, const CollCase&);
  static const Check kChecks[] = {
      gdrtest::checkAllReduce,     gdrtest::checkAllReduce, gdrtest::checkReduce,
      gdrtest::checkReduceScatter, gdrtest::checkBroadcast, gdrtest::checkAllGather,
      gdrtest::checkAllToAll,      gdrtest::checkAllToAllv, gdrtest::checkSendRecvRing};
  constexpr unsigned kSingle = sizeof(kChecks) / sizeof(kChecks[0]);
  const unsigned pick = static_cast<unsigned>(g() % (kSingle + 2));
  if (pick < kSingle)
    kChecks[pick](comm, rank, n, c);
  else if (pick == kSingle)
    groupCase(group, rank, n, g);
  else
    CHILD_CHECK(gdrBarrier(comm, nullptr) == gdrSuccess, "barrier: %s", gdrGetLastError(comm));
}

int soak(int rank, int n, gdrComm_t comm, long ops, unsigned long long seed) {
  std::mt19937_64 g(seed);
  const long first = ops * 7 / 10;
  for (long i = 0; i < first && !gdrtest::childFailures(); ++i) {
    oneOp(comm, {comm}, rank, n, g);
    if (rank == 0 && i % 500 == 499) raise(SIGUSR1);
    if (rank == 0 && i % 1000 == 999)
      std::printf("soak: %ld of %ld\n", i + 1, ops), std::fflush(stdout);
  }
  // The second communicator: sockets, sealed. Its id travels over the first.
  gdrUniqueId id{};
  if (rank == 0 && gdrGetUniqueId(&id) != gdrSuccess) return 3;
  if (gdrBroadcast(&id, sizeof(id), gdrUint8, 0, comm, nullptr) != gdrSuccess) return 4;
  setenv("GDR_TRANSPORT", "socket", 1);
  setenv("GDR_ENCRYPT", "1", 1);
  gdrComm_t sealed = nullptr;
  if (gdrCommInitRank(&sealed, n, id, rank) != gdrSuccess) {
    std::fprintf(stderr, "[rank %d] the sealed communicator: %s\n", rank, gdrGetLastError(nullptr));
    return 5;
  }
  for (long i = first; i < ops && !gdrtest::childFailures(); ++i) {
    oneOp(sealed, {sealed, comm}, rank, n, g);
    if (rank == 0 && i % 500 == 499) raise(SIGUSR1);
    if (rank == 0 && i % 1000 == 999)
      std::printf("soak: %ld of %ld (sealed)\n", i + 1, ops), std::fflush(stdout);
  }
  gdrCommDestroy(sealed);
  return gdrtest::childFailures() ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  long ops = 10000;
  unsigned long long seed = std::random_device{}();
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--ops")) ops = std::atol(argv[i + 1]);
    if (!std::strcmp(argv[i], "--seed")) seed = std::strtoull(argv[i + 1], nullptr, 10);
  }
  char dir[] = "/tmp/gdr-soak-XXXXXX";
  if (!mkdtemp(dir)) return 2;
  std::printf("soak: %ld collectives at np 3, seed %llu\n", ops, seed);
  std::fflush(stdout);
  auto exits = gdrtest::runRanks(
      3, [&](int rank, int n, gdrComm_t comm) { return soak(rank, n, comm, ops, seed); },
      {{"GDR_TIMEOUT_MS", "120000"}, {"GDR_STATUS_DIR", dir}}, 1500);
  std::string why;
  const bool ok = gdrtest::allOk(exits, &why);
  std::string rm = std::string("rm -rf ") + dir;
  if (system(rm.c_str()) != 0) std::fprintf(stderr, "soak: could not remove %s\n", dir);
  std::printf("soak: %s (seed %llu)%s%s\n", ok ? "PASS" : "FAIL", seed, ok ? "" : ": ",
              why.c_str());
  return ok ? 0 : 1;
}

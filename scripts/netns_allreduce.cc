// The two-rank all-reduce timer scripts/netns-bench.sh runs, one rank per
// network namespace. It uses gdrcoll's TCP bootstrap (gdrGetUniqueId, handed
// over through a file: the filesystem is shared, the network is not), since
// under mpirun a rank in another namespace cannot reach the launcher (Open
// MPI 4.1's PMIx connects over loopback TCP: "OPAL ERROR: Unreachable").
//   netns_allreduce RANK IDFILE MIN MAX CSV
// Rank 0 writes the id; rank 1 waits for it. float32 sum, sizes doubling;
// per size max(5, min(200, 256 MiB / size)) timed iterations after as many
// warm-up ones (at most 20), ranks aligned by a 1-element all-reduce before
// the timing; the last result is checked. Rank 0 writes "size,avg_us" lines.
#include <gdrcoll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

static void check(gdrResult_t r, const char* what) {
  if (r != gdrSuccess) {
    std::fprintf(stderr, "netns_allreduce: %s: %s\n", what, gdrGetErrorString(r));
    std::exit(1);
  }
}

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s RANK IDFILE MIN_BYTES MAX_BYTES CSV\n", argv[0]);
    return 2;
  }
  int rank = std::atoi(argv[1]);
  const char* idFile = argv[2];
  size_t minB = std::strtoull(argv[3], nullptr, 0), maxB = std::strtoull(argv[4], nullptr, 0);
  gdrUniqueId id;
  if (rank == 0) {
    check(gdrGetUniqueId(&id), "gdrGetUniqueId");
    std::string tmp = std::string(idFile) + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f || std::fwrite(&id, sizeof(id), 1, f) != 1 || std::fclose(f) != 0) return 1;
    std::rename(tmp.c_str(), idFile);
  } else {
    for (int i = 0; i < 3000; ++i) {
      FILE* f = std::fopen(idFile, "rb");
      if (f) {
        bool ok = std::fread(&id, sizeof(id), 1, f) == 1;
        std::fclose(f);
        if (ok) break;
      }
      usleep(10000);
    }
  }
  gdrComm_t comm;
  check(gdrCommInitRank(&comm, 2, id, rank), "gdrCommInitRank");
  FILE* csv = rank == 0 ? std::fopen(argv[5], "w") : nullptr;
  if (csv) std::fprintf(csv, "size,avg_us\n");
  std::vector<float> in(maxB / 4), out(maxB / 4), one(1);
  for (size_t bytes = minB; bytes <= maxB; bytes *= 2) {
    size_t n = bytes / 4;
    for (size_t i = 0; i < n; ++i) in[i] = static_cast<float>((i + rank) % 1024);
    int iters = static_cast<int>(std::max<size_t>(5, std::min<size_t>(200, (256u << 20) / bytes)));
    for (int i = 0; i < std::min(20, iters); ++i) check(gdrAllReduce(in.data(), out.data(), n, gdrFloat32, gdrSum, comm, nullptr), "warm-up");
    check(gdrAllReduce(one.data(), one.data(), 1, gdrFloat32, gdrSum, comm, nullptr), "align");
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) check(gdrAllReduce(in.data(), out.data(), n, gdrFloat32, gdrSum, comm, nullptr), "all-reduce");
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / iters;
    for (size_t i = 0; i < n; ++i)
      if (out[i] != static_cast<float>(i % 1024 + (i + 1) % 1024)) {
        std::fprintf(stderr, "netns_allreduce: wrong result at %zu of %zu bytes\n", i, bytes);
        return 1;
      }
    if (csv) std::fprintf(csv, "%zu,%.2f\n", bytes, us);
  }
  if (csv) std::fclose(csv);
  check(gdrCommDestroy(comm), "gdrCommDestroy");
  return 0;
}

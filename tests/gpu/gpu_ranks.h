// The harness the fused-kernel GPU tests share: the ranks this process
// drives (one per process under mpirun, where np 2 may share one GPU; or,
// with --local N under np 1, N communicators of this one process on its GPU,
// made in a group, whose kernels run side by side), the same random inputs
// on every process, the host reference and the counters of checks.
#pragma once

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gdrcoll.h"
#include "gdrcoll_mpi.h"
#include "gpu_mpi_check.h"
#include "gpu_values.h"

namespace gdrtest::ranks {

inline int gProc = 0, gProcs = 1;  // MPI
inline int gN = 1;                 // ranks of the communicator
inline long gFailures = 0, gChecks = 0;
inline uint64_t gSeed = 0;

// A rank this process drives.
struct Rank {
  int id = 0;
  gdrComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
};
inline std::vector<Rank> gRanks;

using gdrtest::DevBuf;

// Rank r's input of case `id`: the same on every process, so each one
// builds the reference without exchanging inputs.
inline std::vector<char> inputOf(int r, uint64_t id, gdrDataType_t t, size_t count) {
  std::mt19937_64 rng(gSeed ^ (id * 0x9E3779B97F4A7C15ull) ^ (static_cast<uint64_t>(r + 1) << 48));
  return gdrtest::randomValues(t, count, rng);
}
inline std::vector<char> reference(const std::vector<std::vector<char>>& in, size_t count,
                                   gdrDataType_t t, gdrRedOp_t op) {
  std::vector<const char*> src;
  for (const auto& v : in) src.push_back(v.data());
  return gdrtest::reduceRefRoundedOnce(src, count, t, op);
}

inline void check(const std::string& what, const Rank& r, gdrDataType_t t, gdrRedOp_t op,
                  size_t count, bool ip, const char* got, const char* want) {
  ++gChecks;
  if (gdrtest::mismatches(what.c_str(), r.id, gN, t, op, count, ip, got, want, count)) ++gFailures;
}
inline void expect(bool ok, const std::string& what) {
  ++gChecks;
  if (!ok) {
    ++gFailures;
    std::fprintf(stderr, "process %d: %s\n", gProc, what.c_str());
  }
}

// One call on every rank this process drives (a group when it drives
// several: one thread issues them all).
template <typename F>
void everyRank(F&& issue) {
  if (gRanks.size() > 1) GDR_OK(gdrGroupStart());
  for (size_t k = 0; k < gRanks.size(); ++k) issue(gRanks[k], k);
  if (gRanks.size() > 1) GDR_OK(gdrGroupEnd());
}
inline void syncAll() {
  for (const Rank& r : gRanks) CUDA_OK(cudaStreamSynchronize(r.stream));
}

struct Bufs {
  std::unique_ptr<DevBuf> in, out;
};
inline std::vector<Bufs> makeBufs(size_t bytes) {
  std::vector<Bufs> b(gRanks.size());
  for (auto& x : b) {
    x.in = std::make_unique<DevBuf>(bytes);
    x.out = std::make_unique<DevBuf>(bytes);
  }
  return b;
}

// Opens the ranks: one per process under mpirun, or `local` communicators
// of this one process (made in a group).
inline void openRanks(int local) {
  gRanks.assign(local > 0 ? local : 1, Rank{});
  if (local > 0) {
    gN = local;
    gdrUniqueId id;
    GDR_OK(gdrGetUniqueId(&id));
    GDR_OK(gdrGroupStart());
    for (int r = 0; r < gN; ++r) {
      gRanks[r].id = r;
      CUDA_OK(cudaStreamCreateWithFlags(&gRanks[r].stream, cudaStreamNonBlocking));
      GDR_OK(gdrCommInitRank(&gRanks[r].comm, gN, id, r));
    }
    GDR_OK(gdrGroupEnd());
  } else {
    gN = gProcs;
    gRanks[0].id = gProc;
    CUDA_OK(cudaStreamCreateWithFlags(&gRanks[0].stream, cudaStreamNonBlocking));
    GDR_OK(gdrCommInitMPI(&gRanks[0].comm, MPI_COMM_WORLD));
  }
  // The first device operation sets up the IPC memory: a collective step.
  everyRank([](const Rank& r, size_t) { GDR_OK(gdrBarrier(r.comm, r.stream)); });
  syncAll();
}
inline void closeRanks() {
  for (Rank& r : gRanks) {
    GDR_OK(gdrCommDestroy(r.comm));
    CUDA_OK(cudaStreamDestroy(r.stream));
  }
  gRanks.clear();
}

// MPI up, this process's GPU chosen (one per process of a host), the seed
// shared, --local N read from the arguments. False when the test ends here,
// with its exit status in *rc: 77 without a GPU (CTest's skip), 2 for
// --local under several processes.
inline bool start(int* argc, char*** argv, int* local, int* rc) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &gProc);
  gdrtest::gMpiRank = gProc;
  MPI_Comm_size(MPI_COMM_WORLD, &gProcs);
  *local = 0;
  for (int i = 1; i + 1 < *argc; ++i)
    if (std::string((*argv)[i]) == "--local") *local = std::atoi((*argv)[i + 1]);
  int ndev = 0;
  *rc = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    if (gProc == 0) std::printf("skipped: no CUDA device\n");
    *rc = 77;
  } else if (*local > 0 && gProcs != 1) {
    if (gProc == 0) std::fprintf(stderr, "--local N runs under one process\n");
    *rc = 2;
  }
  if (*rc) {
    MPI_Finalize();
    return false;
  }
  CUDA_OK(cudaSetDevice(gProc % ndev));
  if (gProc == 0)
    gSeed = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  MPI_Bcast(&gSeed, sizeof gSeed, MPI_BYTE, 0, MPI_COMM_WORLD);
  return true;
}

// A named section's verdict over every process, printed by process 0.
template <typename F>
void section(const char* name, F&& fn) {
  const long before = gFailures;
  fn();
  long f = gFailures - before, tot = 0;
  MPI_Allreduce(&f, &tot, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (gProc == 0) std::printf("[%s] %s\n", tot ? "FAIL" : " ok ", name);
  std::fflush(stdout);
}

// Every process's failures and checks, summed; the exit status.
inline int verdict(const char* what) {
  long tot = 0, checks = 0;
  MPI_Allreduce(&gFailures, &tot, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&gChecks, &checks, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (gProc == 0) std::printf("%s: %ld checks, %ld failed (%d ranks)\n", what, checks, tot, gN);
  return tot ? 1 : 0;
}

}  // namespace gdrtest::ranks

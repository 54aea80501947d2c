// One group, one communicator, two paths: a device all-reduce on the staged
// path (GDR_TRANSPORT=socket) and then a host all-reduce. The staged path's
// progress thread drives the communicator's endpoints, so the host
// all-reduce must wait for it, inside a group as outside. Without that rule
// the two threads interleave messages on the same endpoints: a mismatch
// error, a timeout or wrong sums. Both results are checked element by
// element, with fresh random inputs each round.
//
// Public API only (gdrcoll.h, gdrcoll_mpi.h), so it builds against any
// version of the library: scripts/gpu/mixed-group.sh builds and runs it.
// CTest gpu_mixed_group (mpirun -np 2).
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "gdrcoll.h"
#include "gdrcoll_mpi.h"

static int gRank = 0, gSize = 1, gFail = 0;
#define OK(x)                                                                                    \
  do {                                                                                           \
    if (!(x)) {                                                                                  \
      std::fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", gRank, __FILE__, __LINE__, #x); \
      ++gFail;                                                                                   \
    }                                                                                            \
  } while (0)
#define CU(x) OK((x) == cudaSuccess)

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &gRank);
  MPI_Comm_size(MPI_COMM_WORLD, &gSize);
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    if (gRank == 0) std::printf("skipped: no CUDA device\n");
    MPI_Finalize();
    return 77;
  }
  CU(cudaSetDevice(gRank % ndev));
  setenv("GDR_TRANSPORT", "socket", 1);          // the staged path for device buffers
  setenv("GDR_STAGED_CHUNK_BYTES", "65536", 0);  // many segments: a long staged job
  if (!std::getenv("GDR_TIMEOUT_MS")) setenv("GDR_TIMEOUT_MS", "20000", 1);  // a hang fails
  cudaStream_t s;
  CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  gdrComm_t comm;
  OK(gdrCommInitMPI(&comm, MPI_COMM_WORLD) == gdrSuccess);
  if (gFail) MPI_Abort(MPI_COMM_WORLD, 1);

  const size_t nDev = (8u << 20) / 4 + 5;  // 8 MiB + 20 B of uint32: 129 segments
  const size_t nHost = (1u << 20) / 4 + 3;
  uint32_t *dIn, *dOut;
  CU(cudaMalloc(&dIn, nDev * 4));
  CU(cudaMalloc(&dOut, nDev * 4));
  std::vector<uint32_t> hIn(nHost), hOut(nHost), devIn(nDev), devOut(nDev);
  std::vector<uint32_t> allDev(nDev * gSize), allHost(nHost * gSize);
  std::mt19937 rng(std::random_device{}() + 7919u * gRank);
  const int rounds = 6;
  gdrResult_t lastEnd = gdrSuccess;
  for (int round = 0; round < rounds; ++round) {
    for (auto& v : devIn) v = rng() & 0xffffu;
    for (auto& v : hIn) v = rng() & 0xffffu;
    CU(cudaMemcpy(dIn, devIn.data(), nDev * 4, cudaMemcpyHostToDevice));
    CU(cudaMemset(dOut, 0xff, nDev * 4));  // poisoned
    for (auto& v : hOut) v = 0xffffffffu;

    OK(gdrGroupStart() == gdrSuccess);
    OK(gdrAllReduce(dIn, dOut, nDev, gdrUint32, gdrSum, comm, s) == gdrSuccess);
    OK(gdrAllReduce(hIn.data(), hOut.data(), nHost, gdrUint32, gdrSum, comm, nullptr) ==
       gdrSuccess);
    const gdrResult_t end = gdrGroupEnd();
    if (end != gdrSuccess) {
      std::fprintf(stderr, "rank %d: round %d: gdrGroupEnd: %s: %s\n", gRank, round,
                   gdrGetErrorString(end), gdrGetLastError(comm));
      lastEnd = end;
      ++gFail;
      break;
    }
    CU(cudaStreamSynchronize(s));
    CU(cudaMemcpy(devOut.data(), dOut, nDev * 4, cudaMemcpyDeviceToHost));

    // The reference: every rank's inputs, summed here.
    MPI_Allgather(devIn.data(), static_cast<int>(nDev), MPI_UINT32_T, allDev.data(),
                  static_cast<int>(nDev), MPI_UINT32_T, MPI_COMM_WORLD);
    MPI_Allgather(hIn.data(), static_cast<int>(nHost), MPI_UINT32_T, allHost.data(),
                  static_cast<int>(nHost), MPI_UINT32_T, MPI_COMM_WORLD);
    size_t badDev = 0, badHost = 0;
    for (size_t i = 0; i < nDev; ++i) {
      uint32_t want = 0;
      for (int r = 0; r < gSize; ++r) want += allDev[r * nDev + i];
      badDev += devOut[i] != want;
    }
    for (size_t i = 0; i < nHost; ++i) {
      uint32_t want = 0;
      for (int r = 0; r < gSize; ++r) want += allHost[r * nHost + i];
      badHost += hOut[i] != want;
    }
    OK(badDev == 0);
    OK(badHost == 0);
    if (badDev || badHost)
      std::fprintf(stderr, "rank %d: round %d: %zu bad device elements, %zu bad host elements\n",
                   gRank, round, badDev, badHost);
    if (gFail) break;
  }
  // A failed round leaves the communicator in the error state; the peer may
  // wait in its own group until its timeout, so no collective teardown.
  int anyFail = 0;
  MPI_Allreduce(&gFail, &anyFail, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (anyFail == 0) gdrCommDestroy(comm);
  cudaFree(dIn);
  cudaFree(dOut);
  cudaStreamDestroy(s);
  if (gRank == 0)
    std::printf(
        "mixed group checks: %s (%d rounds of a device all-reduce then a host all-reduce in one "
        "group%s)\n",
        anyFail ? "FAILED" : "passed", rounds, lastEnd != gdrSuccess ? ", a group failed" : "");
  MPI_Finalize();
  return anyFail ? 1 : 0;
}

// GPU checks of the staged path (GDR_TRANSPORT=socket) that the shared GPU
// suite does not make: the caller's thread is not blocked by a device
// collective (it returns while a kernel queued before it still runs), that
// kernel's result is seen and work queued after sees the collective's;
// multi-segment all-reduce / all-gather / send-recv at a tiny segment size;
// and a rank that never joins makes the other's stream come free with
// gdrCommGetAsyncError = gdrTimeout instead of hanging.
// CTest gpu_staged_check (mpirun -np 2); also run by scripts/gpu/staged.sh and sealed.sh.
#include <cuda_runtime.h>  // the typed cudaMalloc overloads
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "gdrcoll.h"
#include "gdrcoll_mpi.h"
#include "gpu_kernels.h"

static int gRank = 0, gSize = 1, gFail = 0;
#define OK(x)                                                                              \
  do {                                                                                     \
    if (!(x)) {                                                                            \
      std::fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", gRank, __FILE__, __LINE__, #x); \
      ++gFail;                                                                             \
    }                                                                                      \
  } while (0)
#define CU(x) OK((x) == cudaSuccess)
#define GDR(x) OK((x) == gdrSuccess)

static std::vector<uint32_t> get(const uint32_t* d, size_t n) {
  std::vector<uint32_t> h(n);
  CU(cudaMemcpy(h.data(), d, n * 4, cudaMemcpyDeviceToHost));
  return h;
}

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
  setenv("GDR_TRANSPORT", "socket", 1);
  setenv("GDR_STAGED_CHUNK_BYTES", "65536", 1);  // many segments below
  cudaStream_t s;
  CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  gdrComm_t comm;
  GDR(gdrCommInitMPI(&comm, MPI_COMM_WORLD));

  // 1. Not blocked, ordered: a ~1 s kernel, then the all-reduce, then +1.
  const size_t n = (1u << 20) + 3;  // 4 MiB + 12 B: 65 segments
  uint32_t *d, *o;
  CU(cudaMalloc(&d, n * 4));
  CU(cudaMalloc(&o, n * 4));
  CU(cudaMemsetAsync(o, 0xff, n * 4, s));
  CU(testSpinThenFill(d, n, 7u + gRank, 2000000000LL, s));
  const double t0 = MPI_Wtime();
  GDR(gdrAllReduce(d, o, n, gdrUint32, gdrSum, comm, s));
  const double callUs = (MPI_Wtime() - t0) * 1e6;
  const cudaError_t q = cudaStreamQuery(s);
  OK(q == cudaErrorNotReady);  // the call returned while the kernel before it still ran
  CU(testAddOne(reinterpret_cast<int32_t*>(o), n, s));
  CU(cudaStreamSynchronize(s));
  uint32_t want = 1;
  for (int r = 0; r < gSize; ++r) want += 7u + r;
  std::vector<uint32_t> h = get(o, n);
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += h[i] != want;
  OK(bad == 0);
  std::printf("rank %d: all-reduce call returned in %.0f us behind a ~1 s kernel (stream %s); %zu bad elements\n",
              gRank, callUs, q == cudaErrorNotReady ? "still busy" : "already idle", bad);

  // 2. All-gather (multi-segment, strided copies) and a send/recv ring.
  const size_t m = 100003;
  uint32_t* ag;
  CU(cudaMalloc(&ag, m * 4 * gSize));
  CU(cudaMemsetAsync(ag, 0, m * 4 * gSize, s));
  CU(testSpinThenFill(d, m, 100u + gRank, 0, s));
  GDR(gdrAllGather(d, m, ag, gdrUint32, comm, s));
  CU(cudaStreamSynchronize(s));
  h = get(ag, m * gSize);
  bad = 0;
  for (int r = 0; r < gSize; ++r)
    for (size_t i = 0; i < m; ++i) bad += h[r * m + i] != 100u + r;
  OK(bad == 0);
  const int next = (gRank + 1) % gSize, prev = (gRank + gSize - 1) % gSize;
  CU(cudaMemsetAsync(o, 0, m * 4, s));
  GDR(gdrGroupStart());
  GDR(gdrSend(d, m, gdrUint32, next, comm, s));
  GDR(gdrRecv(o, m, gdrUint32, prev, comm, s));
  GDR(gdrGroupEnd());
  CU(cudaStreamSynchronize(s));
  h = get(o, m);
  bad = 0;
  for (size_t i = 0; i < m; ++i) bad += h[i] != 100u + prev;
  OK(bad == 0);
  std::printf("rank %d: all-gather and send/recv ring checked\n", gRank);
  GDR(gdrCommDestroy(comm));

  // 3. A peer that never joins: the stream comes free, the error is async.
  if (gSize > 1) {
    setenv("GDR_TIMEOUT_MS", "2000", 1);
    gdrComm_t c2;
    GDR(gdrCommInitMPI(&c2, MPI_COMM_WORLD));
    // The first device collective sets the communicator up on every rank
    // (synchronously); the one rank 1 never joins comes after it.
    GDR(gdrAllReduce(d, o, 1024, gdrUint32, gdrSum, c2, s));
    CU(cudaStreamSynchronize(s));
    if (gRank == 0) {
      GDR(gdrAllReduce(d, o, 1024, gdrUint32, gdrSum, c2, s));
      CU(cudaStreamSynchronize(s));  // returns: the progress thread released the stream
      gdrResult_t async = gdrSuccess;
      GDR(gdrCommGetAsyncError(c2, &async));
      OK(async == gdrTimeout || async == gdrRemoteError);
      std::printf("rank 0: a peer that never joined: stream released, async error %s\n", gdrGetErrorString(async));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    gdrCommAbort(c2);
  }
  CU(cudaFree(d));
  CU(cudaFree(o));
  CU(cudaFree(ag));
  int tot = 0;
  MPI_Allreduce(&gFail, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (gRank == 0) std::printf("staged checks: %s (%d failed)\n", tot ? "FAIL" : "ok", tot);
  MPI_Finalize();
  return tot ? 1 : 0;
}

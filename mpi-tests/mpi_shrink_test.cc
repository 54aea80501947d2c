// Revoke and shrink under the MPI bootstrap (mpirun -np 3): a revoke on
// rank 1 makes every rank's next call fail fast; then rank 2 leaves (it
// destroys its communicator, so its recovery listener closes, as a dead
// process's would) and ranks 0 and 1 shrink without naming it, and again
// with an exclude list, and all-reduce on the result. mpirun itself ends
// the job when a process dies, so a real kill is tested over TCP only
// (tests/ft_shrink_test.cc). An alarm bounds the run.
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "gdrcoll.h"
#include "gdrcoll_mpi.h"

namespace {

int gFailures = 0;
#define CHECK(cond, ...)                                           \
  do {                                                             \
    if (!(cond)) {                                                 \
      std::fprintf(stderr, "rank %d: line %d: ", gRank, __LINE__); \
      std::fprintf(stderr, __VA_ARGS__);                           \
      std::fprintf(stderr, "\n");                                  \
      ++gFailures;                                                 \
    }                                                              \
  } while (0)
int gRank = -1;

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Shrinks `comm` (ranks 0 and 1 only) and checks the 2-rank result.
void shrinkAndUse(gdrComm_t comm, const int* exclude, int nexclude) {
  gdrComm_t sub = nullptr;
  gdrResult_t r = gdrCommShrink(comm, exclude, nexclude, &sub);
  CHECK(r == gdrSuccess && sub, "shrink (%d excluded): %s", nexclude, gdrGetLastError(comm));
  if (r != gdrSuccess) return;
  int size = 0, rank = -1, x = gRank + 1;
  gdrCommSize(sub, &size);
  gdrCommRank(sub, &rank);
  CHECK(size == 2 && rank == gRank, "shrunk to rank %d of %d", rank, size);
  r = gdrAllReduce(&x, &x, 1, gdrInt32, gdrSum, sub, nullptr);
  CHECK(r == gdrSuccess && x == 3, "shrunk all-reduce %d: %d", r, x);
  gdrCommDestroy(sub);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  alarm(90);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &gRank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 3) {
    if (gRank == 0) std::fprintf(stderr, "run with -np 3\n");
    MPI_Finalize();
    return 2;
  }
  gdrComm_t comm = nullptr;
  CHECK(gdrCommInitMPI(&comm, MPI_COMM_WORLD) == gdrSuccess, "init: %s", gdrGetLastError(nullptr));
  int x = 1;
  CHECK(gdrAllReduce(&x, &x, 1, gdrInt32, gdrSum, comm, nullptr) == gdrSuccess && x == 3,
        "all-reduce");
  if (gRank == 1) CHECK(gdrCommRevoke(comm) == gdrSuccess, "revoke: %s", gdrGetLastError(comm));
  auto t0 = std::chrono::steady_clock::now();
  gdrResult_t r = gdrAllReduce(&x, &x, 1, gdrInt32, gdrSum, comm, nullptr);
  CHECK(r == gdrRemoteError && std::strstr(gdrGetLastError(comm), "revoked"),
        "after the revoke: %d %s", r, gdrGetLastError(comm));
  CHECK(msSince(t0) < 2000, "failed after %.0f ms", msSince(t0));
  // Rank 2 leaves; the others find it gone.
  if (gRank == 2) gdrCommDestroy(comm);
  MPI_Barrier(MPI_COMM_WORLD);
  if (gRank < 2) {
    shrinkAndUse(comm, nullptr, 0);
    const int two = 2;
    shrinkAndUse(comm, &two, 1);
    gdrCommDestroy(comm);
  }
  int total = 0;
  MPI_Allreduce(&gFailures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (gRank == 0) std::printf("%s: %d failed checks\n", total ? "FAIL" : "PASS", total);
  MPI_Finalize();
  return total ? 1 : 0;
}

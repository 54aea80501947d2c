// gdrCommInitMPI when one rank's configuration does not parse: every rank
// returns an error (the others used to wait in MPI_Allgather forever). An
// alarm bounds the run should it hang again.
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "gdrcoll.h"
#include "gdrcoll_mpi.h"

namespace {

// Returns the number of ranks whose init failed.
int initWithOneBadRank(const char* var, const char* value, int rank) {
  if (rank == 1) setenv(var, value, 1);
  gdrComm_t comm = nullptr;
  gdrResult_t r = gdrCommInitMPI(&comm, MPI_COMM_WORLD);
  if (rank == 1) unsetenv(var);
  if (r == gdrSuccess) {
    std::fprintf(stderr, "rank %d: init succeeded although rank 1 has %s=%s\n", rank, var, value);
    gdrCommDestroy(comm);
  } else {
    std::printf("rank %d: %s=%s on rank 1: %s\n", rank, var, value, gdrGetLastError(nullptr));
  }
  int failed = r != gdrSuccess, total = 0;
  MPI_Allreduce(&failed, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  alarm(60);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int bad = 0;
  bad += initWithOneBadRank("GDR_TIMEOUT_MS", "soon", rank) != size;
  bad += initWithOneBadRank("GDR_TRANSPORT", "carrier-pigeon", rank) != size;
  bad += initWithOneBadRank("GDR_ALGO", "allreduce=ring", rank) != size;
  // A good configuration still works after the failed inits.
  gdrComm_t comm = nullptr;
  float x = 1;
  if (gdrCommInitMPI(&comm, MPI_COMM_WORLD) != gdrSuccess ||
      gdrAllReduce(GDR_IN_PLACE, &x, 1, gdrFloat32, gdrSum, comm, nullptr) != gdrSuccess ||
      x != size) {
    std::fprintf(stderr, "rank %d: the good init or its all-reduce failed: %s\n", rank,
                 gdrGetLastError(comm));
    ++bad;
  }
  if (comm) gdrCommDestroy(comm);
  MPI_Finalize();
  return bad ? 1 : 0;
}

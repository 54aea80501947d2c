/* Uses the installed headers and library: an all-reduce over MPI_COMM_WORLD. */
#include <gdrcoll_mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  gdrComm_t comm;
  if (gdrCommInitMPI(&comm, MPI_COMM_WORLD) != gdrSuccess) return 2;
  int x = rank + 1;
  if (gdrMPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, comm, NULL) != gdrSuccess) return 3;
  gdrCommDestroy(comm);
  int want = size * (size + 1) / 2;
  if (rank == 0) printf("consumer: sum %d (want %d)\n", x, want);
  MPI_Finalize();
  return x == want ? 0 : 1;
}

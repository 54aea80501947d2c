// gdr-env-colls: every collective x type x op at a few sizes, in place and
// not, checked element by element on every rank, in a job whose ranks found
// each other through gdrCommInitFromEnv (no MPI call: srun --mpi=pmix,
// mpirun's PMIx, torchrun-style or GDR_COMM_ID environments). Exits 0 when
// every rank's checks passed; rank 0 prints the total.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "gdrcoll.h"
#include "support/coll_check.h"
#include "support/multiproc.h"

namespace {

const gdrDataType_t kTypes[] = {gdrInt8,    gdrUint8,   gdrInt32,      gdrUint32,
                                gdrInt64,   gdrUint64,  gdrFloat16,    gdrBfloat16,
                                gdrFloat32, gdrFloat64, gdrFloat8e4m3, gdrFloat8e5m2};
const gdrRedOp_t kOps[] = {gdrSum, gdrProd, gdrMax, gdrMin, gdrAvg};

// Returns the number of collectives run.
long everyCollective(gdrComm_t comm, int rank, int n, unsigned seed, const size_t* counts,
                     size_t ncounts) {
  using gdrtest::CollCase;
  unsigned s = seed;
  long runs = 0;
  for (size_t k = 0; k < ncounts; ++k) {
    for (bool inPlace : {false, true}) {
      for (gdrDataType_t t : kTypes) {
        for (gdrRedOp_t op : kOps) {
          CollCase c{t, op, counts[k], inPlace, static_cast<int>(++s % n), s};
          gdrtest::checkAllReduce(comm, rank, n, c);
          gdrtest::checkReduce(comm, rank, n, c);
          gdrtest::checkReduceScatter(comm, rank, n, c);
          runs += 3;
        }
        CollCase c{t, gdrSum, counts[k], inPlace, static_cast<int>(++s % n), s};
        gdrtest::checkBroadcast(comm, rank, n, c);
        gdrtest::checkAllGather(comm, rank, n, c);
        gdrtest::checkAllToAll(comm, rank, n, c);
        runs += 3;
        if (!inPlace) {
          gdrtest::checkAllToAllv(comm, rank, n, c);
          gdrtest::checkSendRecvRing(comm, rank, n, c);
          runs += 2;
        }
      }
    }
  }
  return runs;
}

}  // namespace

int main(int argc, char** argv) {
  // --counts a,b,c: element counts per rank (default 0,1,37,1001,65539).
  size_t counts[16] = {0, 1, 37, 1001, 65539};
  size_t ncounts = 5;
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--counts")) {
      ncounts = 0;
      for (char* tok = std::strtok(argv[i + 1], ","); tok && ncounts < 16;
           tok = std::strtok(nullptr, ","))
        counts[ncounts++] = std::strtoull(tok, nullptr, 10);
    }
  gdrComm_t comm = nullptr;
  if (gdrCommInitFromEnv(&comm) != gdrSuccess) {
    std::fprintf(stderr, "gdr-env-colls: gdrCommInitFromEnv failed: %s\n",
                 gdrGetLastError(nullptr));
    return 2;
  }
  int rank = 0, n = 1;
  gdrCommRank(comm, &rank);
  gdrCommSize(comm, &n);
  // One seed for the job: rank 0 draws it, every rank takes it.
  unsigned seed = rank == 0 ? std::random_device{}() : 0;
  if (gdrBroadcast(&seed, 1, gdrUint32, 0, comm, nullptr) != gdrSuccess) {
    std::fprintf(stderr, "gdr-env-colls: rank %d: seed broadcast failed: %s\n", rank,
                 gdrGetLastError(comm));
    return 2;
  }
  const long runs = everyCollective(comm, rank, n, seed, counts, ncounts);
  int64_t failed = gdrtest::childFailures(), total = 0;
  if (gdrAllReduce(&failed, &total, 1, gdrInt64, gdrSum, comm, nullptr) != gdrSuccess) {
    std::fprintf(stderr, "gdr-env-colls: rank %d: final all-reduce failed: %s\n", rank,
                 gdrGetLastError(comm));
    return 2;
  }
  if (rank == 0)
    std::printf("gdr-env-colls: %d ranks, %ld collectives per rank, seed %u: %lld failed checks\n",
                n, runs, seed, static_cast<long long>(total));
  gdrCommDestroy(comm);
  return total == 0 ? 0 : 1;
}

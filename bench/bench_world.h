// The job gdr-bench runs in: started through MPI (mpirun; --compare mpi
// possible) or without any MPI call (--launcher pmix|env: the communicator
// from gdrCommInitFromEnv, and the bench's own reductions over ranks through
// gdrcoll). --launcher auto takes MPI when an MPI launcher started the
// process, PMIx under a PMIx server otherwise (srun --mpi=pmix), the
// environment rendezvous when torchrun, Slurm or GDR_COMM_ID variables are
// there, and MPI (a singleton) when nothing is.
#pragma once

#include <mpi.h>

#include <cstddef>

#include "gdrcoll_mpi.h"

namespace bench {

enum class Launch { Mpi, Pmix, Env };

class World {
 public:
  // Picks the launch from argv's --launcher (auto when absent), starts MPI
  // where it is used, and makes the gdrcoll communicator (after --mem cuda
  // has picked the device: call selectDevice in between). Exits with a
  // message on failure.
  World(int* argc, char*** argv);
  void makeComm();
  void destroyComm();
  ~World();

  Launch launch() const { return launch_; }
  const char* launchName() const;
  bool mpi() const { return launch_ == Launch::Mpi; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  // This rank's index on its host (MPI: a shared-memory split; otherwise the
  // launcher's variable), for choosing a GPU.
  int localRank() const;
  gdrComm_t comm() const { return comm_; }

  double seconds() const;
  void barrier() const;
  double sum(double v) const;
  double min(double v) const;
  double max(double v) const;
  unsigned long sum(unsigned long v) const;
  [[noreturn]] void abort(int code) const;

 private:
  double reduce(double v, gdrRedOp_t op, MPI_Op mop) const;

  Launch launch_ = Launch::Mpi;
  int rank_ = 0, size_ = 1;
  gdrComm_t comm_ = nullptr;
};

}  // namespace bench

#include "bench_world.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace bench {

namespace {

bool set(const char* name) {
  const char* v = std::getenv(name);
  return v && *v;
}

Launch fromEnvironment() {
  // mpirun (Open MPI, MPICH's hydra) says so; a PMIx server alone means srun
  // --mpi=pmix or a PMIx launcher that never asked for MPI.
  if (set("OMPI_COMM_WORLD_SIZE") || set("PMI_SIZE")) return Launch::Mpi;
  // A torchrun worker under srun --mpi=pmix inherits its agent's PMIx rank.
  if (set("TORCHELASTIC_RUN_ID") && set("MASTER_ADDR")) return Launch::Env;
  if (set("PMIX_RANK") && set("PMIX_NAMESPACE")) return Launch::Pmix;
  if ((set("MASTER_ADDR") && set("RANK")) || set("SLURM_PROCID") || set("GDR_COMM_ID"))
    return Launch::Env;
  return Launch::Mpi;
}

Launch pick(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--launcher") != 0) continue;
    const char* v = argv[i + 1];
    if (!std::strcmp(v, "mpi")) return Launch::Mpi;
    if (!std::strcmp(v, "pmix")) return Launch::Pmix;
    if (!std::strcmp(v, "env")) return Launch::Env;
  }
  return fromEnvironment();  // auto (option parsing rejects other values)
}

const char* firstSet(const char* const* names) {
  for (; *names; ++names)
    if (set(*names)) return std::getenv(*names);
  return nullptr;
}

}  // namespace

World::World(int* argc, char*** argv) : launch_(pick(*argc, *argv)) {
  if (mpi()) {
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    return;
  }
  // Rank and size come with the communicator; until then the launcher's
  // variable says whether this process prints.
  static const char* const kRankVars[] = {"PMIX_RANK", "RANK", "SLURM_PROCID", nullptr};
  const char* r = firstSet(kRankVars);
  rank_ = r ? std::atoi(r) : 0;
}

void World::makeComm() {
  gdrResult_t rc;
  if (mpi()) {
    rc = gdrCommInitMPI(&comm_, MPI_COMM_WORLD);
  } else {
    if (launch_ == Launch::Pmix) setenv("GDR_BOOTSTRAP", "pmix", 1);
    rc = gdrCommInitFromEnv(&comm_);
  }
  if (rc != gdrSuccess) {
    std::fprintf(stderr, "gdr-bench: rank %d: %s failed: %s (%s)\n", rank_,
                 mpi() ? "gdrCommInitMPI" : "gdrCommInitFromEnv", gdrGetErrorString(rc),
                 gdrGetLastError(nullptr));
    abort(1);
  }
  if (!mpi()) {
    gdrCommRank(comm_, &rank_);
    gdrCommSize(comm_, &size_);
  }
}

void World::destroyComm() {
  if (comm_) gdrCommDestroy(comm_);
  comm_ = nullptr;
}

World::~World() {
  destroyComm();
  if (mpi()) MPI_Finalize();
}

const char* World::launchName() const {
  switch (launch_) {
    case Launch::Mpi:
      return "mpi";
    case Launch::Pmix:
      return "pmix";
    case Launch::Env:
      return "env";
  }
  return "?";
}

int World::localRank() const {
  if (mpi()) {
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
    int lr = 0;
    MPI_Comm_rank(local, &lr);
    MPI_Comm_free(&local);
    return lr;
  }
  static const char* const kLocalVars[] = {"LOCAL_RANK", "SLURM_LOCALID",
                                           "OMPI_COMM_WORLD_LOCAL_RANK", nullptr};
  const char* v = firstSet(kLocalVars);
  return v ? std::atoi(v) : 0;
}

double World::seconds() const {
  if (mpi()) return MPI_Wtime();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void World::barrier() const {
  if (mpi()) {
    MPI_Barrier(MPI_COMM_WORLD);
    return;
  }
  gdrResult_t rc = gdrBarrier(comm_, nullptr);
  if (rc != gdrSuccess) {
    std::fprintf(stderr, "gdr-bench: rank %d: gdrBarrier failed: %s (%s)\n", rank_,
                 gdrGetErrorString(rc), gdrGetLastError(comm_));
    abort(1);
  }
}

double World::reduce(double v, gdrRedOp_t op, MPI_Op mop) const {
  double out = 0;
  if (mpi()) {
    MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, mop, MPI_COMM_WORLD);
    return out;
  }
  gdrResult_t rc = gdrAllReduce(&v, &out, 1, gdrFloat64, op, comm_, nullptr);
  if (rc != gdrSuccess) {
    std::fprintf(stderr, "gdr-bench: rank %d: gdrAllReduce of the timings failed: %s (%s)\n", rank_,
                 gdrGetErrorString(rc), gdrGetLastError(comm_));
    abort(1);
  }
  return out;
}

double World::sum(double v) const { return reduce(v, gdrSum, MPI_SUM); }
double World::min(double v) const { return reduce(v, gdrMin, MPI_MIN); }
double World::max(double v) const { return reduce(v, gdrMax, MPI_MAX); }
unsigned long World::sum(unsigned long v) const {
  // Counts of wrong elements: exact in a double far past any buffer here.
  return static_cast<unsigned long>(reduce(static_cast<double>(v), gdrSum, MPI_SUM));
}

void World::abort(int code) const {
  if (mpi()) MPI_Abort(MPI_COMM_WORLD, code);
  // Without MPI nobody kills the other ranks: they see this one vanish.
  if (comm_) gdrCommAbort(comm_);
  std::fflush(stdout);
  _exit(code);
}

}  // namespace bench

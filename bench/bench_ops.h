// One iteration of the measured collective: gdrcoll's and the system MPI's.
#pragma once

#include <mpi.h>

#include "bench_options.h"
#include "bench_plan.h"
#include "gdrcoll.h"

namespace bench {

struct Bufs {
  void* send = nullptr;
  void* recv = nullptr;
};

// Returns gdrSuccess or the failing call's result.
gdrResult_t runGdr(const Options& o, const Plan& p, const Bufs& b, gdrComm_t comm, int rank);
// False when MPI has no equivalent (fp16/bf16, avg).
bool mpiCanRun(const Options& o);
void runMpi(const Options& o, const Plan& p, const Bufs& b, MPI_Comm comm, int rank);

// Fills inputs with values whose reduction is exact, poisons outputs, and
// after one call checks every element. Returns the number of wrong elements.
void fillInputs(const Options& o, const Plan& p, const Bufs& b, int rank, int nranks, unsigned seed);
void poisonOutputs(const Plan& p, const Bufs& b);
size_t countErrors(const Options& o, const Plan& p, const Bufs& b, int rank, int nranks, unsigned seed);

}  // namespace bench

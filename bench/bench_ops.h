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
  gdrStream_t stream = nullptr;  // --mem cuda: the stream every call is enqueued on
};

// Returns gdrSuccess or the failing call's result.
gdrResult_t runGdr(const Options& o, const Plan& p, const Bufs& b, gdrComm_t comm, int rank);
// False when MPI has no equivalent (fp16/bf16, avg).
bool mpiCanRun(const Options& o);
void runMpi(const Options& o, const Plan& p, const Bufs& b, MPI_Comm comm, int rank);

#if GDR_BENCH_NCCL
// The system NCCL on the same device buffers and stream (--compare nccl).
// `ncclComm` is an ncclComm_t. False when NCCL has no equivalent (barrier).
bool ncclCanRun(const Options& o);
void ncclInit(void** ncclComm, MPI_Comm world);
void ncclFree(void* ncclComm);
void runNccl(const Options& o, const Plan& p, const Bufs& b, void* ncclComm, int rank);
// --window: NCCL's buffers for one size, from ncclMemAlloc (its symmetric
// windows need cuMem memory, which CUDA IPC handles cannot share, so the
// two libraries get buffers of their own) registered with
// ncclCommWindowRegister(NCCL_WIN_COLL_SYMMETRIC); released by the destructor.
struct NcclWindows {
  NcclWindows(void* ncclComm, size_t sendBytes, size_t recvBytes, gdrStream_t stream);
  ~NcclWindows();
  NcclWindows(const NcclWindows&) = delete;
  NcclWindows& operator=(const NcclWindows&) = delete;
  Bufs bufs;

 private:
  void* comm_;
  void* win_[2] = {};
};
#endif

// Fills inputs with values whose reduction is exact, poisons outputs, and
// after one call checks every element. Returns the number of wrong elements.
void fillInputs(const Options& o, const Plan& p, const Bufs& b, int rank, int nranks, unsigned seed);
void poisonOutputs(const Plan& p, const Bufs& b);
size_t countErrors(const Options& o, const Plan& p, const Bufs& b, int rank, int nranks, unsigned seed);

}  // namespace bench

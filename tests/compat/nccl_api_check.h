// What the NCCL-API test's files share (nccl_api_test.cc runs the ranks;
// nccl_api_oneproc.cc has the one-process cases, nccl_api_group.cc the
// group ones): the rank, the failure
// count, the checks, and every rank's input.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace nccltest {

extern int gRank;
extern int gFailures;
extern uint64_t gSeed;  // rank 0's, handed to the others
// Rank r's element i: small integers, exact in every type and after any op.
double input(int r, size_t i, ncclRedOp_t op);
double combine(double a, double b, ncclRedOp_t op);
// The result of reducing every rank's element i with op.
double reduced(int nranks, size_t i, ncclRedOp_t op);
// The cases that need no other process (nccl_api_oneproc.cc).
void testProcessLocal();
// The order of a group's calls and copies (nccl_api_group.cc).
void testGroupOrder(ncclComm_t comm, int rank, int n);

}  // namespace nccltest


#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (!(cond)) {                                                    \
      std::fprintf(stderr, "rank %d: %s:%d: ", nccltest::gRank, __FILE__, __LINE__); \
      std::fprintf(stderr, __VA_ARGS__);                              \
      std::fprintf(stderr, "\n");                                     \
      ++nccltest::gFailures;                                                    \
    }                                                                 \
  } while (0)
#define NCCLOK(call)                                                                       \
  do {                                                                                     \
    ncclResult_t r_ = (call);                                                              \
    if (r_ != ncclSuccess) {                                                               \
      std::fprintf(stderr, "rank %d: %s:%d: %s -> %s: %s\n", nccltest::gRank, __FILE__, __LINE__, #call, \
                   ncclGetErrorString(r_), ncclGetLastError(nullptr));                     \
      std::exit(2);                                                                        \
    }                                                                                      \
  } while (0)


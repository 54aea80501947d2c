// What the GPUDirect path's GPU programs (gpu_direct_test.cc,
// gpu_direct_bench.cc) share: ranks as forked processes sharing the GPU,
// each its own "host" (GDR_HOST_ID), the verbs transport over the software
// NIC, and how a run of ranks is reported.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "support/multiproc.h"

// In a rank: a failed check counts and goes on; a failed CUDA call ends the
// rank's function with 1.
#define CK(cond, ...) CHILD_CHECK(cond, __VA_ARGS__)
#define CUDA_OK(call)                                                         \
  do {                                                                        \
    cudaError_t e_ = (call);                                                  \
    if (e_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "[rank %d] %s: %s\n", gdrtest::childRank(), #call, \
                   cudaGetErrorString(e_));                                   \
      return 1;                                                               \
    }                                                                         \
  } while (0)

namespace gdrtest::direct {

constexpr int kNoDevice = 77;

inline Env softNicEnv() {
  return {{"GDR_IB_PROVIDER", "softnic"},
          {"GDR_TRANSPORT", "ib"},
          {"NCCL_NVLS_ENABLE", "0"},
          {"GDR_TIMEOUT_MS", "10000"}};
}

// preInit of runRanks: every rank a host of its own.
inline void ownHost(int rank) {
  setenv("GDR_HOST_ID", ("direct-host-" + std::to_string(rank)).c_str(), 1);
}

// "<what>: passed" or "FAILED: ..."; 0 passed, 77 every rank skipped (no
// CUDA device), 3 a rank hung (killed at the deadline), 1 other failures.
inline int report(const char* what, const std::vector<RankExit>& exits) {
  bool skipped = true;
  for (const auto& e : exits) skipped &= e.code == kNoDevice;
  if (skipped) {
    std::printf("skipped: no CUDA device\n");
    return kNoDevice;
  }
  std::string why;
  const bool ok = allOk(exits, &why);
  bool hung = false;
  for (const auto& e : exits) hung |= e.timedOut;
  std::printf("%s: %s%s%s\n", what, ok ? "passed" : "FAILED: ", ok ? "" : why.c_str(),
              hung ? " (a rank hung: killed at the deadline)" : "");
  std::fflush(stdout);
  return ok ? 0 : hung ? 3 : 1;
}

}  // namespace gdrtest::direct

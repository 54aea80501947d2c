// What the MPI GPU tests share: CUDA_OK / GDR_OK (a failed call prints
// where, with this process's rank, and aborts every rank) and a device
// buffer with host copies in and out.
#pragma once

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstdio>
#include <vector>

#include "gdrcoll.h"

namespace gdrtest {

inline int gMpiRank = 0;  // set by main, printed with a failure

}  // namespace gdrtest

#define CUDA_OK(x)                                                                                \
  do {                                                                                            \
    cudaError_t rc_ = (x);                                                                        \
    if (rc_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "rank %d: %s:%d: %s: %s\n", gdrtest::gMpiRank, __FILE__, __LINE__, #x, \
                   cudaGetErrorString(rc_));                                                      \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                               \
    }                                                                                             \
  } while (0)
#define GDR_OK(x)                                                                                  \
  do {                                                                                             \
    gdrResult_t rc_ = (x);                                                                         \
    if (rc_ != gdrSuccess) {                                                                       \
      std::fprintf(stderr, "rank %d: %s:%d: %s: %s (%s)\n", gdrtest::gMpiRank, __FILE__, __LINE__, \
                   #x, gdrGetErrorString(rc_), gdrGetLastError(nullptr));                          \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                                \
    }                                                                                              \
  } while (0)

namespace gdrtest {

struct DevBuf {
  char* p = nullptr;
  size_t bytes = 0;
  explicit DevBuf(size_t b) : bytes(b) {
    CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&p), b ? b : 16));
  }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  // The tests' streams do not synchronize with the legacy default stream
  // these run on: wait for them, or the collective races its own inputs.
  void poison() {
    CUDA_OK(cudaMemset(p, 0xA5, bytes ? bytes : 16));
    CUDA_OK(cudaDeviceSynchronize());
  }
  void put(const std::vector<char>& h, size_t off = 0) {
    if (!h.empty()) CUDA_OK(cudaMemcpy(p + off, h.data(), h.size(), cudaMemcpyHostToDevice));
    CUDA_OK(cudaDeviceSynchronize());
  }
  std::vector<char> get(size_t off, size_t n) const {
    std::vector<char> h(n);
    if (n) CUDA_OK(cudaMemcpy(h.data(), p + off, n, cudaMemcpyDeviceToHost));
    return h;
  }
};

}  // namespace gdrtest

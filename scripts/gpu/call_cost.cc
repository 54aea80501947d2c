// Host-side cost of one NCCL call on a one-rank communicator (the time the
// calling thread spends in it, fewer calls than the stream's queue holds so
// that no call waits for the GPU), beside cudaMemcpyAsync's. Run with the
// real libnccl and with ours preloaded to see what our layers add.
//   call_cost [calls]
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#define CK(x)                                                            \
  do {                                                                   \
    if ((x) != 0) {                                                      \
      std::fprintf(stderr, "%s failed\n", #x);                           \
      std::exit(1);                                                      \
    }                                                                    \
  } while (0)

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 200;
  ncclComm_t comm;
  int dev = 0;
  CK(ncclCommInitAll(&comm, 1, &dev));
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  const size_t count = 1 << 18;  // 1 MiB of floats
  float *a, *b;
  CK(cudaMalloc(&a, count * 4));
  CK(cudaMalloc(&b, count * 4));
  auto time = [&](const char* name, auto&& f) {
    double best = 1e9;
    for (int rep = 0; rep < 20; ++rep) {
      CK(cudaStreamSynchronize(st));
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < calls; ++i) f();
      double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / calls;
      if (us < best) best = us;
    }
    CK(cudaStreamSynchronize(st));
    std::printf("%-28s %7.3f us per call (host, best of 20 x %d)\n", name, best, calls);
  };
  time("cudaMemcpyAsync D2D", [&] { CK(cudaMemcpyAsync(b, a, count * 4, cudaMemcpyDeviceToDevice, st)); });
  time("ncclAlltoAll", [&] { CK(ncclAlltoAll(a, b, count, ncclFloat, comm, st)); });
  time("ncclAllGather", [&] { CK(ncclAllGather(a, b, count, ncclFloat, comm, st)); });
  time("ncclAllReduce", [&] { CK(ncclAllReduce(a, b, count, ncclFloat, ncclSum, comm, st)); });
  time("ncclAllReduce in place", [&] { CK(ncclAllReduce(a, a, count, ncclFloat, ncclSum, comm, st)); });
  time("ncclReduceScatter", [&] { CK(ncclReduceScatter(a, b, count, ncclFloat, ncclSum, comm, st)); });
  time("ncclBroadcast", [&] { CK(ncclBroadcast(a, b, count, ncclFloat, 0, comm, st)); });
  CK(ncclCommDestroy(comm));
  return 0;
}

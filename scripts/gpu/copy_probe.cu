// Per-call time of a device-to-device copy, back to back on one stream:
// cudaMemcpyAsync against a grid-stride 16-byte copy kernel at several grid
// sizes. Says which one a one-rank out-of-place collective should issue.
//   copy_probe [iters]
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                  \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));            \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

__global__ void copyKernel(uint4* __restrict__ d, const uint4* __restrict__ s, size_t n) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += stride) d[i] = s[i];
}

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 200;
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const size_t maxBytes = size_t(256) << 20;
  void *a, *b;
  CK(cudaMalloc(&a, maxBytes));
  CK(cudaMalloc(&b, maxBytes));
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  const int grids[] = {sms, 2 * sms, 4 * sms, 8 * sms};
  std::printf("%12s %12s", "bytes", "memcpy_us");
  for (int g : grids) std::printf("  kern%-4d_us", g);
  std::printf("\n");
  for (size_t bytes = 4096; bytes <= maxBytes; bytes *= 4) {
    auto timeIt = [&](auto&& issue) {
      for (int i = 0; i < 10; ++i) issue();
      CK(cudaEventRecord(e0, st));
      for (int i = 0; i < iters; ++i) issue();
      CK(cudaEventRecord(e1, st));
      CK(cudaEventSynchronize(e1));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      return 1000.0 * ms / iters;
    };
    std::printf("%12zu %12.2f", bytes, timeIt([&] { CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, st)); }));
    const size_t n = bytes / 16;
    for (int g : grids) {
      const size_t need = (n + 511) / 512;
      const int grid = int(need < size_t(g) ? (need ? need : 1) : g);
      std::printf("  %11.2f", timeIt([&] {
        copyKernel<<<grid, 512, 0, st>>>(static_cast<uint4*>(b), static_cast<const uint4*>(a), n);
      }));
    }
    std::printf("\n");
  }
  // Host-side cost of the runtime calls a collective may make per call.
  auto perCall = [&](const char* name, auto&& f) {
    const int n = 20000;
    for (int i = 0; i < 100; ++i) f();
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) f();
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / n;
    std::printf("%-36s %8.3f us\n", name, us);
  };
  cudaPointerAttributes pa{};
  int dev = 0;
  unsigned flags = 0;
  void* host = std::malloc(4096);
  perCall("cudaPointerGetAttributes(device)", [&] { CK(cudaPointerGetAttributes(&pa, a)); });
  perCall("cudaPointerGetAttributes(malloc)", [&] { CK(cudaPointerGetAttributes(&pa, host)); });
  perCall("cudaGetDevice", [&] { CK(cudaGetDevice(&dev)); });
  perCall("cudaSetDevice(same)", [&] { CK(cudaSetDevice(0)); });
  perCall("cudaStreamGetFlags", [&] { CK(cudaStreamGetFlags(st, &flags)); });
  perCall("cudaGetLastError", [&] { (void)cudaGetLastError(); });
  CK(cudaStreamSynchronize(st));
  CK(cudaGetLastError());
  return 0;
}

// What one out-of-place copy on a stream costs, per call, in the way
// nccl-api-bench times a call (N calls back to back, then one synchronize):
// the copy engine through the runtime (cudaMemcpyDefault and
// DeviceToDevice) and through the driver, a copy kernel, and the real NCCL's
// one-rank all-to-all and all-gather beside them. Also the host time alone
// (fewer calls than the stream holds). Sizes 256 KiB - 16 MiB.
// With a second argument, the same copy from a library that links the
// runtime statically (static_rt_copy.cu, loaded with dlopen).
//   copy_cost [calls [libsrt.so]]
#include <cuda.h>
#include <dlfcn.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                        \
  do {                                               \
    if ((x) != 0) {                                  \
      std::fprintf(stderr, "%s failed\n", #x);       \
      std::exit(1);                                  \
    }                                                \
  } while (0)

__global__ void copy16(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 500;
  ncclComm_t comm;
  int dev = 0;
  CK(ncclCommInitAll(&comm, 1, &dev));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  const size_t maxBytes = 16u << 20;
  char *a, *b;
  CK(cudaMalloc(&a, maxBytes));
  CK(cudaMalloc(&b, maxBytes));
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  // Per call: N calls then a synchronize (the bench's way), and host only.
  auto time = [&](const char* name, size_t bytes, auto&& f) {
    std::vector<double> full, host;
    for (int rep = 0; rep < 9; ++rep) {
      CK(cudaStreamSynchronize(st));
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < calls; ++i) f();
      CK(cudaStreamSynchronize(st));
      full.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / calls);
      t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 100; ++i) f();
      host.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 100);
      CK(cudaStreamSynchronize(st));
    }
    std::printf("%-22s %9zu  %7.2f us/call  %7.2f us host\n", name, bytes, median(full), median(host));
  };
  using Copy = int (*)(void*, const void*, size_t, void*);
  Copy srt[3] = {};
  const char* srtName[3] = {"static-rt memcpy", "static-rt driver", "static-rt kernel"};
  if (argc > 2) {
    void* h = dlopen(argv[2], RTLD_NOW);
    if (!h) {
      std::fprintf(stderr, "dlopen %s: %s\n", argv[2], dlerror());
      return 1;
    }
    srt[0] = reinterpret_cast<Copy>(dlsym(h, "srtRuntimeCopy"));
    srt[1] = reinterpret_cast<Copy>(dlsym(h, "srtDriverCopy"));
    srt[2] = reinterpret_cast<Copy>(dlsym(h, "srtKernelCopy"));
  }
  for (size_t bytes : {256u << 10, 512u << 10, 1u << 20, 2u << 20, 4u << 20, 8u << 20, 16u << 20}) {
    const size_t n16 = bytes / 16;
    const int threads = 512;
    const int blocks = int(std::min<size_t>((n16 + threads - 1) / threads, size_t(sms) * 4));
    time("memcpy Default", bytes, [&] { CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDefault, st)); });
    time("memcpy D2D", bytes, [&] { CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, st)); });
    time("cuMemcpyDtoDAsync", bytes,
         [&] { CK(cuMemcpyDtoDAsync(CUdeviceptr(b), CUdeviceptr(a), bytes, CUstream(st))); });
    time("copy kernel", bytes, [&] {
      copy16<<<blocks, threads, 0, st>>>(reinterpret_cast<const uint4*>(a), reinterpret_cast<uint4*>(b), n16);
    });
    for (int k = 0; k < 3; ++k)
      if (srt[k]) time(srtName[k], bytes, [&] { CK(srt[k](b, a, bytes, st)); });
    time("ncclAlltoAll", bytes, [&] { CK(ncclAlltoAll(a, b, bytes / 4, ncclFloat, comm, st)); });
    time("ncclAllGather", bytes, [&] { CK(ncclAllGather(a, b, bytes / 4, ncclFloat, comm, st)); });
    time("ncclAllReduce", bytes, [&] { CK(ncclAllReduce(a, b, bytes / 4, ncclFloat, ncclSum, comm, st)); });
    std::printf("\n");
  }
  CK(ncclCommDestroy(comm));
  return 0;
}

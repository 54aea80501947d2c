// Device buffers through the NCCL API (label gpu): built against the system
// NCCL header and libnccl, run once with the real NCCL and once with ours on
// LD_LIBRARY_PATH; both must give the exact results every rank computes
// itself. Ranks are forked processes, rank r on device r % devices. Exits 77
// ("skipped: no CUDA device") without a GPU.
//   nccl_gpu_test <nranks>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {

#define OK(call)                                                                              \
  do {                                                                                        \
    auto r_ = (call);                                                                         \
    if (r_ != 0) {                                                                            \
      std::fprintf(stderr, "%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #call, (int)r_);   \
      _exit(2);                                                                               \
    }                                                                                         \
  } while (0)

unsigned gSeed;
float input(int r, size_t i) { return static_cast<float>((gSeed + 31u * r + 7u * i) % 13u); }

int runRank(int rank, int n, ncclUniqueId id) {
  int ndev = 0;
  OK(cudaGetDeviceCount(&ndev));
  OK(cudaSetDevice(rank % ndev));
  cudaStream_t s;
  OK(cudaStreamCreate(&s));
  ncclComm_t comm;
  OK(ncclCommInitRank(&comm, n, id, rank));
  int failures = 0;
  for (size_t count : {size_t(1), size_t(1000), size_t(1) << 20}) {
    std::vector<float> h(count * n), out(count * n);
    for (size_t i = 0; i < count; ++i) h[i] = input(rank, i);
    float *d, *all;
    OK(cudaMalloc(&d, count * sizeof(float)));
    OK(cudaMalloc(&all, count * n * sizeof(float)));
    OK(cudaMemcpy(d, h.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    OK(ncclAllReduce(d, d, count, ncclFloat, ncclSum, comm, s));
    OK(ncclAllGather(d, all, count, ncclFloat, comm, s));
    OK(cudaStreamSynchronize(s));
    OK(cudaMemcpy(out.data(), all, count * n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int p = 0; p < n; ++p)
      for (size_t i = 0; i < count; ++i) {
        float want = 0;
        for (int r = 0; r < n; ++r) want += input(r, i);
        if (out[p * count + i] != want) {
          if (failures++ < 5) std::fprintf(stderr, "rank %d count %zu [%d][%zu] %g != %g\n", rank, count, p, i, out[p * count + i], want);
        }
      }
    // A ring exchange inside a group.
    OK(cudaMemcpy(d, h.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    OK(ncclGroupStart());
    OK(ncclSend(d, count, ncclFloat, (rank + 1) % n, comm, s));
    OK(ncclRecv(all, count, ncclFloat, (rank + n - 1) % n, comm, s));
    OK(ncclGroupEnd());
    OK(cudaStreamSynchronize(s));
    OK(cudaMemcpy(out.data(), all, count * sizeof(float), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < count; ++i)
      if (out[i] != input((rank + n - 1) % n, i) && failures++ < 5) std::fprintf(stderr, "rank %d ring [%zu]\n", rank, i);
    OK(cudaFree(d));
    OK(cudaFree(all));
  }
  OK(ncclCommDestroy(comm));
  return failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 2;
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("skipped: no CUDA device\n");
    return 77;
  }
  Dl_info info{};
  dladdr(reinterpret_cast<void*>(&ncclGetVersion), &info);
  gSeed = std::random_device{}();
  std::printf("libnccl: %s, seed %u, %d ranks on %d devices\n", info.dli_fname ? info.dli_fname : "?", gSeed, n, ndev);
  std::fflush(stdout);
  std::vector<int> fds(2 * n);
  for (int r = 1; r < n; ++r)
    if (pipe(&fds[2 * r]) != 0) return 3;
  std::vector<pid_t> kids;
  for (int r = 0; r < n; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      ncclUniqueId id;
      if (r == 0) {
        OK(ncclGetUniqueId(&id));
        for (int p = 1; p < n; ++p)
          if (write(fds[2 * p + 1], &id, sizeof(id)) != sizeof(id)) _exit(3);
      } else if (read(fds[2 * r], &id, sizeof(id)) != sizeof(id)) {
        _exit(3);
      }
      _exit(runRank(r, n, id));
    }
    kids.push_back(pid);
  }
  int failed = 0;
  for (pid_t k : kids) {
    int st = 0;
    waitpid(k, &st, 0);
    failed += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
  }
  std::printf("%s\n", failed ? "FAIL" : "PASS");
  return failed ? 1 : 0;
}

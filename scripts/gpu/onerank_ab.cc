// One-rank NCCL calls of two libnccl.so.2 builds in ONE process (each loaded
// with dlopen, RTLD_LOCAL, so their symbols stay apart), alternated batch by
// batch: machine noise between processes (up to 25 % on the H200 machine)
// falls out of the ratio. Per size and collective: BATCHES x (CALLS calls,
// then a synchronize) per library; the median us per call of each.
//   onerank_ab <libA> <libB> [calls] [batches]
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

struct Lib {
  const char* path;
  ncclResult_t (*initAll)(ncclComm_t*, int, const int*);
  ncclResult_t (*allReduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
  ncclResult_t (*allGather)(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
  ncclResult_t (*reduceScatter)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
  ncclResult_t (*allToAll)(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
  ncclResult_t (*broadcast)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  ncclComm_t comm = nullptr;
};

template <typename F>
void sym(void* h, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(h, name));
  if (!*out) {
    std::fprintf(stderr, "%s: no %s\n", name, dlerror());
    std::exit(1);
  }
}

Lib load(const char* path) {
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (!h) {
    std::fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    std::exit(1);
  }
  Lib l{path};
  sym(h, "ncclCommInitAll", &l.initAll);
  sym(h, "ncclAllReduce", &l.allReduce);
  sym(h, "ncclAllGather", &l.allGather);
  sym(h, "ncclReduceScatter", &l.reduceScatter);
  sym(h, "ncclAlltoAll", &l.allToAll);
  sym(h, "ncclBroadcast", &l.broadcast);
  int dev = 0;
  if (l.initAll(&l.comm, 1, &dev) != ncclSuccess) {
    std::fprintf(stderr, "%s: ncclCommInitAll failed\n", path);
    std::exit(1);
  }
  return l;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <libA> <libB> [calls] [batches]\n", argv[0]);
    return 2;
  }
  const int calls = argc > 3 ? std::atoi(argv[3]) : 200;
  const int batches = argc > 4 ? std::atoi(argv[4]) : 15;
  Lib libs[2] = {load(argv[1]), load(argv[2])};
  cudaStream_t st;
  if (cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) != cudaSuccess) return 1;
  const size_t maxBytes = 16u << 20;
  char *a, *b;
  if (cudaMalloc(&a, maxBytes) != cudaSuccess || cudaMalloc(&b, maxBytes) != cudaSuccess) return 1;
  const char* names[] = {"allreduce", "allgather", "reducescatter", "alltoall", "bcast"};
  std::printf("# A = %s\n# B = %s\n# coll size A_us B_us A/B (median of %d batches of %d calls)\n", argv[1], argv[2],
              batches, calls);
  for (int c = 0; c < 5; ++c) {
    for (size_t bytes = 512u << 10; bytes <= maxBytes; bytes *= 2) {
      const size_t n = bytes / 4;
      std::vector<double> t[2];
      for (int batch = 0; batch < batches + 1; ++batch) {
        for (int k = 0; k < 2; ++k) {
          const int w = batch % 2 ? 1 - k : k;  // alternate who goes first
          Lib& l = libs[w];
          cudaStreamSynchronize(st);
          auto t0 = std::chrono::steady_clock::now();
          for (int i = 0; i < calls; ++i) {
            ncclResult_t r = ncclSuccess;
            switch (c) {
              case 0: r = l.allReduce(a, b, n, ncclFloat, ncclSum, l.comm, st); break;
              case 1: r = l.allGather(a, b, n, ncclFloat, l.comm, st); break;
              case 2: r = l.reduceScatter(a, b, n, ncclFloat, ncclSum, l.comm, st); break;
              case 3: r = l.allToAll(a, b, n, ncclFloat, l.comm, st); break;
              case 4: r = l.broadcast(a, b, n, ncclFloat, 0, l.comm, st); break;
            }
            if (r != ncclSuccess) {
              std::fprintf(stderr, "%s %s failed: %d\n", l.path, names[c], int(r));
              return 1;
            }
          }
          cudaStreamSynchronize(st);
          const double us =
              std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / calls;
          if (batch > 0) t[w].push_back(us);  // batch 0 warms both up
        }
      }
      const double ma = median(t[0]), mb = median(t[1]);
      std::printf("%-14s %9zu %7.2f %7.2f %5.2fx\n", names[c], bytes, ma, mb, ma / mb);
    }
  }
  return 0;
}

/* nccl-api-bench: a small nccl-tests-like benchmark written only against
 * nccl.h, so one binary times the system NCCL and, with gdrcoll's
 * libnccl.so.2 first on LD_LIBRARY_PATH, gdrcoll through the NCCL API.
 *
 *   nccl_api_bench <allreduce|allgather|reducescatter|alltoall|bcast> [--min B] [--max B]
 *                  [--mode env|initall] [--id-file F] [--ranks N] [--inplace 0|1]
 *   env:     one process per GPU under mpirun (OMPI_COMM_WORLD_RANK/SIZE);
 *            rank 0 passes the unique id through --id-file
 *   initall: one process drives N GPUs (ncclCommInitAll, grouped calls)
 *
 * float32 sum, out of place (--inplace 1: NCCL's in-place forms), sizes doubling from --min to
 * --max (default 8 B .. 512 MiB). Sizes follow nccl-tests: the total buffer (all-gather: the
 * output; reduce-scatter, all-to-all: the input). Time per call is the CUDA-event time of a loop of
 * calls on rank 0's stream after a warm-up; busbw uses nccl-tests' factors. Prints which libnccl
 * was loaded. */
#define _GNU_SOURCE
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK(call)                                                                             \
  do {                                                                                          \
    long r_ = (long)(call);                                                                     \
    if (r_ != 0) {                                                                              \
      fprintf(stderr, "%s:%d: %s failed (%ld): %s\n", __FILE__, __LINE__, #call, r_,         \
              ncclGetLastError(NULL));                                                          \
      exit(2);                                                                                  \
    }                                                                                           \
  } while (0)

enum Coll { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBcast };
static const char* kNames[] = {"allreduce", "allgather", "reducescatter", "alltoall", "bcast"};

typedef struct {
  int device;
  int rank;
  ncclComm_t comm;
  cudaStream_t stream;
  void* send;
  void* recv;
} Local;

static size_t parseBytes(const char* s) {
  char* end = NULL;
  double v = strtod(s, &end);
  if (*end == 'k' || *end == 'K') v *= 1024;
  else if (*end == 'm' || *end == 'M') v *= 1024.0 * 1024;
  else if (*end == 'g' || *end == 'G') v *= 1024.0 * 1024 * 1024;
  return (size_t)v;
}

/* Elements per call for a total of `bytes` (0: the size is too small). */
static size_t countFor(enum Coll c, size_t bytes, int n) {
  size_t elems = bytes / sizeof(float);
  return (c == kAllGather || c == kReduceScatter || c == kAllToAll) ? elems / (size_t)n : elems;
}

static double busFactor(enum Coll c, int n) {
  if (c == kAllReduce) return 2.0 * (n - 1) / n;
  if (c == kBcast) return 1.0;
  return (double)(n - 1) / n;
}

static int gInPlace = 0;

/* In place: all-reduce and broadcast on one buffer; all-gather from this
 * rank's block of the output; reduce-scatter into this rank's block of the
 * input. All-to-all has no in-place form in NCCL: it stays out of place. */
static void issue(enum Coll c, Local* l, size_t count) {
  float* send = (float*)l->send;
  float* recv = gInPlace ? send : (float*)l->recv;
  switch (c) {
    case kAllReduce:
      CHECK(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, l->comm, l->stream));
      break;
    case kAllGather:
      CHECK(ncclAllGather(gInPlace ? recv + (size_t)l->rank * count : send, recv, count, ncclFloat,
                          l->comm, l->stream));
      break;
    case kReduceScatter:
      CHECK(ncclReduceScatter(send, gInPlace ? send + (size_t)l->rank * count : recv, count,
                              ncclFloat, ncclSum, l->comm, l->stream));
      break;
    case kAllToAll: CHECK(ncclAlltoAll(l->send, l->recv, count, ncclFloat, l->comm, l->stream)); break;
    case kBcast:
      CHECK(ncclBroadcast(send, recv, count, ncclFloat, 0, l->comm, l->stream));
      break;
  }
}

static void round_(enum Coll c, Local* ls, int nlocal, size_t count) {
  if (nlocal > 1) CHECK(ncclGroupStart());
  for (int i = 0; i < nlocal; ++i) {
    if (nlocal > 1) CHECK(cudaSetDevice(ls[i].device));
    issue(c, &ls[i], count);
  }
  if (nlocal > 1) CHECK(ncclGroupEnd());
}

static void syncAll(Local* ls, int nlocal) {
  for (int i = 0; i < nlocal; ++i) {
    CHECK(cudaSetDevice(ls[i].device));
    CHECK(cudaStreamSynchronize(ls[i].stream));
  }
}

static void readId(ncclUniqueId* id, int rank, const char* file) {
  char tmp[4096];
  snprintf(tmp, sizeof(tmp), "%s.tmp", file);
  if (rank == 0) {
    CHECK(ncclGetUniqueId(id));
    FILE* f = fopen(tmp, "wb");
    if (!f || fwrite(id, sizeof(*id), 1, f) != 1 || fclose(f) != 0 || rename(tmp, file) != 0) {
      perror(file);
      exit(2);
    }
    return;
  }
  for (int waited = 0;; waited += 20) {
    FILE* f = fopen(file, "rb");
    if (f) {
      size_t got = fread(id, sizeof(*id), 1, f);
      fclose(f);
      if (got == 1) return;
    }
    if (waited > 60000) {
      fprintf(stderr, "rank %d: no unique id in %s after 60 s\n", rank, file);
      exit(2);
    }
    usleep(20000);
  }
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr,
            "usage: %s <allreduce|allgather|reducescatter|alltoall|bcast> [--min B] [--max B] "
            "[--mode env|initall] [--id-file F] [--ranks N] [--inplace 0|1]\n",
            argv[0]);
    return 2;
  }
  int coll = -1;
  for (int i = 0; i < 5; ++i)
    if (!strcmp(argv[1], kNames[i])) coll = i;
  if (coll < 0) {
    fprintf(stderr, "unknown collective %s\n", argv[1]);
    return 2;
  }
  size_t minBytes = 8, maxBytes = (size_t)512 << 20;
  const char* mode = "env";
  const char* idFile = NULL;
  int nranks = 2;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--min")) minBytes = parseBytes(argv[i + 1]);
    else if (!strcmp(argv[i], "--max")) maxBytes = parseBytes(argv[i + 1]);
    else if (!strcmp(argv[i], "--mode")) mode = argv[i + 1];
    else if (!strcmp(argv[i], "--id-file")) idFile = argv[i + 1];
    else if (!strcmp(argv[i], "--ranks")) nranks = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--inplace"))
      gInPlace = atoi(argv[i + 1]) != 0;
    else {
      fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  int ndev = 0;
  CHECK(cudaGetDeviceCount(&ndev));
  int rank = 0, nlocal = 1;
  Local ls[16];
  memset(ls, 0, sizeof(ls));
  if (!strcmp(mode, "env")) {
    const char* r = getenv("OMPI_COMM_WORLD_RANK");
    const char* s = getenv("OMPI_COMM_WORLD_SIZE");
    if (!r || !s || !idFile) {
      fprintf(stderr, "--mode env needs mpirun (OMPI_COMM_WORLD_RANK/SIZE) and --id-file\n");
      return 2;
    }
    rank = atoi(r);
    nranks = atoi(s);
  } else if (!strcmp(mode, "initall")) {
    nlocal = nranks;
    if (nranks < 1 || nranks > 16 || nranks > ndev) {
      fprintf(stderr, "initall: %d ranks, %d devices\n", nranks, ndev);
      return 2;
    }
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  const size_t bufBytes = maxBytes + 64;
  for (int i = 0; i < nlocal; ++i) {
    ls[i].device = nlocal > 1 ? i : rank % ndev;
    ls[i].rank = nlocal > 1 ? i : rank;
    CHECK(cudaSetDevice(ls[i].device));
    CHECK(cudaStreamCreateWithFlags(&ls[i].stream, cudaStreamNonBlocking));
    CHECK(cudaMalloc(&ls[i].send, bufBytes));
    CHECK(cudaMalloc(&ls[i].recv, bufBytes));
    CHECK(cudaMemset(ls[i].send, 0, bufBytes));
  }
  if (nlocal > 1) {
    ncclComm_t comms[16];
    int devs[16];
    for (int i = 0; i < nlocal; ++i) devs[i] = i;
    CHECK(ncclCommInitAll(comms, nlocal, devs));
    for (int i = 0; i < nlocal; ++i) ls[i].comm = comms[i];
  } else {
    ncclUniqueId id;
    readId(&id, rank, idFile);
    CHECK(cudaSetDevice(ls[0].device));
    CHECK(ncclCommInitRank(&ls[0].comm, nranks, id, rank));
  }
  if (rank == 0) {
    Dl_info info;
    memset(&info, 0, sizeof(info));
    dladdr((void*)&ncclGetVersion, &info);
    int version = 0;
    ncclGetVersion(&version);
    printf("# nccl-api-bench %s%s: %d ranks (%s), libnccl %s (version code %d)\n", kNames[coll],
           gInPlace ? " in place" : "", nranks, mode, info.dli_fname ? info.dli_fname : "?",
           version);
    printf("# %12s %12s %10s %10s %10s\n", "size(B)", "count", "time(us)", "algbw(GB/s)", "busbw(GB/s)");
    fflush(stdout);
  }
  cudaEvent_t start, stop;
  CHECK(cudaSetDevice(ls[0].device));
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  for (size_t bytes = minBytes; bytes <= maxBytes; bytes *= 2) {
    const size_t count = countFor((enum Coll)coll, bytes, nranks);
    if (count == 0) continue;
    const int iters = bytes <= ((size_t)1 << 20) ? 100 : bytes <= ((size_t)64 << 20) ? 20 : 5;
    for (int w = 0; w < 5; ++w) round_((enum Coll)coll, ls, nlocal, count);
    syncAll(ls, nlocal);
    CHECK(cudaSetDevice(ls[0].device));
    CHECK(cudaEventRecord(start, ls[0].stream));
    for (int it = 0; it < iters; ++it) round_((enum Coll)coll, ls, nlocal, count);
    CHECK(cudaSetDevice(ls[0].device));
    CHECK(cudaEventRecord(stop, ls[0].stream));
    syncAll(ls, nlocal);
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    const double us = 1000.0 * ms / iters;
    const double algbw = (double)bytes / (us * 1e3);
    if (rank == 0) {
      printf("  %12zu %12zu %10.2f %10.2f %10.2f\n", bytes, count, us, algbw, algbw * busFactor((enum Coll)coll, nranks));
      fflush(stdout);
    }
  }
  for (int i = 0; i < nlocal; ++i) {
    CHECK(cudaSetDevice(ls[i].device));
    CHECK(ncclCommDestroy(ls[i].comm));
    cudaFree(ls[i].send);
    cudaFree(ls[i].recv);
  }
  return 0;
}

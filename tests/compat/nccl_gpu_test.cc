// Device buffers through the NCCL API (label gpu). Built against the system
// NCCL header and against gdrcoll's; run with the real libnccl and with ours
// (LD_LIBRARY_PATH or LD_PRELOAD). Every case checks itself where the result
// is exact (small integers in every type, fp8 included) and writes every
// output buffer to a dump, so two runs (real NCCL vs ours) can be compared
// with --compare. Exits 77 ("skipped: no CUDA device") without a GPU.
//
//   nccl_gpu_test <nranks> [--mode fork|initall|env] [--seed S] [--dump PREFIX] [--id-file F]
//     fork:    forked processes, rank r on device r % devices (default)
//     initall: one process drives n devices (ncclCommInitAll, grouped calls)
//     env:     one rank of an mpirun job (OMPI_COMM_WORLD_RANK/SIZE); the
//              unique id goes through --id-file (rank 0 writes it)
//   nccl_gpu_test --compare DUMP_A DUMP_B
//     integers, max/min and exact-input cases must be identical; other float
//     results may differ by the tolerance of gpu_compare.h.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpu_compare.h"
#include "nccl_values.h"

namespace {

#define OK(call)                                                                            \
  do {                                                                                      \
    auto r_ = (call);                                                                       \
    if (r_ != 0) {                                                                          \
      std::fprintf(stderr, "%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #call, (int)r_); \
      _exit(2);                                                                             \
    }                                                                                       \
  } while (0)

using gpucmp::Record;

// One communicator this process drives.
struct Local {
  int rank = 0;
  int device = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  void* in = nullptr;   // device input, kMaxBytes
  void* out = nullptr;  // device output, kMaxBytes
  void* scalar = nullptr;
  FILE* dump = nullptr;
  int failures = 0;
};

constexpr size_t kCount = 4099;  // odd: tails of every vector width
int gRanks = 0;
uint64_t gSeed = 0;
bool gFp8 = true;

size_t maxBytes() { return kCount * 8 * static_cast<size_t>(gRanks); }

enum class Kind { AllReduce, ReduceScatter, AllGather, Broadcast, Reduce, AllToAll, PreMulHost, PreMulDevice };
const char* kindName(Kind k) {
  static const char* n[] = {"allreduce", "reducescatter", "allgather", "bcast", "reduce", "alltoall",
                            "premulsum-host", "premulsum-device"};
  return n[static_cast<int>(k)];
}

struct Case {
  Kind kind;
  ncclDataType_t type;
  ncclRedOp_t op;
  bool exact;  // small-integer inputs: the result is checked and must match bit for bit
};

size_t inCount(const Case& c) {
  return c.kind == Kind::ReduceScatter || c.kind == Kind::AllToAll ? kCount * gRanks : kCount;
}
size_t outCount(const Case& c) {
  return c.kind == Kind::AllGather || c.kind == Kind::AllToAll ? kCount * gRanks : kCount;
}

double scalarOf(int rank, const Case& c) { return ncclval::isFp8(c.type) ? 1.0 + rank % 2 : rank + 1.0; }

void prepare(Local& l, const Case& c, std::vector<unsigned char>& host) {
  const size_t n = inCount(c), es = ncclval::sizeOf(c.type);
  host.assign(n * es, 0);
  for (size_t i = 0; i < n; ++i)
    ncclval::put(host.data(), i, c.type, ncclval::input(gSeed, l.rank, i, c.type, c.op, c.exact, gRanks));
  // Everything on the (non-blocking) stream, so it is ordered before the call.
  OK(cudaSetDevice(l.device));
  OK(cudaMemcpyAsync(l.in, host.data(), n * es, cudaMemcpyHostToDevice, l.stream));
  OK(cudaMemsetAsync(l.out, 0xa5, maxBytes(), l.stream));
}

// The PreMulSum op of each local rank for the current case.
ncclRedOp_t gPreMulOp[16];

void issue(Local& l, const Case& c) {
  const int root = static_cast<int>(gSeed % gRanks);
  ncclRedOp_t op = c.op;
  if (c.kind == Kind::PreMulHost || c.kind == Kind::PreMulDevice) op = gPreMulOp[l.rank];
  switch (c.kind) {
    case Kind::AllReduce:
    case Kind::PreMulHost:
    case Kind::PreMulDevice: OK(ncclAllReduce(l.in, l.out, kCount, c.type, op, l.comm, l.stream)); break;
    case Kind::ReduceScatter: OK(ncclReduceScatter(l.in, l.out, kCount, c.type, op, l.comm, l.stream)); break;
    case Kind::AllGather: OK(ncclAllGather(l.in, l.out, kCount, c.type, l.comm, l.stream)); break;
    case Kind::Broadcast: OK(ncclBroadcast(l.in, l.out, kCount, c.type, root, l.comm, l.stream)); break;
    case Kind::Reduce: OK(ncclReduce(l.in, l.out, kCount, c.type, op, root, l.comm, l.stream)); break;
    case Kind::AllToAll: OK(ncclAlltoAll(l.in, l.out, kCount, c.type, l.comm, l.stream)); break;
  }
}

void makeOps(Local& l, const Case& c) {
  if (c.kind != Kind::PreMulHost && c.kind != Kind::PreMulDevice) return;
  unsigned char s[8] = {0};
  ncclval::put(s, 0, c.type, scalarOf(l.rank, c));
  OK(cudaSetDevice(l.device));
  if (c.kind == Kind::PreMulDevice) {
    // Poisoned, then written on the stream right before the call: a library
    // that reads the scalar out of stream order sees the poison.
    OK(cudaMemsetAsync(l.scalar, 0xff, 8, l.stream));
    OK(cudaMemcpyAsync(l.scalar, s, ncclval::sizeOf(c.type), cudaMemcpyHostToDevice, l.stream));
    OK(ncclRedOpCreatePreMulSum(&gPreMulOp[l.rank], l.scalar, c.type, ncclScalarDevice, l.comm));
  } else {
    OK(ncclRedOpCreatePreMulSum(&gPreMulOp[l.rank], s, c.type, ncclScalarHostImmediate, l.comm));
  }
}

// The exact expectation for output element i of `rank` (exact cases only).
double expected(const Case& c, int rank, size_t i) {
  const int root = static_cast<int>(gSeed % gRanks);
  auto in = [&](int r, size_t j) { return ncclval::input(gSeed, r, j, c.type, c.op, true, gRanks); };
  switch (c.kind) {
    case Kind::AllGather: return in(static_cast<int>(i / kCount), i % kCount);
    case Kind::AllToAll: return in(static_cast<int>(i / kCount), rank * kCount + i % kCount);
    case Kind::Broadcast: return in(root, i);
    case Kind::PreMulHost:
    case Kind::PreMulDevice: {
      double v = 0;
      for (int r = 0; r < gRanks; ++r) v += scalarOf(r, c) * in(r, i);
      return ncclval::wrap(c.type, v);
    }
    default: break;
  }
  const size_t j = c.kind == Kind::ReduceScatter ? rank * kCount + i : i;
  double v = in(0, j);
  for (int r = 1; r < gRanks; ++r) v = ncclval::combine(v, in(r, j), c.op);
  if (c.op == ncclAvg) v = ncclval::isInteger(c.type) ? std::trunc(v / gRanks) : v / gRanks;
  return ncclval::round(c.type, ncclval::wrap(c.type, v));
}

void collect(Local& l, const Case& c, int index) {
  OK(cudaSetDevice(l.device));
  OK(cudaStreamSynchronize(l.stream));
  if (c.kind == Kind::PreMulHost || c.kind == Kind::PreMulDevice) OK(ncclRedOpDestroy(gPreMulOp[l.rank], l.comm));
  const int root = static_cast<int>(gSeed % gRanks);
  const bool hasOutput = c.kind != Kind::Reduce || l.rank == root;
  const size_t n = hasOutput ? outCount(c) : 0, es = ncclval::sizeOf(c.type);
  std::vector<unsigned char> host(n * es);
  if (n) OK(cudaMemcpy(host.data(), l.out, n * es, cudaMemcpyDeviceToHost));
  if (c.exact)
    for (size_t i = 0; i < n; ++i) {
      const double got = ncclval::get(host.data(), i, c.type), want = expected(c, l.rank, i);
      if (got != want) {
        if (l.failures++ < 8)
          std::fprintf(stderr, "rank %d case %d %s %s op %d: [%zu] = %.9g, want %.9g\n", l.rank, index,
                       kindName(c.kind), ncclval::typeName(c.type), static_cast<int>(c.op), i, got, want);
        break;
      }
    }
  if (l.dump) {
    Record r{};
    std::snprintf(r.name, sizeof(r.name), "%s/%s/op%d/%s", kindName(c.kind), ncclval::typeName(c.type),
                  static_cast<int>(c.op), c.exact ? "exact" : "real");
    r.type = static_cast<int>(c.type);
    r.op = static_cast<int>(c.op);
    r.exact = c.exact;
    r.bytes = host.size();
    std::fwrite(&r, sizeof(r), 1, l.dump);
    std::fwrite(host.data(), 1, host.size(), l.dump);
  }
}

std::vector<Case> cases() {
  std::vector<Case> cs;
  const ncclRedOp_t ops[] = {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg};
  for (ncclDataType_t t : ncclval::allTypes()) {
    if (ncclval::isFp8(t) && !gFp8) continue;
    for (ncclRedOp_t op : ops) {
      cs.push_back({Kind::AllReduce, t, op, true});
      if (!ncclval::isInteger(t)) cs.push_back({Kind::AllReduce, t, op, false});
    }
    cs.push_back({Kind::ReduceScatter, t, ncclSum, true});
    cs.push_back({Kind::Reduce, t, ncclMax, true});
    cs.push_back({Kind::AllGather, t, ncclSum, true});
    cs.push_back({Kind::Broadcast, t, ncclSum, true});
    cs.push_back({Kind::AllToAll, t, ncclSum, true});
    cs.push_back({Kind::PreMulHost, t, ncclSum, true});
    cs.push_back({Kind::PreMulDevice, t, ncclSum, true});
    if (!ncclval::isInteger(t)) cs.push_back({Kind::PreMulDevice, t, ncclSum, false});
  }
  return cs;
}

// Runs every case over the communicators this process drives (grouped when
// it drives several, as one thread driving several GPUs must).
int runAll(std::vector<Local>& ls) {
  std::vector<unsigned char> host;
  const std::vector<Case> cs = cases();
  for (size_t k = 0; k < cs.size(); ++k) {
    const Case& c = cs[k];
    for (Local& l : ls) {
      prepare(l, c, host);
      makeOps(l, c);
    }
    if (ls.size() > 1) OK(ncclGroupStart());
    for (Local& l : ls) issue(l, c);
    if (ls.size() > 1) OK(ncclGroupEnd());
    for (Local& l : ls) collect(l, c, static_cast<int>(k));
  }
  int failures = 0;
  for (Local& l : ls) failures += l.failures;
  return failures;
}

void setUp(Local& l, const char* dumpPrefix) {
  OK(cudaSetDevice(l.device));
  OK(cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking));
  OK(cudaMalloc(&l.in, maxBytes()));
  OK(cudaMalloc(&l.out, maxBytes()));
  OK(cudaMalloc(&l.scalar, 8));
  if (dumpPrefix) {
    const std::string path = std::string(dumpPrefix) + ".rank" + std::to_string(l.rank);
    l.dump = std::fopen(path.c_str(), "wb");
    if (!l.dump) {
      std::perror(path.c_str());
      _exit(2);
    }
  }
}

void tearDown(Local& l) {
  OK(cudaSetDevice(l.device));
  OK(ncclCommDestroy(l.comm));
  cudaFree(l.in);
  cudaFree(l.out);
  cudaFree(l.scalar);
  cudaStreamDestroy(l.stream);
  if (l.dump) std::fclose(l.dump);
}

// Fills `dev` with rank r's pattern and checks a received copy of peer p's.
std::vector<int32_t> pattern(int r, size_t n) {
  std::vector<int32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<int32_t>(r * 1000003 + i * 7);
  return v;
}

int checkFrom(const int32_t* dev, int peer, size_t n, const char* what, int rank) {
  std::vector<int32_t> got(n);
  OK(cudaMemcpy(got.data(), dev, n * sizeof(int32_t), cudaMemcpyDeviceToHost));
  if (got == pattern(peer, n)) return 0;
  std::fprintf(stderr, "rank %d: %s: data from rank %d is wrong\n", rank, what, peer);
  return 1;
}

// Point-to-point as a communicator's first device operation: a ring
// exchange inside a group on the fresh communicator, then a two-rank
// communicator (what PyTorch makes for dist.send/recv) whose first operation
// is a lone send, answered by a lone send back.
int p2pFirst(Local& l) {
  if (gRanks < 2) return 0;
  const size_t n = 1 << 16;
  int32_t *a = nullptr, *b = nullptr;
  OK(cudaMalloc(&a, n * sizeof(int32_t)));
  OK(cudaMalloc(&b, n * sizeof(int32_t)));
  const std::vector<int32_t> mine = pattern(l.rank, n);
  OK(cudaMemcpy(a, mine.data(), n * sizeof(int32_t), cudaMemcpyHostToDevice));
  const int next = (l.rank + 1) % gRanks, prev = (l.rank + gRanks - 1) % gRanks;
  OK(ncclGroupStart());
  OK(ncclSend(a, n, ncclInt32, next, l.comm, l.stream));
  OK(ncclRecv(b, n, ncclInt32, prev, l.comm, l.stream));
  OK(ncclGroupEnd());
  OK(cudaStreamSynchronize(l.stream));
  int failures = checkFrom(b, prev, n, "ring send/recv first", l.rank);
  const bool paired = l.rank / 2 * 2 + 1 < gRanks;
  ncclComm_t pair = nullptr;
  OK(ncclCommSplit(l.comm, paired ? l.rank / 2 : NCCL_SPLIT_NOCOLOR, l.rank, &pair, nullptr));
  if (paired) {
    const int peer = l.rank ^ 1;
    OK(cudaMemset(b, 0, n * sizeof(int32_t)));
    if (l.rank % 2 == 0) {
      OK(ncclSend(a, n, ncclInt32, 1, pair, l.stream));
      OK(ncclRecv(b, n, ncclInt32, 1, pair, l.stream));
    } else {
      OK(ncclRecv(b, n, ncclInt32, 0, pair, l.stream));
      OK(ncclSend(a, n, ncclInt32, 0, pair, l.stream));
    }
    OK(cudaStreamSynchronize(l.stream));
    failures += checkFrom(b, peer, n, "pair communicator, send first", l.rank);
    OK(ncclCommDestroy(pair));
  }
  cudaFree(a);
  cudaFree(b);
  std::printf("rank %d: point-to-point first: %s\n", l.rank, failures ? "FAIL" : "ok");
  return failures;
}

// One process driving every rank: a ring of sends and receives in one group
// is the communicators' first device operation.
int p2pFirstAll(std::vector<Local>& ls) {
  const int n = static_cast<int>(ls.size());
  if (n < 2) return 0;
  const size_t count = 1 << 16;
  std::vector<int32_t*> a(n), b(n);
  for (int r = 0; r < n; ++r) {
    OK(cudaSetDevice(ls[r].device));
    OK(cudaMalloc(&a[r], count * sizeof(int32_t)));
    OK(cudaMalloc(&b[r], count * sizeof(int32_t)));
    const std::vector<int32_t> mine = pattern(r, count);
    OK(cudaMemcpy(a[r], mine.data(), count * sizeof(int32_t), cudaMemcpyHostToDevice));
  }
  OK(ncclGroupStart());
  for (int r = 0; r < n; ++r) {
    OK(cudaSetDevice(ls[r].device));
    OK(ncclSend(a[r], count, ncclInt32, (r + 1) % n, ls[r].comm, ls[r].stream));
    OK(ncclRecv(b[r], count, ncclInt32, (r + n - 1) % n, ls[r].comm, ls[r].stream));
  }
  OK(ncclGroupEnd());
  int failures = 0;
  for (int r = 0; r < n; ++r) {
    OK(cudaSetDevice(ls[r].device));
    OK(cudaStreamSynchronize(ls[r].stream));
    failures += checkFrom(b[r], (r + n - 1) % n, count, "one-process ring send/recv first", r);
    cudaFree(a[r]);
    cudaFree(b[r]);
  }
  std::printf("one process, %d ranks: point-to-point first: %s\n", n, failures ? "FAIL" : "ok");
  return failures;
}

int runOne(int rank, int ndev, ncclUniqueId id, const char* dump) {
  Local l;
  l.rank = rank;
  l.device = rank % ndev;
  setUp(l, dump);
  const ncclResult_t init = ncclCommInitRank(&l.comm, gRanks, id, rank);
  if (init == ncclInvalidUsage && ndev < gRanks) {
    // NCCL refuses two ranks on one GPU; gdrcoll allows it (its tests run so).
    std::printf("rank %d: this libnccl refuses %d ranks on %d device(s): skipped\n", rank, gRanks, ndev);
    _exit(77);
  }
  OK(init);
  const int p2pFailures = p2pFirst(l);
  std::vector<Local> ls{l};
  const int failures = runAll(ls) + p2pFailures;
  tearDown(ls[0]);
  return failures ? 1 : 0;
}

int runInitAll(int ndev, const char* dump) {
  if (ndev < gRanks) {
    std::fprintf(stderr, "initall needs %d devices, found %d\n", gRanks, ndev);
    return 2;
  }
  std::vector<Local> ls(gRanks);
  std::vector<ncclComm_t> comms(gRanks);
  std::vector<int> devs(gRanks);
  for (int r = 0; r < gRanks; ++r) {
    ls[r].rank = r;
    ls[r].device = devs[r] = r;
    setUp(ls[r], dump);
  }
  OK(ncclCommInitAll(comms.data(), gRanks, devs.data()));
  for (int r = 0; r < gRanks; ++r) ls[r].comm = comms[r];
  const int p2pFailures = p2pFirstAll(ls);
  const int failures = runAll(ls) + p2pFailures;
  for (Local& l : ls) tearDown(l);
  return failures ? 1 : 0;
}

// mpirun: rank 0 writes the id to a file the others wait for (no MPI in an
// NCCL program; the launcher only starts the processes).
int runEnv(int ndev, const char* dump, const char* idFile) {
  const char* r = std::getenv("OMPI_COMM_WORLD_RANK");
  const char* s = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (!r || !s || !idFile) {
    std::fprintf(stderr, "--mode env needs OMPI_COMM_WORLD_RANK/SIZE (mpirun) and --id-file\n");
    return 2;
  }
  const int rank = std::atoi(r);
  if (std::atoi(s) != gRanks) {
    std::fprintf(stderr, "mpirun started %s ranks, the command line says %d\n", s, gRanks);
    return 2;
  }
  ncclUniqueId id;
  const std::string tmp = std::string(idFile) + ".tmp";
  if (rank == 0) {
    OK(ncclGetUniqueId(&id));
    FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f || std::fwrite(&id, sizeof(id), 1, f) != 1 || std::fclose(f) != 0 || std::rename(tmp.c_str(), idFile) != 0) {
      std::perror(idFile);
      return 2;
    }
  } else {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    FILE* f = nullptr;
    while (!(f = std::fopen(idFile, "rb"))) {
      if (std::chrono::steady_clock::now() > deadline) {
        std::fprintf(stderr, "rank %d: no unique id in %s after 60 s\n", rank, idFile);
        return 2;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const size_t got = std::fread(&id, sizeof(id), 1, f);
    std::fclose(f);
    if (got != 1) return 2;
  }
  return runOne(rank, ndev, id, dump);
}

int runForked(int ndev, const char* dump) {
  std::vector<int> fds(2 * gRanks);
  for (int r = 1; r < gRanks; ++r)
    if (pipe(&fds[2 * r]) != 0) return 3;
  std::vector<pid_t> kids;
  for (int r = 0; r < gRanks; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      ncclUniqueId id;
      if (r == 0) {
        OK(ncclGetUniqueId(&id));
        for (int p = 1; p < gRanks; ++p)
          if (write(fds[2 * p + 1], &id, sizeof(id)) != sizeof(id)) _exit(3);
      } else if (read(fds[2 * r], &id, sizeof(id)) != sizeof(id)) {
        _exit(3);
      }
      _exit(runOne(r, ndev, id, dump));
    }
    kids.push_back(pid);
  }
  int failed = 0, skipped = 0;
  for (pid_t k : kids) {
    int st = 0;
    waitpid(k, &st, 0);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77) ++skipped;
    else failed += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
  }
  if (failed) return 1;
  return skipped ? 77 : 0;
}

// Devices and fp8 support, asked in a child process: CUDA must not be
// initialized in a process that forks ranks afterwards. The exit status is
// the device count, plus 128 when device 0 is sm_89 or newer.
void probeDevices(int* ndev, bool* fp8) {
  pid_t pid = fork();
  if (pid == 0) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n <= 0) _exit(0);
    cudaDeviceProp prop{};
    const bool has = cudaGetDeviceProperties(&prop, 0) == cudaSuccess && prop.major * 10 + prop.minor >= 89;
    _exit((n > 127 ? 127 : n) | (has ? 128 : 0));
  }
  int st = 0;
  waitpid(pid, &st, 0);
  const int code = WIFEXITED(st) ? WEXITSTATUS(st) : 0;
  *ndev = code & 127;
  *fp8 = (code & 128) != 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && !std::strcmp(argv[1], "--compare")) return gpucmp::compareDumps(argv[2], argv[3]);
  gRanks = argc > 1 ? std::atoi(argv[1]) : 2;
  std::string mode = "fork";
  const char* dump = nullptr;
  const char* idFile = nullptr;
  gSeed = std::random_device{}();
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--mode")) mode = argv[i + 1];
    else if (!std::strcmp(argv[i], "--seed")) gSeed = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--dump")) dump = argv[i + 1];
    else if (!std::strcmp(argv[i], "--id-file")) idFile = argv[i + 1];
    else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (gRanks < 1 || gRanks > 16) {
    std::fprintf(stderr, "nranks must be 1..16\n");
    return 2;
  }
  int ndev = 0;
  probeDevices(&ndev, &gFp8);  // NCCL reduces fp8 from sm_89/sm_90 on
  if (ndev == 0) {
    std::printf("skipped: no CUDA device\n");
    return 77;
  }
  Dl_info info{};
  dladdr(reinterpret_cast<void*>(&ncclGetVersion), &info);
  std::printf("libnccl: %s, seed %llu, %d ranks (%s) on %d devices, fp8 %s\n", info.dli_fname ? info.dli_fname : "?",
              static_cast<unsigned long long>(gSeed), gRanks, mode.c_str(), ndev, gFp8 ? "on" : "off (pre-sm_89)");
  std::fflush(stdout);
  int rc;
  if (mode == "fork") rc = runForked(ndev, dump);
  else if (mode == "initall") rc = runInitAll(ndev, dump);
  else if (mode == "env") rc = runEnv(ndev, dump, idFile);
  else {
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  }
  std::printf("%s\n", rc == 77 ? "SKIPPED" : rc ? "FAIL" : "PASS");
  return rc;
}

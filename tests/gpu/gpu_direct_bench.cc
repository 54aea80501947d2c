// The GPUDirect path (paths/direct) against the staged path, both through
// the software NIC, on device buffers between two "hosts": two forked ranks
// sharing the GPU, each with its own GDR_HOST_ID, GDR_TRANSPORT=ib,
// GDR_IB_PROVIDER=softnic. Staged (GDR_NET_GDR=0): device -> pinned host on
// the caller's stream, the software NIC between host buffers
// (process_vm_writev), host -> device. GPUDirect: the software NIC writes
// the peer's device memory by a CUDA copy through a CUDA IPC mapping.
//
// Per collective (all-reduce, all-gather, a send/recv exchange) and size
// (8 B to 64 MiB): the time per call (median of --reps timed runs of
// `iters` calls each, the stream synchronized at the end of each run), the
// bandwidth (bytes / time) and both ranks' CPU time (getrusage of the whole
// process: calling thread, progress threads, the software NIC's) per GB
// their links carried, and as a share of the wall time. Rank 0 prints one
// table row per measurement:
//   | path | collective | bytes | us | GB/s | CPU s/GB r0 | r1 | CPU % r0 | r1 |
// scripts/gpu/gpudirect_table.py turns the rows of several rounds into the
// comparison table of bench/results/gpudirect.md.
//
//   gdr-gpu-direct-bench [--rounds R] [--reps N] [--paths direct,staged,flags,flags-kernel]
// The paths run in turn, R rounds (interleaved, so a noisy moment hits
// both): "direct" (GDR_DIRECT_ORDER=host), "staged" (GDR_NET_GDR=0),
// "flags" (GDR_DIRECT_ORDER=flags, the stream waiting by
// cuStreamWaitValue32, GDR_DIRECT_WAIT's default), "flags-kernel" (the same
// waiting by a polling kernel). Every rank runs under
// CUDA_MODULE_LOADING=EAGER, where GDR_DIRECT_ORDER=auto takes flags order.
// Exit 0 when every run passed, 77 without a CUDA device, 3 when a rank
// hung, 1 otherwise.
#include <cuda_runtime.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "direct_ranks.h"
#include "gdrcoll.h"
#include "paths/direct/path.h"

namespace {

using gdrtest::direct::kNoDevice;

int gReps = 3;

double cpuSeconds() {
  rusage r;
  getrusage(RUSAGE_SELF, &r);
  auto sec = [](const timeval& t) { return t.tv_sec + t.tv_usec * 1e-6; };
  return sec(r.ru_utime) + sec(r.ru_stime);
}

const char* pathName() {
  const char* gdr = std::getenv("GDR_NET_GDR");
  if (gdr && std::string(gdr) == "0") return "staged";
  const char* order = std::getenv("GDR_DIRECT_ORDER");
  if (!order || std::string(order) != "flags") return "direct";
  const char* wait = std::getenv("GDR_DIRECT_WAIT");
  return wait && std::string(wait) == "kernel" ? "flags-kernel" : "flags";
}

int bench(int me, int n, gdrComm_t comm) {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) return kNoDevice;
  const std::string path = pathName();
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const size_t sizes[] = {8, 4096, 65536, 1 << 20, 16 << 20, 64 << 20};
  const size_t maxBytes = 64u << 20;
  char *in = nullptr, *out = nullptr;
  CUDA_OK(cudaMalloc(&in, maxBytes * n));
  CUDA_OK(cudaMalloc(&out, maxBytes * n));
  CUDA_OK(cudaMemset(in, 0, maxBytes * n));
  CUDA_OK(cudaMemset(out, 0, maxBytes * n));
  CUDA_OK(cudaDeviceSynchronize());
  const int peer = (me + 1) % n;
  for (const std::string coll : {"allreduce", "allgather", "sendrecv"}) {
    for (size_t bytes : sizes) {
      const size_t count = bytes / 4;
      auto once = [&] {
        if (coll == "allreduce") return gdrAllReduce(in, out, count, gdrFloat32, gdrSum, comm, s);
        if (coll == "allgather") return gdrAllGather(in, count, out, gdrFloat32, comm, s);
        gdrGroupStart();
        gdrSend(in, count, gdrFloat32, peer, comm, s);
        gdrRecv(out, count, gdrFloat32, (me + n - 1) % n, comm, s);
        return gdrGroupEnd();
      };
      const int iters = bytes <= (1 << 20) ? 50 : 8;
      CK(once() == gdrSuccess, "%s %zu: %s", coll.c_str(), bytes, gdrGetLastError(comm));
      CUDA_OK(cudaStreamSynchronize(s));
      std::vector<double> us;
      const uint64_t ops0 = gdr::paths::direct::opsRun();
      const double cpu0 = cpuSeconds();
      const auto w0 = std::chrono::steady_clock::now();
      bool ok = true;
      for (int rep = 0; rep < gReps; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < iters; ++i) ok &= once() == gdrSuccess;
        CUDA_OK(cudaStreamSynchronize(s));
        us.push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                .count() /
            iters);
      }
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
      const double cpu = cpuSeconds() - cpu0;
      gdrResult_t async = gdrSuccess;
      gdrCommGetAsyncError(comm, &async);
      CK(ok && async == gdrSuccess, "bench %s %zu: %s", coll.c_str(), bytes, gdrGetLastError(comm));
      if (!ok || async != gdrSuccess) return 1;
      const bool direct =
          gdr::paths::direct::opsRun() - ops0 == static_cast<uint64_t>(iters) * gReps;
      CK(direct == (path != "staged"), "bench: the %s run went the other path", path.c_str());
      // Every rank's CPU, over the host path (host buffers).
      std::vector<double> cpus(n);
      CK(gdrAllGather(&cpu, 1, cpus.data(), gdrFloat64, comm, nullptr) == gdrSuccess,
         "gathering the CPU times: %s", gdrGetLastError(comm));
      // Bytes each rank's links carried: (n - 1) blocks each way per
      // collective, one message each way per exchange.
      const double moved =
          static_cast<double>(bytes) * (coll == "sendrecv" ? 1 : n - 1) * iters * gReps;
      std::sort(us.begin(), us.end());
      const double med = us[us.size() / 2];
      if (me == 0) {
        std::ostringstream row;
        char cell[64];
        std::snprintf(cell, sizeof cell, "| %s | %s | %zu | %.1f | %.3f |", path.c_str(),
                      coll.c_str(), bytes, med, bytes / med / 1e3);
        row << cell;
        for (double c : cpus) {
          std::snprintf(cell, sizeof cell, " %.3f |", c / (moved / 1e9));
          row << cell;
        }
        for (double c : cpus) {
          std::snprintf(cell, sizeof cell, " %.0f |", 100.0 * c / wall);
          row << cell;
        }
        std::printf("%s\n", row.str().c_str());
        std::fflush(stdout);
      }
    }
  }
  cudaFree(in);
  cudaFree(out);
  return 0;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string p; std::getline(ss, p, ',');)
    if (!p.empty()) out.push_back(p);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 2;
  std::vector<std::string> paths = {"direct", "staged"};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--rounds")
      rounds = std::max(1, std::atoi(argv[i + 1]));
    else if (a == "--reps")
      gReps = std::max(1, std::atoi(argv[i + 1]));
    else if (a == "--paths")
      paths = split(argv[i + 1]);
    else {
      std::fprintf(stderr,
                   "usage: %s [--rounds R] [--reps N] [--paths direct,staged,flags,flags-kernel]\n",
                   argv[0]);
      return 2;
    }
  }
  std::printf(
      "| path | collective | bytes | time (us) | GB/s (bytes/time) | CPU s/GB rank 0 | CPU s/GB "
      "rank 1 | CPU %% rank 0 | CPU %% rank 1 |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
  std::fflush(stdout);
  int rc = 0;
  for (int r = 0; r < rounds; ++r) {
    for (const std::string& p : paths) {
      gdrtest::Env env = gdrtest::direct::softNicEnv();
      env.push_back({"CUDA_MODULE_LOADING", "EAGER"});
      if (p == "staged") {
        env.push_back({"GDR_NET_GDR", "0"});
      } else if (p == "flags" || p == "flags-kernel") {
        env.push_back({"GDR_DIRECT_ORDER", "flags"});
        env.push_back({"GDR_DIRECT_WAIT", p == "flags" ? "stream" : "kernel"});
      } else if (p == "direct") {
        env.push_back({"GDR_DIRECT_ORDER", "host"});
      } else {
        std::fprintf(stderr, "unknown path '%s' (direct, staged, flags, flags-kernel)\n",
                     p.c_str());
        return 2;
      }
      const std::string what = "bench " + p + " round " + std::to_string(r + 1);
      const int one = gdrtest::direct::report(
          what.c_str(), gdrtest::runRanks(2, bench, env, 60, gdrtest::direct::ownHost));
      if (one == kNoDevice) return one;
      rc |= one;
    }
  }
  return rc;
}

// GDR_FAULT on the staged device path. Three ranks count as three hosts
// (GDR_HOST_ID), so a collective on device buffers runs the staged path:
// pinned host segments, the socket transport, the progress thread running
// the executor, where the fault hook is. The ranks share the GPUs (rank %
// count; one GPU is enough). Every collective x the first, a middle and the
// last message step x kill, close, corrupt, and a stall of a middle
// all-reduce step: on every surviving rank the stream comes free and a call
// fails within 2 x GDR_TIMEOUT_MS, its error naming rank 1 and the step.
//
// Ranks are forked processes (tests/support/multiproc.h), not mpirun's:
// Open MPI ends the job when a rank is killed. The parent never touches
// CUDA (a child of a process that did cannot use it).
//
// Usage: gdr-gpu-fault-staged [--coll NAME]... [--kinds kill,close,...]
// [--no-stall] [--host]; --host runs the same cases on host buffers (the
// host path: a check of this driver where no GPU is). Prints one line per case ("case ... ok" /
// "case ... FAILED: why") and a total; exit 0 when every case passed, 77 without a CUDA device.
#include <cuda_runtime.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "comm/comm.h"
#include "gdrcoll.h"
#include "support/multiproc.h"

namespace {

bool gHostBuffers = false;  // --host
constexpr int kRanks = 3;
constexpr int kFaultRank = 1;
constexpr int kTimeoutMs = 2000;
constexpr size_t kCount = 999;  // odd: uneven blocks; one staged segment
constexpr int kNoDevice = 77;
const char* const kColls[] = {"allreduce",     "bcast",    "reduce", "allgather",
                              "reducescatter", "alltoall", "barrier"};

struct DevBufs {
  float* in = nullptr;
  float* out = nullptr;
  cudaStream_t s = nullptr;
};

gdrResult_t callOnce(const std::string& coll, const DevBufs& b, gdrComm_t comm) {
  if (coll == "allreduce") return gdrAllReduce(b.in, b.out, kCount, gdrFloat32, gdrSum, comm, b.s);
  if (coll == "bcast") return gdrBroadcast(b.out, kCount, gdrFloat32, 0, comm, b.s);
  if (coll == "reduce") return gdrReduce(b.in, b.out, kCount, gdrFloat32, gdrSum, 0, comm, b.s);
  if (coll == "allgather") return gdrAllGather(b.in, kCount / 3, b.out, gdrFloat32, comm, b.s);
  if (coll == "reducescatter")
    return gdrReduceScatter(b.in, b.out, kCount / 3, gdrFloat32, gdrSum, comm, b.s);
  if (coll == "alltoall") return gdrAllToAll(b.in, kCount / 3, b.out, gdrFloat32, comm, b.s);
  return gdrBarrier(comm, b.s);
}

// A device call, then its stream; the communicator's asynchronous error
// when the call itself returned success (the progress thread fails it).
gdrResult_t callAndSync(const std::string& coll, const DevBufs& b, gdrComm_t comm) {
  gdrResult_t r = callOnce(coll, b, comm);
  if (r != gdrSuccess || !b.s) return r;
  if (cudaStreamSynchronize(b.s) != cudaSuccess) return gdrCudaError;
  gdrResult_t async = gdrSuccess;
  gdrCommGetAsyncError(comm, &async);
  return async;
}

bool setUpDevice(int rank, DevBufs* b) {
  if (gHostBuffers) {
    static std::vector<float> in, out;
    in.assign(3 * kCount, 1.0f + rank);
    out.assign(3 * kCount, 0.0f);
    b->in = in.data();
    b->out = out.data();
    return true;
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) return false;
  if (cudaSetDevice(rank % ndev) != cudaSuccess) return false;
  std::vector<float> h(3 * kCount, 1.0f + rank);
  return cudaStreamCreateWithFlags(&b->s, cudaStreamNonBlocking) == cudaSuccess &&
         cudaMalloc(&b->in, h.size() * sizeof(float)) == cudaSuccess &&
         cudaMalloc(&b->out, h.size() * sizeof(float)) == cudaSuccess &&
         cudaMemcpy(b->in, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice) ==
             cudaSuccess &&
         cudaMemset(b->out, 0, h.size() * sizeof(float)) == cudaSuccess;
}

void separateHosts(int rank) {
  setenv("GDR_HOST_ID", ("fault-staged-host-" + std::to_string(rank)).c_str(), 1);
}

// The collectives a communicator has numbered once the warm-up call
// (which also sets up the device path: host all-gathers of its own) is
// done; a child's exit status carries it, 200 + the count.
int probeWarmUpSeq(const std::string& coll) {
  auto exits = gdrtest::runRanks(
      kRanks,
      [&](int rank, int, gdrComm_t comm) {
        DevBufs b;
        if (!setUpDevice(rank, &b)) _exit(kNoDevice);
        if (callAndSync(coll, b, comm) != gdrSuccess) {
          std::fprintf(stderr, "[rank %d] warm-up %s failed: %s\n", rank, coll.c_str(),
                       gdrGetLastError(comm));
          _exit(1);
        }
        const uint64_t seq = static_cast<gdr::Communicator*>(comm)->collectivesNumbered();
        gdrCommDestroy(comm);
        _exit(seq < 50 ? 200 + static_cast<int>(seq) : 1);
        return 0;
      },
      {{"GDR_FAULT", ""}, {"GDR_TIMEOUT_MS", std::to_string(kTimeoutMs)}}, 60, separateHosts);
  for (const auto& e : exits)
    if (e.code == kNoDevice) return -kNoDevice;
  for (const auto& e : exits)
    if (e.code != exits[0].code || e.code < 200) return -1;
  return exits[0].code - 200;
}

// The fault hits the first call after the warm-up on rank 1; every rank
// makes two device calls after the warm-up, then a host barrier.
std::string faultCase(const std::string& coll, uint64_t op, const char* step, const char* kind) {
  const std::string spec =
      std::to_string(kFaultRank) + ":" + std::to_string(op) + ":" + step + ":" + kind;
  auto exits = gdrtest::runRanks(
      kRanks,
      [&](int rank, int, gdrComm_t comm) {
        DevBufs b;
        if (!setUpDevice(rank, &b)) _exit(kNoDevice);
        gdrResult_t r = callAndSync(coll, b, comm);
        if (rank == kFaultRank)
          CHILD_CHECK(r == gdrSuccess, "%s: the faulty rank's call before the fault failed: %s",
                      spec.c_str(), gdrGetLastError(comm));
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < 2 && r == gdrSuccess; ++i) r = callAndSync(coll, b, comm);
        // The error's text: a failure found by the progress thread shows
        // in the next call that the communicator refuses.
        gdrResult_t last = gdrBarrier(comm, nullptr);
        if (r == gdrSuccess) r = last;
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        if (rank != kFaultRank) {
          const std::string e = gdrGetLastError(comm);
          CHILD_CHECK(r != gdrSuccess, "%s %s: rank %d never failed", coll.c_str(), spec.c_str(),
                      rank);
          CHILD_CHECK(ms < 2 * kTimeoutMs, "%s %s: rank %d failed after %.0f ms", coll.c_str(),
                      spec.c_str(), rank, ms);
          CHILD_CHECK(e.find("rank 1") != std::string::npos && e.find("step") != std::string::npos,
                      "%s %s: rank %d: the error names neither: %s", coll.c_str(), spec.c_str(),
                      rank, e.c_str());
          std::fprintf(stderr, "[rank %d] %s %s: %s after %.0f ms: %s\n", rank, coll.c_str(),
                       spec.c_str(), gdrGetErrorString(r), ms, e.c_str());
        }
        // Linger so this rank's abort notices are read before its exit
        // resets its connections (a reset discards them unread).
        usleep(100 * 1000);
        _exit(gdrtest::childFailures() ? 1 : 0);
        return 0;
      },
      {{"GDR_FAULT", spec}, {"GDR_TIMEOUT_MS", std::to_string(kTimeoutMs)}}, 60, separateHosts);
  std::string why;
  for (int r = 0; r < kRanks; ++r) {
    if (exits[r].code == kNoDevice) return "no CUDA device in a child";
    if (r == kFaultRank) {
      if (exits[r].timedOut) why += " the faulty rank hung;";
      continue;
    }
    if (exits[r].timedOut)
      why += " rank " + std::to_string(r) + " hung;";
    else if (exits[r].code != 0)
      why += " rank " + std::to_string(r) + " failed a check (its stderr);";
  }
  return why;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find(',', b);
    if (e == std::string::npos) e = s.size();
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> colls, kinds = {"kill", "close", "corrupt"};
  bool stall = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--coll" && i + 1 < argc)
      colls.push_back(argv[++i]);
    else if (a == "--kinds" && i + 1 < argc)
      kinds = split(argv[++i]);
    else if (a == "--no-stall")
      stall = false;
    else if (a == "--host")
      gHostBuffers = true;
    else {
      std::fprintf(
          stderr, "usage: %s [--coll NAME]... [--kinds kill,close,corrupt] [--no-stall] [--host]\n",
          argv[0]);
      return 2;
    }
  }
  if (colls.empty()) colls.assign(std::begin(kColls), std::end(kColls));
  int cases = 0, failed = 0;
  auto report = [&](const std::string& name, const std::string& why) {
    ++cases;
    if (!why.empty()) ++failed;
    std::printf("case %s %s%s\n", name.c_str(), why.empty() ? "ok" : "FAILED:", why.c_str());
    std::fflush(stdout);
  };
  for (const std::string& coll : colls) {
    const int seq = probeWarmUpSeq(coll);
    if (seq == -kNoDevice) {
      std::printf("skipped: no CUDA device\n");
      return kNoDevice;
    }
    if (seq < 0) {
      report(coll + " warm-up", " the warm-up failed or the ranks numbered it differently");
      continue;
    }
    for (const std::string& kind : kinds)
      for (const char* step : {"first", "middle", "last"})
        report(coll + " " + step + " " + kind, faultCase(coll, seq + 1, step, kind.c_str()));
    if (stall && coll == "allreduce")
      report(coll + " middle stall", faultCase(coll, seq + 1, "middle", "stall"));
  }
  std::printf("fault matrix on the %s path: %d cases, %d failed\n",
              gHostBuffers ? "host" : "staged", cases, failed);
  return failed ? 1 : 0;
}

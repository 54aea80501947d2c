// Device work on the status board, and gdrCommRevoke racing staged work,
// on one GPU that forked ranks share (tests/support/multiproc.h; the parent
// never touches CUDA).
//
// Board (np 2): with both ranks on one host the fused cuda_ipc kernels run:
// a device all-reduce and a device send whose peer joins late show as in
// flight, waiting for that peer, until their completion is seen, then as
// done. With two host ids the staged path runs: an operation behind a
// spinning kernel shows its progress thread waiting for the stream; a
// device receive whose peer sends late shows its host part waiting for the
// peer.
// Revoke (np 2, staged path): rank 0 revokes while its staged work waits for
// a late peer, from the calling thread after the calls returned, at several
// delays, and from a watchdog thread while the main thread waits in a host
// call, and while the progress thread waits for a stream held by a spinning
// kernel; then destroys at once. Every stream comes free within a bound, the
// communicator reports gdrRemoteError, every later call fails fast, and the
// peer learns of the revoke. np 1: a revoked one-rank communicator refuses
// device work at once.
// The GPUDirect path (two host ids, verbs over the software NIC): an
// all-reduce whose peer joins late shows as in flight with its network part
// waiting for that peer, one behind a spinning kernel as waiting for the
// stream, then as done; a revoke from a watchdog thread while the call
// waits for the late peer, and while it waits for a held stream, frees the
// call, the stream and the peer, as on the staged path.
//
// Usage: gdr-gpu-device-board [--only NAME]. Prints "case NAME ok" or
// "case NAME FAILED: why" per case and a total; exit 0 when all pass, 77
// without a CUDA device.
#include <cuda_runtime.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "comm/status_report.h"
#include "gdrcoll.h"
#include "gpu_kernels.h"
#include "support/multiproc.h"

namespace {

constexpr int kNoDevice = 77;
constexpr int kTimeoutMs = 4000;
constexpr size_t kCount = 1 << 18;  // floats: 1 MiB
using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}
void sleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

struct Dev {
  float* in = nullptr;
  float* out = nullptr;
  cudaStream_t s = nullptr;
};

bool setUp(Dev* d) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) return false;
  std::vector<float> h(kCount, 1.0f);
  return cudaSetDevice(0) == cudaSuccess &&
         cudaStreamCreateWithFlags(&d->s, cudaStreamNonBlocking) == cudaSuccess &&
         cudaMalloc(&d->in, kCount * sizeof(float)) == cudaSuccess &&
         cudaMalloc(&d->out, kCount * sizeof(float)) == cudaSuccess &&
         cudaMemcpy(d->in, h.data(), kCount * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess;
}

// Waits for the stream with a deadline (never hangs the test): true when it
// drained in time.
bool drains(cudaStream_t s, int ms, double* took = nullptr) {
  const auto t0 = Clock::now();
  while (msSince(t0) < ms) {
    cudaError_t rc = cudaStreamQuery(s);
    if (rc == cudaSuccess) {
      if (took) *took = msSince(t0);
      return true;
    }
    if (rc != cudaErrorNotReady) return false;
    sleepMs(1);
  }
  return false;
}

gdrResult_t asyncErr(gdrComm_t c) {
  gdrResult_t a = gdrSuccess;
  gdrCommGetAsyncError(c, &a);
  return a;
}

std::string board() { return gdr::status::renderText("test"); }
bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

// Spins about `ms` on the GPU before what follows on the stream.
cudaError_t spinFor(const Dev& d, int ms) { return testSpinNs(1000000ull * ms, d.s); }

using Body = std::function<void(int rank, gdrComm_t comm, const Dev& d)>;

void separateHosts(int rank) {
  setenv("GDR_HOST_ID", ("board-host-" + std::to_string(rank)).c_str(), 1);
}

// Which device path a case runs: cuda_ipc (one host), staged (two host
// ids), GPUDirect (two host ids, verbs over the software NIC).
enum class Path { Ipc, Staged, Direct };

// Runs `body` on `n` forked ranks; "" when every rank passed its checks.
std::string runCase(int n, Path path, const Body& body) {
  gdrtest::Env env = {{"GDR_TIMEOUT_MS", std::to_string(kTimeoutMs)}, {"GDR_STATUS", "1"}};
  if (path == Path::Direct) {
    env.push_back({"GDR_TRANSPORT", "ib"});
    env.push_back({"GDR_IB_PROVIDER", "softnic"});
    // The cases check host order's board (waits=stream while the call
    // waits for its stream) and its revoke (the blocked call returns the
    // error), whatever order `auto` would take here.
    env.push_back({"GDR_DIRECT_ORDER", "host"});
  }
  auto exits = gdrtest::runRanks(
      n,
      [&](int rank, int, gdrComm_t comm) {
        Dev d;
        if (!setUp(&d)) _exit(kNoDevice);
        body(rank, comm, d);
        _exit(gdrtest::childFailures() ? 1 : 0);
        return 0;
      },
      env, 60, path != Path::Ipc ? std::function<void(int)>(separateHosts) : nullptr);
  std::string why;
  for (int r = 0; r < n; ++r) {
    if (exits[r].code == kNoDevice) return "no CUDA device";
    if (exits[r].timedOut)
      why += " rank " + std::to_string(r) + " hung;";
    else if (exits[r].code != 0)
      why += " rank " + std::to_string(r) + " failed (exit " + std::to_string(exits[r].code) +
             ", signal " + std::to_string(exits[r].signal) + ");";
  }
  return why;
}

// Both ranks: a device all-reduce that completes (sets the path up).
void warmUp(int rank, gdrComm_t comm, const Dev& d) {
  CHILD_CHECK(gdrAllReduce(d.in, d.out, kCount, gdrFloat32, gdrSum, comm, d.s) == gdrSuccess,
              "warm-up: %s", gdrGetLastError(comm));
  CHILD_CHECK(drains(d.s, 20000), "rank %d: the warm-up never finished", rank);
  CHILD_CHECK(asyncErr(comm) == gdrSuccess, "warm-up failed: %s", gdrGetLastError(comm));
}

// ---- the board --------------------------------------------------------------

void boardIpc(int rank, gdrComm_t comm, const Dev& d) {
  warmUp(rank, comm, d);
  if (rank == 1) sleepMs(1200);  // joins late: rank 0's kernel waits for it
  CHILD_CHECK(gdrAllReduce(d.in, d.out, kCount, gdrFloat32, gdrSum, comm, d.s) == gdrSuccess,
              "all-reduce");
  if (rank == 0) {
    sleepMs(400);
    const std::string t = board();
    CHILD_CHECK(
        has(t,
            "device-inflight seq=2 coll=allreduce dtype=float32 op=sum count=262144 path=cuda_ipc "
            "peer=1 waits=1 "),
        "the waiting kernel is not on the board:\n%s", t.c_str());
    CHILD_CHECK(has(t, "device-done seq=1 coll=allreduce"), "the warm-up is not done:\n%s",
                t.c_str());
  }
  CHILD_CHECK(drains(d.s, 20000), "rank %d: the all-reduce never finished", rank);
  if (rank == 0) {
    const std::string t = board();
    CHILD_CHECK(!has(t, "device-inflight"), "still in flight after it finished:\n%s", t.c_str());
    CHILD_CHECK(has(t, "device-done seq=2 coll=allreduce"), "not done:\n%s", t.c_str());
  }
  // A device send whose receive comes late.
  if (rank == 0) {
    CHILD_CHECK(gdrSend(d.in, kCount, gdrFloat32, 1, comm, d.s) == gdrSuccess, "send");
    sleepMs(400);
    const std::string t = board();
    CHILD_CHECK(
        has(t,
            "device-inflight seq=3 coll=send dtype=uint8 op=- count=1048576 path=cuda_ipc peer=1 "
            "waits=1 "),
        "the waiting send is not on the board:\n%s", t.c_str());
  } else {
    sleepMs(1000);
    CHILD_CHECK(gdrRecv(d.out, kCount, gdrFloat32, 0, comm, d.s) == gdrSuccess, "recv");
  }
  CHILD_CHECK(drains(d.s, 20000), "rank %d: the send/recv never finished", rank);
  if (rank == 0) {
    const std::string t = board();
    CHILD_CHECK(
        has(t, "device-done seq=3 coll=send dtype=uint8 op=- count=1048576 path=cuda_ipc peer=1\n"),
        "the send is not done:\n%s", t.c_str());
  }
  CHILD_CHECK(gdrBarrier(comm, nullptr) == gdrSuccess, "barrier: %s", gdrGetLastError(comm));
  gdrCommDestroy(comm);
}

void boardStaged(int rank, gdrComm_t comm, const Dev& d) {
  warmUp(rank, comm, d);
  // Rank 0's all-reduce sits behind a spinning kernel: its progress thread
  // waits for the stream; rank 1's waits in the network for rank 0.
  if (rank == 0) CHILD_CHECK(spinFor(d, 900) == cudaSuccess, "spin kernel");
  CHILD_CHECK(gdrAllReduce(d.in, d.out, kCount, gdrFloat32, gdrSum, comm, d.s) == gdrSuccess,
              "all-reduce");
  sleepMs(400);
  const std::string t = board();
  if (rank == 0)
    CHILD_CHECK(
        has(t,
            "device-inflight seq=2 coll=allreduce dtype=float32 op=sum count=262144 path=staged "
            "peer=-1 waits=stream:0 "),
        "the wait for the stream is not on the board:\n%s", t.c_str());
  else
    CHILD_CHECK(has(t, "device-inflight seq=2 coll=allreduce") && has(t, "path=staged") &&
                    has(t, "\ninflight ") && has(t, " peer=0 "),
                "the staged all-reduce's wait for rank 0 is not on the board:\n%s", t.c_str());
  CHILD_CHECK(drains(d.s, 20000), "rank %d: the all-reduce never finished", rank);
  const std::string after = board();
  CHILD_CHECK(!has(after, "device-inflight") && has(after, "device-done seq=2 coll=allreduce"),
              "rank %d: not done:\n%s", rank, after.c_str());
  // A staged device receive whose send comes late.
  if (rank == 0) {
    CHILD_CHECK(gdrRecv(d.out, kCount, gdrFloat32, 1, comm, d.s) == gdrSuccess, "recv");
    sleepMs(500);
    const std::string r = board();
    CHILD_CHECK(
        has(r,
            "device-inflight seq=3 coll=recv dtype=uint8 op=- count=1048576 path=staged peer=1 ") &&
            has(r, "\ninflight ") && has(r, "coll=recv") && has(r, " peer=1 "),
        "the receive's wait for rank 1 is not on the board:\n%s", r.c_str());
  } else {
    sleepMs(1200);
    CHILD_CHECK(gdrSend(d.in, kCount, gdrFloat32, 0, comm, d.s) == gdrSuccess, "send");
  }
  CHILD_CHECK(drains(d.s, 20000), "rank %d: the send/recv never finished", rank);
  CHILD_CHECK(gdrBarrier(comm, nullptr) == gdrSuccess, "barrier: %s", gdrGetLastError(comm));
  gdrCommDestroy(comm);
}

// ---- revoke racing staged work -------------------------------------------------

// After the revoke on rank 0: its streams come free, the communicator says
// gdrRemoteError, device and host calls fail fast.
void afterRevoke(gdrComm_t comm, const Dev& d, Clock::time_point revokedAt, int drainMs) {
  double took = -1;
  CHILD_CHECK(drains(d.s, drainMs, &took), "the stream never came free after the revoke (%d ms)",
              drainMs);
  const auto t0 = Clock::now();
  while (asyncErr(comm) == gdrSuccess && msSince(t0) < 2000) sleepMs(1);
  CHILD_CHECK(asyncErr(comm) == gdrRemoteError, "async error %d after the revoke",
              (int)asyncErr(comm));
  const auto t1 = Clock::now();
  gdrResult_t dev = gdrAllReduce(d.in, d.out, kCount, gdrFloat32, gdrSum, comm, d.s);
  gdrResult_t host = gdrBarrier(comm, nullptr);
  const double fast = msSince(t1);
  CHILD_CHECK(dev != gdrSuccess && host != gdrSuccess, "a call after the revoke succeeded (%d, %d)",
              (int)dev, (int)host);
  CHILD_CHECK(fast < 200, "calls after the revoke took %.0f ms", fast);
  std::fprintf(stderr,
               "[rank 0] revoked: stream free %.0f ms after, later calls failed in %.1f ms: %s\n",
               msSince(revokedAt) - msSince(t1), fast, gdrGetLastError(comm));
  (void)took;
}

// The peer: its queued work ends, and a later call fails naming the revoke
// (not a timeout) well within GDR_TIMEOUT_MS.
// `named`: the revoke's notice must reach it (rank 0 lingers before its
// destroy; a destroy at once may reset the connection first).
void peerSeesRevoke(gdrComm_t comm, const Dev& d, bool named = true) {
  const auto t0 = Clock::now();
  CHILD_CHECK(drains(d.s, 2 * kTimeoutMs), "rank 1: the stream never came free");
  const gdrResult_t r = gdrBarrier(comm, nullptr);
  const std::string e = gdrGetLastError(comm);
  CHILD_CHECK(r == gdrRemoteError && (!named || has(e, "revoked")), "rank 1 got %d: %s", (int)r,
              e.c_str());
  CHILD_CHECK(msSince(t0) < kTimeoutMs, "rank 1 failed after %.0f ms (GDR_TIMEOUT_MS %d)",
              msSince(t0), kTimeoutMs);
  std::fprintf(stderr, "[rank 1] failed %.0f ms after its calls: %s\n", msSince(t0), e.c_str());
}

// Before a destroy: the revoke's notice is read before the connections go
// (rank 1 reads it some 300 ms after it was sent).
void linger() { sleepMs(700); }

constexpr int kQueued = 8;

Body revokeAfterCalls(int delayMs) {
  return [delayMs](int rank, gdrComm_t comm, const Dev& d) {
    warmUp(rank, comm, d);
    if (rank == 1) sleepMs(300);  // rank 0's work waits in the network for it
    for (int i = 0; i < kQueued; ++i)
      CHILD_CHECK(gdrAllReduce(d.in, d.out, kCount, gdrFloat32, gdrSum, comm, d.s) == gdrSuccess,
                  "all-reduce %d", i);
    if (rank == 0) {
      sleepMs(delayMs);
      const auto t = Clock::now();
      CHILD_CHECK(gdrCommRevoke(comm) == gdrSuccess, "revoke: %s", gdrGetLastError(comm));
      if (delayMs == 0) {
        // Destroyed at once, its staged work still queued: the progress
        // thread and the destroying thread must not collide.
        CHILD_CHECK(gdrCommDestroy(comm) == gdrSuccess, "destroy");
        CHILD_CHECK(drains(d.s, 2000), "the stream never came free after the destroy");
        return;
      }
      afterRevoke(comm, d, t, 2000);
      linger();
      CHILD_CHECK(gdrCommDestroy(comm) == gdrSuccess, "destroy");
    } else {
      peerSeesRevoke(comm, d, delayMs != 0);
      gdrCommDestroy(comm);
    }
  };
}

// Rank 0's main thread waits in a host barrier (behind its staged work)
// when a watchdog thread revokes; then it destroys at once.
void revokeFromWatchdog(int rank, gdrComm_t comm, const Dev& d) {
  warmUp(rank, comm, d);
  if (rank == 1) sleepMs(300);
  for (int i = 0; i < kQueued; ++i)
    CHILD_CHECK(gdrAllReduce(d.in, d.out, kCount, gdrFloat32, gdrSum, comm, d.s) == gdrSuccess,
                "all-reduce");
  if (rank == 0) {
    std::atomic<bool> revoked{false};
    std::thread watchdog([&] {
      sleepMs(50);
      CHILD_CHECK(gdrCommRevoke(comm) == gdrSuccess, "revoke from the watchdog");
      revoked = true;
    });
    const auto t0 = Clock::now();
    gdrResult_t r = gdrBarrier(comm, nullptr);
    watchdog.join();
    CHILD_CHECK(r != gdrSuccess, "the host barrier succeeded across a revoke");
    CHILD_CHECK(msSince(t0) < 2000, "the host barrier returned after %.0f ms", msSince(t0));
    afterRevoke(comm, d, t0, 2000);
    linger();
    CHILD_CHECK(gdrCommDestroy(comm) == gdrSuccess, "destroy");
  } else {
    peerSeesRevoke(comm, d);
    gdrCommDestroy(comm);
  }
}

// Rank 0's progress thread waits for its stream (a spinning kernel ahead of
// the all-reduce) when rank 0 revokes: the stream comes free once the spin
// ends, without its all-reduce.
void revokeWhileStreamHeld(int rank, gdrComm_t comm, const Dev& d) {
  warmUp(rank, comm, d);
  if (rank == 0) CHILD_CHECK(spinFor(d, 600) == cudaSuccess, "spin kernel");
  for (int i = 0; i < kQueued; ++i)
    CHILD_CHECK(gdrAllReduce(d.in, d.out, kCount, gdrFloat32, gdrSum, comm, d.s) == gdrSuccess,
                "all-reduce");
  if (rank == 0) {
    sleepMs(100);
    const auto t = Clock::now();
    CHILD_CHECK(gdrCommRevoke(comm) == gdrSuccess, "revoke");
    afterRevoke(comm, d, t, 3000);
    linger();
    CHILD_CHECK(gdrCommDestroy(comm) == gdrSuccess, "destroy");
  } else {
    peerSeesRevoke(comm, d);
    gdrCommDestroy(comm);
  }
}

// ---- the GPUDirect path -------------------------------------------------------

// Reads the board from another thread while this one is inside a call (host
// order: the call returns once its network part is done).
class Watcher {
 public:
  explicit Watcher(int afterMs)
      : t_([this, afterMs] {
          sleepMs(afterMs);
          text_ = board();
        }) {}
  std::string text() {
    t_.join();
    return text_;
  }

 private:
  std::string text_;
  std::thread t_;
};

void boardDirect(int rank, gdrComm_t comm, const Dev& d) {
  warmUp(rank, comm, d);
  // Rank 1 joins late: rank 0's network part waits for it.
  if (rank == 1) sleepMs(1200);
  std::unique_ptr<Watcher> w(rank == 0 ? new Watcher(400) : nullptr);
  CHILD_CHECK(gdrAllReduce(d.in, d.out, kCount, gdrFloat32, gdrSum, comm, d.s) == gdrSuccess,
              "all-reduce: %s", gdrGetLastError(comm));
  if (w) {
    const std::string t = w->text();
    CHILD_CHECK(has(t,
                    "device-inflight seq=2 coll=allreduce dtype=float32 op=sum count=262144 "
                    "path=direct ") &&
                    has(t, "\ninflight ") && has(t, " peer=1 "),
                "the all-reduce's wait for rank 1 is not on the board:\n%s", t.c_str());
    CHILD_CHECK(has(t, "device-done seq=1 coll=allreduce"), "the warm-up is not done:\n%s",
                t.c_str());
  }
  CHILD_CHECK(drains(d.s, 20000), "rank %d: the all-reduce never finished", rank);
  const std::string after = board();
  CHILD_CHECK(!has(after, "device-inflight") && has(after, "device-done seq=2 coll=allreduce"),
              "rank %d: not done:\n%s", rank, after.c_str());
  // Rank 0's next all-reduce sits behind a spinning kernel: the call waits
  // for its stream.
  if (rank == 0) {
    CHILD_CHECK(spinFor(d, 900) == cudaSuccess, "spin kernel");
    w.reset(new Watcher(400));
  }
  CHILD_CHECK(gdrAllReduce(d.in, d.out, kCount, gdrFloat32, gdrSum, comm, d.s) == gdrSuccess,
              "all-reduce: %s", gdrGetLastError(comm));
  if (w) {
    const std::string t = w->text();
    CHILD_CHECK(has(t,
                    "device-inflight seq=3 coll=allreduce dtype=float32 op=sum count=262144 "
                    "path=direct peer=-1 waits=stream:0 "),
                "the wait for the stream is not on the board:\n%s", t.c_str());
  }
  CHILD_CHECK(drains(d.s, 20000), "rank %d: the all-reduce never finished", rank);
  CHILD_CHECK(gdrBarrier(comm, nullptr) == gdrSuccess, "barrier: %s", gdrGetLastError(comm));
  gdrCommDestroy(comm);
}

// Rank 0's call waits for rank 1 (late) or for its own stream (held by a
// spinning kernel) when a watchdog thread revokes.
Body revokeDirect(bool streamHeld) {
  return [streamHeld](int rank, gdrComm_t comm, const Dev& d) {
    warmUp(rank, comm, d);
    if (rank == 1) {
      sleepMs(streamHeld ? 100 : 300);
      gdrAllReduce(d.in, d.out, kCount, gdrFloat32, gdrSum, comm, d.s);  // may fail: revoked
      peerSeesRevoke(comm, d);
      gdrCommDestroy(comm);
      return;
    }
    if (streamHeld) CHILD_CHECK(spinFor(d, 600) == cudaSuccess, "spin kernel");
    std::thread watchdog([&] {
      sleepMs(50);
      CHILD_CHECK(gdrCommRevoke(comm) == gdrSuccess, "revoke from the watchdog");
    });
    const auto t0 = Clock::now();
    gdrResult_t r = gdrAllReduce(d.in, d.out, kCount, gdrFloat32, gdrSum, comm, d.s);
    const double took = msSince(t0);
    watchdog.join();
    CHILD_CHECK(r != gdrSuccess, "the all-reduce succeeded across a revoke");
    CHILD_CHECK(took < 2000, "the all-reduce returned after %.0f ms", took);
    std::fprintf(stderr, "[rank 0] the call returned %.0f ms after it began: %s\n", took,
                 gdrGetLastError(comm));
    afterRevoke(comm, d, t0, 3000);
    linger();
    CHILD_CHECK(gdrCommDestroy(comm) == gdrSuccess, "destroy");
  };
}

void revokeOneRank(int, gdrComm_t comm, const Dev& d) {
  CHILD_CHECK(gdrAllReduce(d.in, d.out, kCount, gdrFloat32, gdrSum, comm, d.s) == gdrSuccess,
              "all-reduce");
  CHILD_CHECK(drains(d.s, 5000), "one rank: the copy never finished");
  CHILD_CHECK(gdrCommRevoke(comm) == gdrSuccess, "revoke");
  const auto t0 = Clock::now();
  CHILD_CHECK(gdrAllReduce(d.in, d.out, kCount, gdrFloat32, gdrSum, comm, d.s) == gdrRemoteError,
              "a one-rank device all-reduce after the revoke did not fail");
  CHILD_CHECK(msSince(t0) < 100, "it took %.0f ms", msSince(t0));
  CHILD_CHECK(drains(d.s, 5000), "one rank: the stream never came free");
  gdrCommDestroy(comm);
}

}  // namespace

int main(int argc, char** argv) {
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--only NAME]\n", argv[0]);
      return 2;
    }
  }
  struct Case {
    std::string name;
    int n;
    Path path;
    Body body;
  };
  std::vector<Case> cases = {
      {"board_cuda_ipc_np2", 2, Path::Ipc, boardIpc},
      {"board_staged_np2", 2, Path::Staged, boardStaged},
      {"revoke_one_rank_np1", 1, Path::Ipc, revokeOneRank},
      {"revoke_staged_watchdog_np2", 2, Path::Staged, revokeFromWatchdog},
      {"revoke_staged_stream_held_np2", 2, Path::Staged, revokeWhileStreamHeld},
      {"board_direct_np2", 2, Path::Direct, boardDirect},
      {"revoke_direct_watchdog_np2", 2, Path::Direct, revokeDirect(false)},
      {"revoke_direct_stream_held_np2", 2, Path::Direct, revokeDirect(true)},
  };
  for (int ms : {0, 1, 5, 30, 150})
    cases.push_back({"revoke_staged_after_calls_" + std::to_string(ms) + "ms_np2", 2, Path::Staged,
                     revokeAfterCalls(ms)});
  int run = 0, failed = 0;
  for (const Case& c : cases) {
    if (!only.empty() && c.name.find(only) == std::string::npos) continue;
    const auto t0 = Clock::now();
    const std::string why = runCase(c.n, c.path, c.body);
    if (why == "no CUDA device") {
      std::printf("skipped: no CUDA device\n");
      return kNoDevice;
    }
    ++run;
    if (!why.empty()) ++failed;
    std::printf("case %s %s%s (%.0f ms)\n", c.name.c_str(),
                why.empty() ? "ok" : "FAILED:", why.c_str(), msSince(t0));
    std::fflush(stdout);
  }
  std::printf("device board and revoke: %d cases, %d failed\n", run, failed);
  return failed ? 1 : 0;
}

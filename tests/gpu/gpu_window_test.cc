// All-reduce on windows (gdrCommWindowRegister with GDR_WIN_SYMMETRIC): the
// window kernel reads the peers' inputs and writes the peers' outputs in
// their own buffers (src/paths/device_windows.h), with no staging. Ranks
// come as in gpu_ranks.h: np 2 under mpirun (two processes may share one
// GPU: the CUDA IPC handle path), or --local N (one process, its
// communicators reached by raw pointers). The CTest entries set
// GDR_CUDA_IPC_LL_BYTES=0, so no size takes the LL kernel instead.
//
// Checked element by element against a host reference, and by the
// communicator's count of window-kernel launches (which kernel ran):
// types x ops x sizes (one element to 4 MiB) x in place x offsets inside the
// windows (aligned and not); an input in a window with its output outside
// (staging kernels); kernels queued before and after the call while a peer
// is late; a chain back to back with staging all-reduces between; graph
// capture and replay; deregistering, freeing, allocating again (the same
// addresses, not windows now); a rank whose buffer cannot be exported (pool
// memory) makes the window a registration on every rank; deregistering
// twice is refused.
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gdrcoll.h"
#include "gpu_kernels.h"
#include "gpu_mpi_check.h"
#include "gpu_ranks.h"
#include "gpu_values.h"
#include "paths/device_windows.h"

namespace {

using namespace gdrtest::ranks;

// Registration is a blocking collective: one thread per communicator when
// this process drives several.
template <typename F>
void everyRankThreaded(F&& fn) {
  if (gRanks.size() == 1) return fn(gRanks[0], size_t{0});
  int dev = 0;
  CUDA_OK(cudaGetDevice(&dev));
  std::vector<std::thread> t;
  for (size_t k = 0; k < gRanks.size(); ++k)
    t.emplace_back([&, k] {
      CUDA_OK(cudaSetDevice(dev));
      fn(gRanks[k], k);
    });
  for (auto& x : t) x.join();
}

uint64_t windowCalls(const Rank& r) { return gdr::paths::windowAllReduces(*r.comm); }

// A device allocation of each rank, registered as a symmetric window.
struct Window {
  char* p = nullptr;
  size_t bytes = 0;
  gdrWindow_t win = nullptr;
};
std::vector<Window> openWindows(size_t bytes) {
  std::vector<Window> w(gRanks.size());
  for (auto& x : w) {
    x.bytes = bytes;
    CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&x.p), bytes));
  }
  everyRankThreaded([&](const Rank& r, size_t k) {
    GDR_OK(gdrCommWindowRegister(r.comm, w[k].p, bytes, GDR_WIN_SYMMETRIC, &w[k].win));
  });
  return w;
}
void closeWindows(std::vector<Window>& w) {
  syncAll();
  everyRankThreaded(
      [&](const Rank& r, size_t k) { GDR_OK(gdrCommWindowDeregister(r.comm, w[k].win)); });
  for (auto& x : w) CUDA_OK(cudaFree(x.p));
  w.clear();
}

void put(char* p, const std::vector<char>& h) {
  CUDA_OK(cudaMemcpy(p, h.data(), h.size(), cudaMemcpyHostToDevice));
}
std::vector<char> get(const char* p, size_t n) {
  std::vector<char> h(n);
  CUDA_OK(cudaMemcpy(h.data(), p, n, cudaMemcpyDeviceToHost));
  return h;
}

constexpr size_t kWindowBytes = (4u << 20) + 4096;

// Every launch of this section's calls is the window kernel's: the count
// rises by exactly the calls made.
void expectWindowCalls(const std::vector<uint64_t>& before, uint64_t calls, const char* what) {
  for (size_t k = 0; k < gRanks.size(); ++k)
    expect(windowCalls(gRanks[k]) - before[k] == calls,
           std::string(what) + ": rank " + std::to_string(gRanks[k].id) +
               " ran the window kernel " + std::to_string(windowCalls(gRanks[k]) - before[k]) +
               " times of " + std::to_string(calls));
}
std::vector<uint64_t> windowCounts() {
  std::vector<uint64_t> c;
  for (const Rank& r : gRanks) c.push_back(windowCalls(r));
  return c;
}

void testTypesOpsSizes() {
  std::vector<Window> in = openWindows(kWindowBytes), out = openWindows(kWindowBytes);
  struct Case {
    gdrDataType_t t;
    std::vector<gdrRedOp_t> ops;
  };
  const std::vector<gdrRedOp_t> all = {gdrSum, gdrProd, gdrMax, gdrMin, gdrAvg};
  const std::vector<Case> cases = {{gdrFloat32, all},
                                   {gdrInt32, all},
                                   {gdrUint8, {gdrSum, gdrMax}},
                                   {gdrInt64, {gdrSum, gdrMin}},
                                   {gdrFloat16, {gdrSum, gdrAvg}},
                                   {gdrBfloat16, {gdrSum, gdrMax}},
                                   {gdrFloat64, {gdrSum, gdrProd}},
                                   {gdrFloat8e4m3, {gdrSum}},
                                   {gdrFloat8e5m2, {gdrMax}}};
  const std::vector<uint64_t> before = windowCounts();
  uint64_t calls = 0, id = 1;
  for (const Case& c : cases) {
    const size_t eb = gdrtest::typeBytes(c.t);
    const std::vector<size_t> counts = {
        1, 3, 1000, 65536 / eb + 1, (1u << 20) / eb + 7, (4u << 20) / eb};
    for (gdrRedOp_t op : c.ops)
      for (size_t count : counts)
        for (int variant = 0; variant < 3; ++variant, ++id) {
          const bool ip = variant == 1;
          // The same offset on every rank (the symmetric contract); the
          // last one off 16-byte alignment, where the tail fits.
          const size_t off = variant == 2 && count * eb + 4096 <= kWindowBytes ? 4096 - eb : 0;
          std::vector<std::vector<char>> x(gN);
          for (int r = 0; r < gN; ++r) x[r] = inputOf(r, id, c.t, count);
          for (size_t k = 0; k < gRanks.size(); ++k) {
            put((ip ? out : in)[k].p + off, x[gRanks[k].id]);
            if (!ip) CUDA_OK(cudaMemset(out[k].p + off, 0xA5, count * eb));
          }
          CUDA_OK(cudaDeviceSynchronize());
          everyRank([&](const Rank& r, size_t k) {
            GDR_OK(gdrAllReduce(ip ? GDR_IN_PLACE : in[k].p + off, out[k].p + off, count, c.t, op,
                                r.comm, r.stream));
          });
          ++calls;
          syncAll();
          const std::vector<char> ref = reference(x, count, c.t, op);
          for (size_t k = 0; k < gRanks.size(); ++k)
            check(off ? "window allreduce (offset)" : "window allreduce", gRanks[k], c.t, op, count,
                  ip, get(out[k].p + off, count * eb).data(), ref.data());
        }
  }
  expectWindowCalls(before, calls, "types x ops x sizes");

  // The input in a window, the output not: the staging kernels, same result.
  const size_t count = 70000;
  std::vector<Bufs> plain = makeBufs(count * 4);
  std::vector<std::vector<char>> x(gN);
  for (int r = 0; r < gN; ++r) x[r] = inputOf(r, 777, gdrFloat32, count);
  for (size_t k = 0; k < gRanks.size(); ++k) {
    put(in[k].p, x[gRanks[k].id]);
    plain[k].out->poison();
  }
  const std::vector<uint64_t> mid = windowCounts();
  everyRank([&](const Rank& r, size_t k) {
    GDR_OK(gdrAllReduce(in[k].p, plain[k].out->p, count, gdrFloat32, gdrSum, r.comm, r.stream));
  });
  syncAll();
  const std::vector<char> ref = reference(x, count, gdrFloat32, gdrSum);
  for (size_t k = 0; k < gRanks.size(); ++k)
    check("input in a window, output not", gRanks[k], gdrFloat32, gdrSum, count, false,
          plain[k].out->get(0, count * 4).data(), ref.data());
  expectWindowCalls(mid, 0, "output outside the windows");
  closeWindows(in);
  closeWindows(out);
}

// A kernel before the call fills the input late (rank 0 later still); a
// kernel right after it overwrites the input and bumps the output. The
// window kernel must read every peer's input after that peer's fill and
// before its overwrite.
void testStreamOrder() {
  const size_t count = 1 << 18;
  std::vector<Window> in = openWindows(count * 4), out = openWindows(count * 4);
  const std::vector<uint64_t> before = windowCounts();
  for (size_t k = 0; k < gRanks.size(); ++k) {
    const long long spin = gRanks[k].id == 0 ? 200000000 : 20000000;
    CUDA_OK(testSpinThenFill(reinterpret_cast<uint32_t*>(in[k].p), count, 7u + gRanks[k].id, spin,
                             gRanks[k].stream));
  }
  everyRank([&](const Rank& r, size_t k) {
    GDR_OK(gdrAllReduce(in[k].p, out[k].p, count, gdrUint32, gdrSum, r.comm, r.stream));
  });
  for (size_t k = 0; k < gRanks.size(); ++k) {
    CUDA_OK(
        testSpinThenFill(reinterpret_cast<uint32_t*>(in[k].p), count, 0xdead, 0, gRanks[k].stream));
    CUDA_OK(testAddOne(reinterpret_cast<int32_t*>(out[k].p), count, gRanks[k].stream));
  }
  syncAll();
  uint32_t v = 1;
  for (int r = 0; r < gN; ++r) v += 7u + r;
  const std::vector<uint32_t> want(count, v);
  for (size_t k = 0; k < gRanks.size(); ++k)
    check("stream order, a late peer", gRanks[k], gdrUint32, gdrSum, count, false,
          get(out[k].p, count * 4).data(), reinterpret_cast<const char*>(want.data()));
  expectWindowCalls(before, 1, "stream order");
  closeWindows(in);
  closeWindows(out);
}

// x <- allreduce(x) in place on a window 30 times, a staging all-reduce of
// other buffers after each (the barrier epochs interleave) and +1 after
// every third; then the same captured once and replayed 20 times. Host
// arithmetic wraps like the device's.
void testChainAndGraph() {
  const size_t count = 300000;
  std::vector<Window> x = openWindows(count * 4);
  std::vector<Bufs> other = makeBufs(5000 * 4);
  std::vector<std::vector<char>> start(gN), o(gN);
  for (int r = 0; r < gN; ++r) {
    start[r] = inputOf(r, 4242, gdrUint32, count);
    o[r] = inputOf(r, 4343, gdrUint32, 5000);
  }
  for (size_t k = 0; k < gRanks.size(); ++k) {
    put(x[k].p, start[gRanks[k].id]);
    other[k].in->put(o[gRanks[k].id]);
  }
  std::vector<uint32_t> want(count);
  for (size_t i = 0; i < count; ++i) {
    uint32_t v = 0;
    for (int r = 0; r < gN; ++r) v += reinterpret_cast<const uint32_t*>(start[r].data())[i];
    want[i] = v;
  }
  const std::vector<uint64_t> before = windowCounts();
  // Two groups, not one: with lazy module loading, the first launch of a
  // kernel not loaded yet can wait for the context to drain, and in one
  // group rank 0's second kernel would wait for its first, which waits for
  // rank 1's, not launched yet (gpu_window_np1_local2 timed out so on one
  // H200, session 11).
  auto step = [&](int c) {
    everyRank([&](const Rank& r, size_t k) {
      GDR_OK(gdrAllReduce(GDR_IN_PLACE, x[k].p, count, gdrUint32, gdrSum, r.comm, r.stream));
    });
    everyRank([&](const Rank& r, size_t k) {
      GDR_OK(
          gdrAllReduce(other[k].in->p, other[k].out->p, 5000, gdrUint32, gdrSum, r.comm, r.stream));
    });
    if (c % 3 == 2)  // after the group, which launches its calls at its end
      for (size_t k = 0; k < gRanks.size(); ++k)
        CUDA_OK(testAddOne(reinterpret_cast<int32_t*>(x[k].p), count, gRanks[k].stream));
  };
  auto advance = [&](int c, bool first) {
    if (!first)
      for (auto& v : want) v *= static_cast<uint32_t>(gN);
    if (c % 3 == 2)
      for (auto& v : want) v += 1;
  };
  for (int c = 0; c < 30; ++c) {
    step(c);
    advance(c, c == 0);
  }
  syncAll();
  for (size_t k = 0; k < gRanks.size(); ++k)
    check("chain x30 in place", gRanks[k], gdrUint32, gdrSum, count, true,
          get(x[k].p, count * 4).data(), reinterpret_cast<const char*>(want.data()));
  const std::vector<char> oref = reference(o, 5000, gdrUint32, gdrSum);
  for (size_t k = 0; k < gRanks.size(); ++k)
    check("staging all-reduces between", gRanks[k], gdrUint32, gdrSum, 5000, false,
          other[k].out->get(0, 5000 * 4).data(), oref.data());
  expectWindowCalls(before, 30, "chain");

  // Captured: three steps (one +1), replayed 20 times.
  std::vector<cudaGraph_t> graph(gRanks.size());
  std::vector<cudaGraphExec_t> exec(gRanks.size());
  for (const Rank& r : gRanks)
    CUDA_OK(cudaStreamBeginCapture(r.stream, cudaStreamCaptureModeRelaxed));
  for (int c = 0; c < 3; ++c) step(c);
  for (size_t k = 0; k < gRanks.size(); ++k) {
    CUDA_OK(cudaStreamEndCapture(gRanks[k].stream, &graph[k]));
    CUDA_OK(cudaGraphInstantiate(&exec[k], graph[k], 0));
  }
  for (int i = 0; i < 20; ++i) {
    for (size_t k = 0; k < gRanks.size(); ++k) CUDA_OK(cudaGraphLaunch(exec[k], gRanks[k].stream));
    for (int c = 0; c < 3; ++c) advance(c, false);
  }
  syncAll();
  for (size_t k = 0; k < gRanks.size(); ++k) {
    check("graph x20", gRanks[k], gdrUint32, gdrSum, count, true, get(x[k].p, count * 4).data(),
          reinterpret_cast<const char*>(want.data()));
    CUDA_OK(cudaGraphExecDestroy(exec[k]));
    CUDA_OK(cudaGraphDestroy(graph[k]));
  }
  closeWindows(x);
}

// Deregistered and freed, then allocated again (the allocator tends to
// hand back the same addresses): plain buffers now, so the staging kernels
// run, with the right result. A second deregistration is refused. Pool
// memory on one rank: no rank maps the window, every rank stays correct.
void testLifetime() {
  const size_t count = 100000;
  std::vector<Window> w = openWindows(count * 4);
  std::vector<gdrWindow_t> old;
  for (auto& x : w) old.push_back(x.win);
  std::vector<char*> was;
  for (auto& x : w) was.push_back(x.p);
  closeWindows(w);
  for (size_t k = 0; k < gRanks.size(); ++k) {
    const gdrResult_t rc = gdrCommWindowDeregister(gRanks[k].comm, old[k]);
    expect(rc == gdrInvalidArgument,
           "a window deregistered twice: " + std::string(gdrGetErrorString(rc)));
    expect(std::strstr(gdrGetLastError(gRanks[k].comm), "already deregistered") != nullptr,
           std::string("its message: ") + gdrGetLastError(gRanks[k].comm));
  }
  std::vector<char*> again(gRanks.size());
  int same = 0;
  for (size_t k = 0; k < gRanks.size(); ++k) {
    CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&again[k]), count * 4));
    same += again[k] == was[k];
  }
  std::vector<std::vector<char>> x(gN);
  for (int r = 0; r < gN; ++r) x[r] = inputOf(r, 5151, gdrInt32, count);
  for (size_t k = 0; k < gRanks.size(); ++k) put(again[k], x[gRanks[k].id]);
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint64_t> before = windowCounts();
  everyRank([&](const Rank& r, size_t k) {
    GDR_OK(gdrAllReduce(GDR_IN_PLACE, again[k], count, gdrInt32, gdrSum, r.comm, r.stream));
  });
  syncAll();
  const std::vector<char> ref = reference(x, count, gdrInt32, gdrSum);
  for (size_t k = 0; k < gRanks.size(); ++k)
    check("freed, allocated again" + std::string(same ? " (same address)" : ""), gRanks[k],
          gdrInt32, gdrSum, count, true, get(again[k], count * 4).data(), ref.data());
  expectWindowCalls(before, 0, "after deregistration");
  for (char* p : again) CUDA_OK(cudaFree(p));

  // Rank 0's buffer from a memory pool, which CUDA IPC cannot export.
  std::vector<char*> buf(gRanks.size());
  cudaStream_t s0 = gRanks[0].stream;
  for (size_t k = 0; k < gRanks.size(); ++k) {
    if (gRanks[k].id == 0)
      CUDA_OK(cudaMallocAsync(reinterpret_cast<void**>(&buf[k]), count * 4, s0));
    else
      CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&buf[k]), count * 4));
  }
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<gdrWindow_t> wins(gRanks.size());
  everyRankThreaded([&](const Rank& r, size_t k) {
    GDR_OK(gdrCommWindowRegister(r.comm, buf[k], count * 4, GDR_WIN_SYMMETRIC, &wins[k]));
  });
  for (size_t k = 0; k < gRanks.size(); ++k) put(buf[k], x[gRanks[k].id]);
  CUDA_OK(cudaDeviceSynchronize());
  before = windowCounts();
  everyRank([&](const Rank& r, size_t k) {
    GDR_OK(gdrAllReduce(GDR_IN_PLACE, buf[k], count, gdrInt32, gdrSum, r.comm, r.stream));
  });
  syncAll();
  for (size_t k = 0; k < gRanks.size(); ++k)
    check("pool memory on rank 0: a registration only", gRanks[k], gdrInt32, gdrSum, count, true,
          get(buf[k], count * 4).data(), ref.data());
  expectWindowCalls(before, 0, "pool memory on rank 0");
  everyRankThreaded(
      [&](const Rank& r, size_t k) { GDR_OK(gdrCommWindowDeregister(r.comm, wins[k])); });
  for (size_t k = 0; k < gRanks.size(); ++k) {
    if (gRanks[k].id == 0)
      CUDA_OK(cudaFreeAsync(buf[k], s0));
    else
      CUDA_OK(cudaFree(buf[k]));
  }
  CUDA_OK(cudaDeviceSynchronize());
}

}  // namespace

int main(int argc, char** argv) {
  int local = 0, rc = 0;
  if (!start(&argc, &argv, &local, &rc)) return rc;
  openRanks(local);
  section("windows: types x ops x sizes x in place x offsets; output outside", testTypesOpsSizes);
  section("windows: stream order with a late peer", testStreamOrder);
  section("windows: chain with staging calls between; graph replay", testChainAndGraph);
  section("windows: freed and allocated again; deregistered twice; pool memory", testLifetime);
  closeRanks();
  rc = verdict("gpu window tests");
  MPI_Finalize();
  return rc;
}

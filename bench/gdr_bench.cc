// gdr-bench: OSU-style benchmark of gdrcoll collectives. Each size is timed
// for gdrcoll and, with --compare mpi, for the system MPI on the same
// buffers in the same run; latency is averaged over iterations on each rank,
// then averaged (avg) and bounded (min, max) over ranks. With --mem cuda the
// buffers are device memory, every call is enqueued on one stream and timed
// with CUDA events on it; --compare nccl times the system NCCL on the same
// buffers and stream. --launcher picks how the job starts (bench_world.h):
// through MPI, or without any MPI call under PMIx or a launcher's environment.
#include <mpi.h>
#if GDR_BENCH_CUDA
#include <cuda_runtime_api.h>
#include <sys/resource.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_ops.h"
#include "bench_options.h"
#include "bench_plan.h"
#include "bench_world.h"
#include "gdrcoll_mpi.h"

using namespace bench;

namespace {

struct Timing {
  double avg, min, max;  // microseconds
};

// This rank's time per iteration, averaged and bounded over ranks.
Timing overRanks(double us, const World& world) {
  Timing t;
  t.avg = world.sum(us) / world.size();
  t.min = world.min(us);
  t.max = world.max(us);
  return t;
}

template <typename Fn>
Timing timeIt(Fn&& fn, int iters, int warmup, const World& world) {
  for (int i = 0; i < warmup; ++i) fn();
  world.barrier();
  double t0 = world.seconds();
  for (int i = 0; i < iters; ++i) fn();
  double us = (world.seconds() - t0) * 1e6 / (iters ? iters : 1);
  return overRanks(us, world);
}

// `reps` blocks of `iters` calls of each library, the two alternating
// (gdrcoll first in even blocks, the peer first in odd ones) so that a
// burst of outside load falls on both; each reports its median block (by
// the ranks' average). At a few hundred nanoseconds a call, one block of
// 300 lasts some 50 us, and one preemption in it reads as a 20x slower
// cell: the median of several is what the library does, one block is luck.
template <typename G, typename M>
void timeAlternating(G&& gdr, M&& peer, bool withPeer, int iters, int warmup, int reps,
                     const World& world, Timing* g, Timing* m) {
  std::vector<Timing> gs, ms;
  for (int rep = 0; rep < reps; ++rep) {
    const int warm = rep ? 0 : warmup;
    if (withPeer && rep % 2) ms.push_back(timeIt(peer, iters, warm, world));
    gs.push_back(timeIt(gdr, iters, warm, world));
    if (withPeer && rep % 2 == 0) ms.push_back(timeIt(peer, iters, warm, world));
  }
  auto median = [](std::vector<Timing>& v) {
    std::sort(v.begin(), v.end(), [](const Timing& a, const Timing& b) { return a.avg < b.avg; });
    return v[v.size() / 2];
  };
  *g = median(gs);
  if (withPeer) *m = median(ms);
}

#if GDR_BENCH_CUDA
const World* gWorld = nullptr;  // for cudaCheck's abort

void cudaCheck(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) {
    std::fprintf(stderr, "gdr-bench: %s: %s\n", what, cudaGetErrorString(rc));
    gWorld->abort(1);
  }
}

double cpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// Device timing: events around `iters` calls on the stream, after a barrier
// so ranks start together. *cpu gets this rank's CPU seconds over the loop
// (the process syncs with blocking waits, so spinning is not counted).
// With `graph`, the iterations are captured once into a CUDA graph and the
// timed region is one replay (what nccl-tests -G does): no launch overhead.
template <typename Fn>
Timing timeStream(Fn&& fn, int iters, int warmup, const World& world, cudaStream_t s, double* cpu,
                  bool graph) {
  for (int i = 0; i < warmup; ++i) fn();
  cudaCheck(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  cudaGraphExec_t exec = nullptr;
  if (graph) {
    cudaGraph_t g;
    cudaCheck(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    for (int i = 0; i < iters; ++i) fn();
    cudaCheck(cudaStreamEndCapture(s, &g), "cudaStreamEndCapture");
    cudaCheck(cudaGraphInstantiate(&exec, g, 0), "cudaGraphInstantiate");
    cudaCheck(cudaGraphDestroy(g), "cudaGraphDestroy");
    cudaCheck(cudaGraphLaunch(exec, s), "cudaGraphLaunch");  // warm-up replay
    cudaCheck(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  }
  cudaEvent_t e0, e1;
  cudaCheck(cudaEventCreate(&e0), "cudaEventCreate");
  cudaCheck(cudaEventCreate(&e1), "cudaEventCreate");
  world.barrier();
  const double c0 = cpuSeconds();
  cudaCheck(cudaEventRecord(e0, s), "cudaEventRecord");
  if (exec)
    cudaCheck(cudaGraphLaunch(exec, s), "cudaGraphLaunch");
  else
    for (int i = 0; i < iters; ++i) fn();
  cudaCheck(cudaEventRecord(e1, s), "cudaEventRecord");
  cudaCheck(cudaEventSynchronize(e1), "cudaEventSynchronize");
  *cpu = cpuSeconds() - c0;
  float ms = 0;
  cudaCheck(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  if (exec) cudaGraphExecDestroy(exec);
  Timing t = overRanks(ms * 1e3 / (iters ? iters : 1), world);
  *cpu = world.sum(*cpu) / world.size();
  return t;
}

struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) { cudaCheck(cudaMalloc(&p, bytes), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(p); }
};
#endif

// --window: one size's buffers registered as symmetric windows while it runs
// (collective: every rank registers its own), as a program that reuses
// them would keep them.
struct GdrWindows {
  gdrComm_t comm;
  gdrWindow_t w[2] = {};
  GdrWindows(bool on, gdrComm_t c, void* send, size_t sendBytes, void* recv, size_t recvBytes)
      : comm(c) {
    if (!on) return;
    gdrResult_t r = gdrCommWindowRegister(c, send, sendBytes, GDR_WIN_SYMMETRIC, &w[0]);
    if (r == gdrSuccess) r = gdrCommWindowRegister(c, recv, recvBytes, GDR_WIN_SYMMETRIC, &w[1]);
    if (r != gdrSuccess) {
      std::fprintf(stderr, "gdr-bench: gdrCommWindowRegister: %s\n", gdrGetLastError(c));
      std::exit(1);
    }
  }
  ~GdrWindows() {
    for (gdrWindow_t x : w)
      if (x) gdrCommWindowDeregister(comm, x);
  }
};

void die(const World& w, const char* what, gdrResult_t r) {
  std::fprintf(stderr, "gdr-bench: rank %d: %s failed: %s (%s)\n", w.rank(), what,
               gdrGetErrorString(r), gdrGetLastError(w.comm()));
  w.abort(1);
}

}  // namespace

int main(int argc, char** argv) {
  World world(&argc, &argv);
  Options o = parse(argc, argv, world.rank());
#if GDR_BENCH_CUDA
  gWorld = &world;
  cudaStream_t stream = nullptr;
  void* nccl = nullptr;
  if (o.cuda) {
    // One GPU per rank of a host, as NCCL programs do.
    int ndev = 0;
    cudaCheck(cudaGetDeviceCount(&ndev), "cudaGetDeviceCount");
    cudaCheck(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync), "cudaSetDeviceFlags");
    cudaCheck(cudaSetDevice(world.localRank() % ndev), "cudaSetDevice");
    cudaCheck(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  }
#endif
  world.makeComm();
  const int rank = world.rank(), n = world.size();
  gdrComm_t comm = world.comm();
  gdrResult_t r = gdrSuccess;
  if (o.root >= n) {
    if (rank == 0) std::fprintf(stderr, "gdr-bench: --root %d but only %d ranks\n", o.root, n);
    return 2;
  }
#if !GDR_BENCH_CUDA
  if (o.cuda) {
    if (rank == 0) std::fprintf(stderr, "gdr-bench: --mem cuda needs a build with CUDA\n");
    return 2;
  }
#endif
  if (o.compareNccl && !o.cuda) {
    if (rank == 0) std::fprintf(stderr, "gdr-bench: --compare nccl needs --mem cuda\n");
    return 2;
  }
#if GDR_BENCH_CUDA
  // The first device operation must be a collective (it sets up CUDA IPC).
  if (o.cuda && (r = gdrBarrier(comm, reinterpret_cast<gdrStream_t>(stream))) != gdrSuccess)
    die(world, "gdrBarrier", r);
#endif

  const bool compare = o.compareMpi && mpiCanRun(o) && !o.cuda && world.mpi();
#if GDR_BENCH_NCCL
  const bool compareNccl = o.compareNccl && ncclCanRun(o) && world.mpi();
  if (compareNccl) ncclInit(&nccl, MPI_COMM_WORLD);
#else
  const bool compareNccl = false;
  if (o.compareNccl && rank == 0) std::printf("# note: this build found no NCCL; --compare nccl skipped\n");
#endif
  const char* peer = compareNccl ? "nccl" : "mpi";
  FILE* csv = nullptr;
  FILE* json = nullptr;
  if (rank == 0) {
    if ((o.compareMpi || o.compareNccl) && !world.mpi())
      std::printf("# note: launched without MPI (--launcher %s): no --compare\n",
                  world.launchName());
    else if (o.compareMpi && o.cuda)
      std::printf("# note: --compare mpi is for host memory; use --compare nccl with --mem cuda\n");
    else if (o.compareMpi && !compare)
      std::printf("# note: the system MPI has no %s/%s; --compare mpi skipped\n", typeName(o.type),
                  o.op == gdrAvg ? "avg" : "this type");
    std::printf("# gdr-bench %s  ranks %d  launcher %s  mem %s  type %s  op %d  root %d%s%s\n",
                o.collName.c_str(), n, world.launchName(), o.cuda ? "cuda" : "host",
                typeName(o.type), static_cast<int>(o.op), o.root,
                o.cuda && o.graph ? "  (CUDA graph replay)" : "",
                o.cuda && o.window ? "  (symmetric windows)" : "");
    std::printf("# %10s %10s %10s %10s %10s %11s %11s %6s", "size(B)", "count", "avg(us)", "min(us)", "max(us)",
                "algbw(GB/s)", "busbw(GB/s)", "check");
    if (compare || compareNccl)
      std::printf(" %12s %12s %8s", (std::string(peer) + "_avg(us)").c_str(), (std::string(peer) + "_busbw").c_str(),
                  "ratio");
    if (o.cuda) std::printf(" %9s", "cpu(s/GB)");
    std::printf("\n");
    if (!o.csv.empty()) {
      csv = std::fopen(o.csv.c_str(), "w");
      if (!csv) std::fprintf(stderr, "gdr-bench: cannot write %s\n", o.csv.c_str());
      else if (!o.cuda) std::fprintf(csv, "coll,ranks,type,size,count,avg_us,min_us,max_us,algbw,busbw,check,mpi_avg_us,mpi_busbw,ratio\n");
      else std::fprintf(csv, "coll,ranks,type,size,count,avg_us,min_us,max_us,algbw,busbw,check,%s_avg_us,%s_busbw,ratio,cpu_s_per_gb\n", peer, peer);
    }
    if (!o.json.empty() && !(json = std::fopen(o.json.c_str(), "w")))
      std::fprintf(stderr, "gdr-bench: cannot write %s\n", o.json.c_str());
    else if (json)
      std::fprintf(json, "{\"tool\": \"gdr-bench\", \"coll\": \"%s\", \"ranks\": %d, \"mem\": \"%s\", \"type\": \"%s\", "
                   "\"peer\": \"%s\", \"rows\": [", o.collName.c_str(), n, o.cuda ? "cuda" : "host", typeName(o.type),
                   compare || compareNccl ? peer : "");
  }
  bool firstJsonRow = true;

  const size_t ts = typeSize(o.type);
  std::vector<size_t> sizes;
  if (o.coll == Coll::Barrier) sizes.push_back(0);
  else
    for (size_t s = o.minBytes ? o.minBytes : 1; s <= o.maxBytes; s *= 2) sizes.push_back(s);

  size_t totalBad = 0;
  unsigned seed = 12345;
  // With --compare mpi, before the first timed cell both libraries run the
  // first size's warm-up untimed too. Otherwise whichever is timed first at
  // the first size (gdrcoll) also pays for the process's cold start (cores
  // woken from idle, caches and TLBs cold after set-up), and its first cell
  // alone reads slow.
  if (compare && !sizes.empty()) {
    Plan p = makePlan(o.coll, sizes.front(), n, ts);
    std::vector<char> sendBuf(p.sendBytes + 64), recvBuf(p.recvBytes + 64);
    Bufs b{sendBuf.data(), recvBuf.data()};
    const int warm = p.bytes > (1u << 20) ? o.warmupLarge : o.warmup;
    for (int round = 0; round < 2 && (o.coll == Coll::Barrier || p.count > 0); ++round) {
      for (int i = 0; i < warm; ++i)
        if ((r = runGdr(o, p, b, comm, rank)) != gdrSuccess) die(world, o.collName.c_str(), r);
      for (int i = 0; i < warm; ++i) runMpi(o, p, b, MPI_COMM_WORLD, rank);
      world.barrier();
    }
  }
  for (size_t bytes : sizes) {
    Plan p = makePlan(o.coll, bytes, n, ts);
    if (o.coll != Coll::Barrier && p.count == 0) continue;
    std::vector<char> sendBuf(p.sendBytes + 64), recvBuf(p.recvBytes + 64);
    Bufs b{sendBuf.data(), recvBuf.data()};
    const bool large = p.bytes > (1u << 20);
    const int iters = large ? o.itersLarge : o.iters, warmup = large ? o.warmupLarge : o.warmup;
    Timing g{}, m{};
    double cpu = 0;
    const char* status = "-";
#if GDR_BENCH_CUDA
    if (o.cuda) {
      // Same checks on device buffers: inputs made on the host, copied over,
      // one call, the output copied back and checked element by element.
      DeviceBuffer dsend(p.sendBytes + 64), drecv(p.recvBytes + 64);
      Bufs db{dsend.p, drecv.p, reinterpret_cast<gdrStream_t>(stream)};
      const GdrWindows windows(o.window, comm, dsend.p, p.sendBytes + 64, drecv.p,
                               p.recvBytes + 64);
      if (o.check) {
        seed = seed * 1103515245u + 12345u;
        fillInputs(o, p, b, rank, n, seed);
        if (o.coll != Coll::Bcast) poisonOutputs(p, b);
        cudaCheck(cudaMemcpy(dsend.p, sendBuf.data(), sendBuf.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
        cudaCheck(cudaMemcpy(drecv.p, recvBuf.data(), recvBuf.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
        cudaCheck(cudaDeviceSynchronize(), "cudaDeviceSynchronize");  // the stream is non-blocking
        if ((r = runGdr(o, p, db, comm, rank)) != gdrSuccess) die(world, o.collName.c_str(), r);
        cudaCheck(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
        cudaCheck(cudaMemcpy(recvBuf.data(), drecv.p, recvBuf.size(), cudaMemcpyDeviceToHost), "cudaMemcpy");
        size_t allBad = world.sum(static_cast<unsigned long>(countErrors(o, p, b, rank, n, seed)));
        totalBad += allBad;
        status = allBad ? "FAIL" : "ok";
      }
      g = timeStream(
          [&] {
            if ((r = runGdr(o, p, db, comm, rank)) != gdrSuccess) die(world, o.collName.c_str(), r);
          },
          iters, warmup, world, stream, &cpu, o.graph);
#if GDR_BENCH_NCCL
      double ncpu = 0;
      if (compareNccl && o.window) {
        const NcclWindows nw(nccl, p.sendBytes + 64, p.recvBytes + 64, db.stream);
        m = timeStream([&] { runNccl(o, p, nw.bufs, nccl, rank); }, iters, warmup, world, stream,
                       &ncpu, o.graph);
      } else if (compareNccl) {
        m = timeStream([&] { runNccl(o, p, db, nccl, rank); }, iters, warmup, world, stream, &ncpu,
                       o.graph);
      }
#endif
      cpu = p.bytes ? cpu / (static_cast<double>(p.bytes) * iters / 1e9) : 0;
    } else
#endif
    {

      // Correctness first, so a wrong result is never reported as fast.
      if (o.check) {
        seed = seed * 1103515245u + 12345u;
        fillInputs(o, p, b, rank, n, seed);
        if (o.coll != Coll::Bcast) poisonOutputs(p, b);
        if ((r = runGdr(o, p, b, comm, rank)) != gdrSuccess) die(world, o.collName.c_str(), r);
        size_t allBad = world.sum(static_cast<unsigned long>(countErrors(o, p, b, rank, n, seed)));
        totalBad += allBad;
        status = allBad ? "FAIL" : "ok";
      }

      timeAlternating(
          [&] {
            if ((r = runGdr(o, p, b, comm, rank)) != gdrSuccess) die(world, o.collName.c_str(), r);
          },
          [&] { runMpi(o, p, b, MPI_COMM_WORLD, rank); }, compare, iters, warmup,
          large ? 1 : o.reps, world, &g, &m);
    }

    if (rank == 0) {
      double algbw = g.avg > 0 ? p.bytes / (g.avg * 1e3) : 0;  // bytes/us/1e3 = GB/s
      double busbw = algbw * p.busFactor;
      std::printf("  %10zu %10zu %10.2f %10.2f %10.2f %11.3f %11.3f %6s", p.bytes, p.count, g.avg, g.min, g.max,
                  algbw, busbw, status);
      double mbus = 0, ratio = 0;
      if (compare || compareNccl) {
        mbus = m.avg > 0 ? p.bytes / (m.avg * 1e3) * p.busFactor : 0;
        ratio = g.avg > 0 ? m.avg / g.avg : 0;
        std::printf(" %12.2f %12.3f %7.2fx", m.avg, mbus, ratio);
      }
      if (o.cuda) std::printf(" %9.4f", cpu);
      std::printf("\n");
      std::fflush(stdout);
      if (csv && !o.cuda)
        std::fprintf(csv, "%s,%d,%s,%zu,%zu,%.3f,%.3f,%.3f,%.4f,%.4f,%s,%.3f,%.4f,%.3f\n", o.collName.c_str(), n,
                     typeName(o.type), p.bytes, p.count, g.avg, g.min, g.max, algbw, busbw, status, m.avg, mbus, ratio);
      else if (csv)
        std::fprintf(csv, "%s,%d,%s,%zu,%zu,%.3f,%.3f,%.3f,%.4f,%.4f,%s,%.3f,%.4f,%.3f,%.5f\n", o.collName.c_str(), n,
                     typeName(o.type), p.bytes, p.count, g.avg, g.min, g.max, algbw, busbw, status, m.avg, mbus, ratio,
                     cpu);
      if (json)
        std::fprintf(json, "%s\n  {\"size\": %zu, \"count\": %zu, \"avg_us\": %.3f, \"min_us\": %.3f, \"max_us\": %.3f, "
                     "\"algbw\": %.4f, \"busbw\": %.4f, \"check\": \"%s\", \"peer_avg_us\": %.3f, \"peer_busbw\": %.4f, "
                     "\"ratio\": %.3f, \"cpu_s_per_gb\": %.5f}", firstJsonRow ? "" : ",", p.bytes, p.count, g.avg, g.min,
                     g.max, algbw, busbw, status, m.avg, mbus, ratio, cpu);
      firstJsonRow = false;
    }
  }
  if (rank == 0 && compare)
    std::printf("# ratio = MPI time / gdrcoll time (above 1: gdrcoll faster; equals the busbw ratio)\n");
  if (rank == 0 && compareNccl)
    std::printf("# ratio = NCCL time / gdrcoll time (above 1: gdrcoll faster; equals the busbw ratio)\n");
  if (csv) std::fclose(csv);
  if (json) {
    std::fprintf(json, "\n]}\n");
    std::fclose(json);
  }
  world.destroyComm();
#if GDR_BENCH_NCCL
  if (nccl) ncclFree(nccl);
#endif
#if GDR_BENCH_CUDA
  if (stream) cudaStreamDestroy(stream);
#endif
  if (totalBad) {
    if (rank == 0) std::fprintf(stderr, "gdr-bench: %zu wrong elements\n", totalBad);
    return 1;
  }
  return 0;
}

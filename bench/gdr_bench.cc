// gdr-bench: OSU-style benchmark of gdrcoll collectives. Each size is timed
// for gdrcoll and, with --compare mpi, for the system MPI on the same
// buffers in the same run; latency is averaged over iterations on each rank,
// then averaged (avg) and bounded (min, max) over ranks.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_ops.h"
#include "bench_options.h"
#include "bench_plan.h"
#include "gdrcoll_mpi.h"

using namespace bench;

namespace {

struct Timing {
  double avg, min, max;  // microseconds
};

template <typename Fn>
Timing timeIt(Fn&& fn, int iters, int warmup, MPI_Comm world) {
  for (int i = 0; i < warmup; ++i) fn();
  MPI_Barrier(world);
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) fn();
  double us = (MPI_Wtime() - t0) * 1e6 / (iters ? iters : 1);
  int n = 1;
  MPI_Comm_size(world, &n);
  Timing t;
  MPI_Allreduce(&us, &t.avg, 1, MPI_DOUBLE, MPI_SUM, world);
  MPI_Allreduce(&us, &t.min, 1, MPI_DOUBLE, MPI_MIN, world);
  MPI_Allreduce(&us, &t.max, 1, MPI_DOUBLE, MPI_MAX, world);
  t.avg /= n;
  return t;
}

void die(int rank, const char* what, gdrResult_t r, gdrComm_t comm) {
  std::fprintf(stderr, "gdr-bench: rank %d: %s failed: %s (%s)\n", rank, what, gdrGetErrorString(r),
               gdrGetLastError(comm));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  Options o = parse(argc, argv, rank);
  if (o.root >= n) {
    if (rank == 0) std::fprintf(stderr, "gdr-bench: --root %d but only %d ranks\n", o.root, n);
    MPI_Finalize();
    return 2;
  }
  if (o.cuda) {
    if (rank == 0) std::fprintf(stderr, "gdr-bench: --mem cuda is not supported by this build yet\n");
    MPI_Finalize();
    return 2;
  }
  gdrComm_t comm = nullptr;
  gdrResult_t r = gdrCommInitMPI(&comm, MPI_COMM_WORLD);
  if (r != gdrSuccess) die(rank, "gdrCommInitMPI", r, nullptr);

  const bool compare = o.compareMpi && mpiCanRun(o);
  FILE* csv = nullptr;
  if (rank == 0) {
    if (o.compareMpi && !compare)
      std::printf("# note: the system MPI has no %s/%s; --compare mpi skipped\n", typeName(o.type),
                  o.op == gdrAvg ? "avg" : "this type");
    std::printf("# gdr-bench %s  ranks %d  mem %s  type %s  op %d  root %d\n", o.collName.c_str(), n,
                o.cuda ? "cuda" : "host", typeName(o.type), static_cast<int>(o.op), o.root);
    std::printf("# %10s %10s %10s %10s %10s %11s %11s %6s", "size(B)", "count", "avg(us)", "min(us)", "max(us)",
                "algbw(GB/s)", "busbw(GB/s)", "check");
    if (compare) std::printf(" %12s %12s %8s", "mpi_avg(us)", "mpi_busbw", "ratio");
    std::printf("\n");
    if (!o.csv.empty()) {
      csv = std::fopen(o.csv.c_str(), "w");
      if (!csv) std::fprintf(stderr, "gdr-bench: cannot write %s\n", o.csv.c_str());
      else std::fprintf(csv, "coll,ranks,type,size,count,avg_us,min_us,max_us,algbw,busbw,check,mpi_avg_us,mpi_busbw,ratio\n");
    }
  }

  const size_t ts = typeSize(o.type);
  std::vector<size_t> sizes;
  if (o.coll == Coll::Barrier) sizes.push_back(0);
  else
    for (size_t s = o.minBytes ? o.minBytes : 1; s <= o.maxBytes; s *= 2) sizes.push_back(s);

  size_t totalBad = 0;
  unsigned seed = 12345;
  for (size_t bytes : sizes) {
    Plan p = makePlan(o.coll, bytes, n, ts);
    if (o.coll != Coll::Barrier && p.count == 0) continue;
    std::vector<char> sendBuf(p.sendBytes + 64), recvBuf(p.recvBytes + 64);
    Bufs b{sendBuf.data(), recvBuf.data()};
    const bool large = p.bytes > (1u << 20);
    const int iters = large ? o.itersLarge : o.iters, warmup = large ? o.warmupLarge : o.warmup;

    // Correctness first, so a wrong result is never reported as fast.
    const char* status = "-";
    if (o.check) {
      seed = seed * 1103515245u + 12345u;
      fillInputs(o, p, b, rank, n, seed);
      if (o.coll != Coll::Bcast) poisonOutputs(p, b);
      if ((r = runGdr(o, p, b, comm, rank)) != gdrSuccess) die(rank, o.collName.c_str(), r, comm);
      size_t bad = countErrors(o, p, b, rank, n, seed), allBad = 0;
      MPI_Allreduce(&bad, &allBad, 1, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD);
      totalBad += allBad;
      status = allBad ? "FAIL" : "ok";
    }

    Timing g = timeIt([&] {
      if ((r = runGdr(o, p, b, comm, rank)) != gdrSuccess) die(rank, o.collName.c_str(), r, comm);
    }, iters, warmup, MPI_COMM_WORLD);
    Timing m{};
    if (compare) m = timeIt([&] { runMpi(o, p, b, MPI_COMM_WORLD, rank); }, iters, warmup, MPI_COMM_WORLD);

    if (rank == 0) {
      double algbw = g.avg > 0 ? p.bytes / (g.avg * 1e3) : 0;  // bytes/us/1e3 = GB/s
      double busbw = algbw * p.busFactor;
      std::printf("  %10zu %10zu %10.2f %10.2f %10.2f %11.3f %11.3f %6s", p.bytes, p.count, g.avg, g.min, g.max,
                  algbw, busbw, status);
      double mbus = 0, ratio = 0;
      if (compare) {
        mbus = m.avg > 0 ? p.bytes / (m.avg * 1e3) * p.busFactor : 0;
        ratio = g.avg > 0 ? m.avg / g.avg : 0;
        std::printf(" %12.2f %12.3f %7.2fx", m.avg, mbus, ratio);
      }
      std::printf("\n");
      std::fflush(stdout);
      if (csv)
        std::fprintf(csv, "%s,%d,%s,%zu,%zu,%.3f,%.3f,%.3f,%.4f,%.4f,%s,%.3f,%.4f,%.3f\n", o.collName.c_str(), n,
                     typeName(o.type), p.bytes, p.count, g.avg, g.min, g.max, algbw, busbw, status, m.avg, mbus, ratio);
    }
  }
  if (rank == 0 && compare)
    std::printf("# ratio = MPI time / gdrcoll time (above 1: gdrcoll faster; equals the busbw ratio)\n");
  if (csv) std::fclose(csv);
  gdrCommDestroy(comm);
  MPI_Finalize();
  if (totalBad) {
    if (rank == 0) std::fprintf(stderr, "gdr-bench: %zu wrong elements\n", totalBad);
    return 1;
  }
  return 0;
}

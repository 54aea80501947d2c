// What one size of a collective means: counts, buffer sizes and the
// nccl-tests bus-bandwidth factor.
#pragma once

#include <cstddef>
#include <vector>

#include "bench_options.h"

namespace bench {

struct Plan {
  size_t bytes = 0;  // the size column: nccl-tests' convention
  size_t count = 0;  // the count argument of the call
  size_t sendBytes = 0, recvBytes = 0;
  double busFactor = 1.0;
  // All-to-all-v: count `count` and displacement d * count for every peer d
  // (the same layout as all-to-all), as gdrcoll and MPI take them.
  std::vector<size_t> counts, displs;
  std::vector<int> mpiCounts, mpiDispls;
};

inline Plan makePlan(Coll c, size_t bytes, int n, size_t ts) {
  Plan p;
  size_t elems = bytes / ts;
  switch (c) {
    case Coll::AllReduce:
      p.count = elems;
      p.sendBytes = p.recvBytes = elems * ts;
      p.busFactor = 2.0 * (n - 1) / n;
      break;
    case Coll::AllGather:
      p.count = elems / n;
      p.sendBytes = p.count * ts;
      p.recvBytes = p.count * n * ts;
      p.busFactor = double(n - 1) / n;
      break;
    case Coll::ReduceScatter:
      p.count = elems / n;
      p.sendBytes = p.count * n * ts;
      p.recvBytes = p.count * ts;
      p.busFactor = double(n - 1) / n;
      break;
    case Coll::AllToAll:
    case Coll::AllToAllv:  // equal blocks, given as counts and displacements
      p.count = elems / n;
      p.sendBytes = p.recvBytes = p.count * n * ts;
      p.busFactor = double(n - 1) / n;
      break;
    case Coll::Bcast:
    case Coll::Reduce:
    case Coll::SendRecv:
      p.count = elems;
      p.sendBytes = p.recvBytes = elems * ts;
      break;
    case Coll::Barrier:
      break;
  }
  if (c == Coll::AllToAllv) {
    for (int d = 0; d < n; ++d) {
      p.counts.push_back(p.count);
      p.displs.push_back(d * p.count);
      p.mpiCounts.push_back(static_cast<int>(p.count));
      p.mpiDispls.push_back(static_cast<int>(d * p.count));
    }
  }
  p.bytes = (c == Coll::AllGather || c == Coll::ReduceScatter || c == Coll::AllToAll || c == Coll::AllToAllv)
                ? p.count * n * ts
                : p.count * ts;
  return p;
}

}  // namespace bench

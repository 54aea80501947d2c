// What one size of a collective means: counts, buffer sizes and the
// nccl-tests bus-bandwidth factor.
#pragma once

#include <cstddef>

#include "bench_options.h"

namespace bench {

struct Plan {
  size_t bytes = 0;  // the size column: nccl-tests' convention
  size_t count = 0;  // the count argument of the call
  size_t sendBytes = 0, recvBytes = 0;
  double busFactor = 1.0;
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
  p.bytes = (c == Coll::AllGather || c == Coll::ReduceScatter || c == Coll::AllToAll) ? p.count * n * ts
                                                                                       : p.count * ts;
  return p;
}

}  // namespace bench

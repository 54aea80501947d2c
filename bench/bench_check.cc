// Result validation for gdr-bench --check, on the shared reference values.
#include <cstring>

#include "bench_ops.h"
#include "reference.h"

namespace bench {

namespace {

using gdrref::load;
using gdrref::store;

int64_t valueOf(const Options& o, int rank, size_t i, unsigned seed) {
  return gdrref::inputValue(o.type, o.op, rank, i, seed);
}

double expectedReduce(const Options& o, size_t i, int nranks, unsigned seed) {
  return gdrref::expectedReduce(o.type, o.op, i, nranks, seed);
}

bool close(gdrDataType_t t, double got, double want) { return gdrref::matches(t, got, want); }

}  // namespace

void fillInputs(const Options& o, const Plan& p, const Bufs& b, int rank, int nranks, unsigned seed) {
  size_t ts = typeSize(o.type);
  if (o.coll == Coll::Bcast) {
    if (rank != o.root) std::memset(b.recv, 0x7b, p.recvBytes);
    else for (size_t i = 0; i < p.recvBytes / ts; ++i) store(o.type, b.recv, i, static_cast<double>(valueOf(o, o.root, i, seed)));
    return;
  }
  if (o.coll == Coll::AllToAll || o.coll == Coll::AllToAllv) {  // block d, element j: from (rank) to d
    for (int d = 0; d < nranks; ++d)
      for (size_t j = 0; j < p.count; ++j) store(o.type, b.send, d * p.count + j, valueOf(o, rank, d * p.count + j, seed));
    return;
  }
  for (size_t i = 0; i < p.sendBytes / ts; ++i) store(o.type, b.send, i, valueOf(o, rank, i, seed));
}

void poisonOutputs(const Plan& p, const Bufs& b) {
  if (b.recv && p.recvBytes) std::memset(b.recv, 0x7b, p.recvBytes);
}

size_t countErrors(const Options& o, const Plan& p, const Bufs& b, int rank, int nranks, unsigned seed) {
  size_t bad = 0;
  auto check = [&](size_t idx, double want) {
    if (!close(o.type, load(o.type, b.recv, idx), want)) ++bad;
  };
  switch (o.coll) {
    case Coll::AllReduce:
      for (size_t i = 0; i < p.count; ++i) check(i, expectedReduce(o, i, nranks, seed));
      break;
    case Coll::Reduce:
      if (rank == o.root)
        for (size_t i = 0; i < p.count; ++i) check(i, expectedReduce(o, i, nranks, seed));
      break;
    case Coll::ReduceScatter:
      for (size_t i = 0; i < p.count; ++i) check(i, expectedReduce(o, rank * p.count + i, nranks, seed));
      break;
    case Coll::AllGather:
      for (int r = 0; r < nranks; ++r)
        for (size_t i = 0; i < p.count; ++i) check(r * p.count + i, static_cast<double>(valueOf(o, r, i, seed)));
      break;
    case Coll::Bcast:
      for (size_t i = 0; i < p.count; ++i) check(i, static_cast<double>(valueOf(o, o.root, i, seed)));
      break;
    case Coll::AllToAll:
    case Coll::AllToAllv:
      for (int s = 0; s < nranks; ++s)
        for (size_t j = 0; j < p.count; ++j)
          check(s * p.count + j, static_cast<double>(valueOf(o, s, rank * p.count + j, seed)));
      break;
    case Coll::SendRecv: {
      int peer = rank ^ 1;
      if (peer < nranks)
        for (size_t i = 0; i < p.count; ++i) check(i, static_cast<double>(valueOf(o, peer, i, seed)));
      break;
    }
    case Coll::Barrier: break;
  }
  return bad;
}

}  // namespace bench

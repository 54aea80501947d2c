#include "paths/host.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "collectives/executor.h"
#include "collectives/reduce_host.h"
#include "core/error.h"
#include "core/log.h"
#include "paths/single_rank.h"

namespace gdr::paths {

namespace {

// Under GDR_CHECK_MISMATCH=2 every rank first proves it runs the same
// operation: a dissemination barrier whose messages carry the signature. A
// disagreement between any two ranks implies one between some rank and its
// ring predecessor, which is among the peers each rank hears from.
void agreeOnSignature(Communicator& comm, const transport::OpSig& sig) {
  coll::CollArgs b;
  b.kind = coll::CollKind::Barrier;
  b.rank = comm.rank();
  b.nranks = comm.size();
  coll::Schedule s = coll::build(coll::Algo::Dissemination, b);
  coll::execute(comm, s, coll::HostBuffers{}, nullptr, sig);
}

}  // namespace

void runHostCollective(Communicator& comm, const CollCall& call) {
  using coll::CollKind;
  const int n = comm.size(), me = comm.rank();
  if (n == 1) {
    const SingleRankCopy c = singleRankCopy(call);
    if (c.bytes) std::memmove(c.dst, c.src, c.bytes);
    return;
  }
  const size_t eb = gdr::typeSize(call.type);
  // Collectives whose data layout does not depend on rank numbers run on
  // ring positions from the topology (hosts together, close GPUs adjacent).
  const TopoPlan& plan = comm.topoPlan();
  const CollTraits& traits = traitsOf(call.kind);
  const bool reordered = !plan.identity && traits.rankOrderFree;
  bool inPlaceArg = false;  // the schedule's view of in place

  coll::HostBuffers bufs;
  bufs.elemBytes = eb;
  std::vector<char> temp;  // only for in-place forms that need a copy
  char* finalDst = nullptr;
  size_t finalBytes = 0;

  switch (call.kind) {
    case CollKind::AllReduce:
      inPlaceArg = call.inPlace;
      bufs.input = static_cast<const char*>(call.inPlace ? call.recvbuf : call.sendbuf);
      bufs.output = static_cast<char*>(call.recvbuf);
      break;
    case CollKind::Broadcast:
      inPlaceArg = true;
      bufs.input = bufs.output = static_cast<char*>(call.recvbuf);
      break;
    case CollKind::Reduce:
      inPlaceArg = call.inPlace && me == call.root;
      bufs.input = static_cast<const char*>(inPlaceArg ? call.recvbuf : call.sendbuf);
      bufs.output = me == call.root ? static_cast<char*>(call.recvbuf) : nullptr;
      break;
    case CollKind::AllGather:
      // In place, this rank's block already sits in the output; the
      // schedule's copy of it onto itself is skipped. Slot 0 and this
      // rank's slot overlap only on rank 0, where nothing moves.
      if (call.blockAtStart && me != 0)
        std::memcpy(static_cast<char*>(call.recvbuf) + me * call.count * eb, call.recvbuf, call.count * eb);
      bufs.input = call.inPlace ? static_cast<const char*>(call.recvbuf) + me * call.count * eb
                                : static_cast<const char*>(call.sendbuf);
      bufs.output = static_cast<char*>(call.recvbuf);
      break;
    case CollKind::ReduceScatter:
      if (call.inPlace) {
        bufs.input = static_cast<const char*>(call.recvbuf);
        temp.resize(call.count * eb);
        bufs.output = temp.data();
        finalDst = static_cast<char*>(call.recvbuf);
        finalBytes = temp.size();
      } else {
        bufs.input = static_cast<const char*>(call.sendbuf);
        bufs.output = static_cast<char*>(call.recvbuf);
      }
      break;
    case CollKind::AllToAll:
      if (call.inPlace) {
        temp.assign(static_cast<const char*>(call.recvbuf), static_cast<const char*>(call.recvbuf) + n * call.count * eb);
        bufs.input = temp.data();
      } else {
        bufs.input = static_cast<const char*>(call.sendbuf);
      }
      bufs.output = static_cast<char*>(call.recvbuf);
      break;
    case CollKind::AllToAllv: {
      const size_t* sc = call.inPlace ? call.recvCounts : call.sendCounts;
      const size_t* sd = call.inPlace ? call.recvDispls : call.sendDispls;
      if (call.inPlace) {
        size_t extent = 0;
        for (int r = 0; r < n; ++r) extent = std::max(extent, (sd[r] + sc[r]) * eb);
        temp.assign(static_cast<const char*>(call.recvbuf), static_cast<const char*>(call.recvbuf) + extent);
        bufs.input = temp.data();
      } else {
        bufs.input = static_cast<const char*>(call.sendbuf);
      }
      bufs.output = static_cast<char*>(call.recvbuf);
      break;
    }
    case CollKind::Barrier:
      break;
  }

  const transport::OpSig sig = sigOf(call, comm.nextSeq());
  const bool counted = traits.layout != Layout::Vectors && traits.layout != Layout::None;

  // At level 1 a count-0 call agrees too: it moves no message, so without
  // this a rank passing 0 where the others pass 100 would return success
  // and leave the error to its next call. Valid programs pass 0 on every
  // rank, so this costs a barrier on count-0 calls only.
  const bool emptyCall = call.count == 0 && counted;
  const int level = comm.config().checkMismatch;
  if (n > 1 && (level >= 2 || (level == 1 && emptyCall))) agreeOnSignature(comm, sig);

  // The schedule's arguments: built only when the cache misses (a hit, the
  // common case, costs a lookup and no allocation).
  auto makeArgs = [&] {
    coll::CollArgs args;
    args.kind = call.kind;
    args.rank = reordered ? plan.position[me] : me;
    args.nranks = n;
    args.count = call.count;
    args.root = reordered ? plan.position[call.root] : call.root;
    if (comm.config().chunkBytes > 0)
      args.chunkElems = std::max<size_t>(1, static_cast<size_t>(comm.config().chunkBytes) / eb);
    args.inPlace = inPlaceArg;
    args.aloneOnHost = comm.aloneOnHost();
    if (call.kind == CollKind::AllToAllv) {
      const size_t* sc = call.inPlace ? call.recvCounts : call.sendCounts;
      const size_t* sd = call.inPlace ? call.recvDispls : call.sendDispls;
      args.sendCounts.assign(sc, sc + n);
      args.sendDispls.assign(sd, sd + n);
      args.recvCounts.assign(call.recvCounts, call.recvCounts + n);
      args.recvDispls.assign(call.recvDispls, call.recvDispls + n);
    }
    return args;
  };
  std::optional<coll::Schedule> uncached;
  const coll::Schedule* schedp = nullptr;
  coll::Algo algo;
  if (call.kind == CollKind::AllToAllv) {
    const coll::CollArgs args = makeArgs();
    algo = coll::select(args, eb, comm.config().algo);
    uncached = coll::build(algo, args);
    schedp = &*uncached;
  } else {
    coll::SchedKey key{call.kind, call.root, call.count, inPlaceArg, eb};
    const coll::CachedSchedule* hit = comm.schedules().find(key);
    if (!hit) {
      const coll::CollArgs args = makeArgs();
      coll::Algo a = coll::select(args, eb, comm.config().algo);
      hit = &comm.schedules().insert(key, {a, coll::build(a, args)});
    }
    algo = hit->algo;
    schedp = &hit->sched;
  }
  const coll::Schedule& sched = *schedp;
  bufs.scratch = sched.scratchElems ? comm.scratch(sched.scratchElems * eb).data() : nullptr;
  transport::ReduceFn fn = traits.reduces ? coll::hostReduceFn(call.type, call.op) : nullptr;
  GDR_TRACE(kColl, "%s: %s, %zu steps", transport::describe(sig).c_str(), coll::algoName(algo),
            sched.steps.size());
  coll::execute(comm, sched, bufs, fn, sig, reordered ? plan.order.data() : nullptr);

  if (finalDst && finalBytes) std::memcpy(finalDst, bufs.output, finalBytes);
  if (call.op == gdrAvg && traits.reduces) {
    if (call.kind == CollKind::AllReduce) coll::hostDivide(call.recvbuf, call.count, call.type, n);
    else if (call.kind == CollKind::ReduceScatter) coll::hostDivide(call.recvbuf, call.count, call.type, n);
    else if (me == call.root) coll::hostDivide(call.recvbuf, call.count, call.type, n);
  }
}

}  // namespace gdr::paths

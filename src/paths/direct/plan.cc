#include "paths/direct/plan.h"

#include <algorithm>

#include "collectives/schedule.h"
#include "core/datatype.h"
#include "core/error.h"
#include "paths/direct/phases.h"

namespace gdr::paths::direct {

namespace {

// Where rank p's contribution sits for a one-shot reduction: this rank's
// own in `mine`, each peer's in its scratch block (peers in rank order,
// this rank skipped).
std::vector<const char*> rankOrder(const char* mine, char* scratch, size_t block, int me, int n) {
  std::vector<const char*> v;
  for (int p = 0, k = 0; p < n; ++p)
    v.push_back(p == me ? mine : scratch + static_cast<size_t>(k++) * block);
  return v;
}

coll::CollArgs ringArgs(const CollCall& call, int me, int n, size_t chunkElems) {
  coll::CollArgs a;
  a.kind = call.kind;
  a.rank = me;
  a.nranks = n;
  a.count = call.count;
  a.chunkElems = chunkElems;
  a.inPlace = call.inPlace;
  return a;
}

PhasedSchedule ringPhases(const CollCall& call, int me, int n, size_t chunkElems) {
  return toPhases(coll::build(coll::Algo::Ring, ringArgs(call, me, n, chunkElems)), call.inPlace);
}

// The ring's phases on real buffers: Input, Output, the schedule's Scratch,
// then the staging area at the end of `scratch`.
std::vector<Phase> resolve(const PhasedSchedule& ps, const CollCall& call, const char* in,
                           char* out, char* scratch, int n) {
  const size_t eb = typeSize(call.type);
  char* staging = scratch + ps.scratchElems * eb;
  auto at = [&](const Span& s) -> char* {
    char* base = nullptr;
    switch (s.where) {
      case Where::Input:
        base = const_cast<char*>(in);  // sends and sources only read it
        break;
      case Where::Output:
        base = out;
        break;
      case Where::Scratch:
        base = scratch;
        break;
      case Where::Staging:
        base = staging;
        break;
    }
    return base + s.offset * eb;
  };
  const gdrRedOp_t op = call.op == gdrAvg ? gdrSum : call.op;  // avg: a sum, divided at the end
  std::vector<Phase> phases;
  for (const SchedPhase& sp : ps.phases) {
    Phase ph;
    for (const PhaseMsg& m : sp.msgs)
      ph.msgs.push_back({m.isSend, at(m.span), m.span.count * eb, m.peer, call.type});
    for (const PhaseOp& o : sp.ops) {
      LocalOp lo;
      lo.isCopy = o.isCopy;
      lo.dst = at(o.dst);
      lo.srcs[0] = at(o.a);
      lo.srcs[1] = at(o.b);
      lo.nsrc = o.isCopy ? 1 : 2;
      lo.count = o.dst.count;
      lo.type = call.type;
      lo.op = op;
      ph.ops.push_back(lo);
    }
    phases.push_back(std::move(ph));
  }
  if (call.op == gdrAvg) {
    LocalOp div;
    div.dst = out;
    div.srcs[0] = out;
    div.nsrc = 1;
    div.count = call.count;  // the Output: the whole buffer, or this rank's block
    div.type = call.type;
    div.op = gdrAvg;
    div.avgDivisor = n;
    phases.push_back(Phase{{}, {div}});
  }
  return phases;
}

}  // namespace

bool ringApplies(const CollCall& call, int n) {
  return n > 2 && call.count > 0 && call.op < gdrNumOps &&
         (call.kind == CollKind::AllReduce || call.kind == CollKind::ReduceScatter);
}

size_t scratchBytes(const CollCall& call, int me, int n, size_t chunkElems) {
  const size_t bytes = call.count * typeSize(call.type);
  const size_t peers = static_cast<size_t>(n - 1);
  if (ringApplies(call, n)) {
    const PhasedSchedule ps = ringPhases(call, me, n, chunkElems);
    return (ps.scratchElems + ps.stagingElems) * typeSize(call.type);
  }
  switch (call.kind) {
    case CollKind::AllReduce:
    case CollKind::ReduceScatter:
      return peers * bytes;
    case CollKind::Reduce:
      return me == call.root ? peers * bytes : 0;
    case CollKind::AllToAll:  // in place: the input is copied aside first
      return call.inPlace ? static_cast<size_t>(n) * bytes : 0;
    case CollKind::AllToAllv: {
      if (!call.inPlace) return 0;
      size_t extent = 0;
      for (int r = 0; r < n; ++r)
        extent = std::max(extent, (call.recvDispls[r] + call.recvCounts[r]) * typeSize(call.type));
      return extent;
    }
    default:
      return 0;
  }
}

Plan planCollective(const CollCall& call, int me, int n, char* scratch, size_t chunkElems) {
  const size_t eb = typeSize(call.type);
  const size_t bytes = call.count * eb;
  char* out = static_cast<char*>(call.recvbuf);
  const char* in = static_cast<const char*>(call.inPlace ? call.recvbuf : call.sendbuf);
  auto mut = [](const char* p) { return const_cast<char*>(p); };  // sends only read
  Plan pl;
  pl.what = strprintf("%s of %zu B (GPUDirect path)", collName(call.kind), bytes);
  if (ringApplies(call, n)) {
    pl.what = strprintf("%s of %zu B (GPUDirect path, ring)", collName(call.kind), bytes);
    pl.phases = resolve(ringPhases(call, me, n, chunkElems), call, in, out, scratch, n);
    return pl;
  }
  auto exchange = [&](int p, const char* src, size_t sbytes, char* dst, size_t rbytes) {
    pl.msgs.push_back({false, dst, rbytes, p});
    pl.msgs.push_back({true, mut(src), sbytes, p});
  };
  switch (call.kind) {
    case CollKind::AllGather: {
      const char* mine = in;
      if (call.blockAtStart && me != 0) {  // this rank's block moves to its slot first
        pl.before.push_back({out + me * bytes, out, bytes});
        mine = out + me * bytes;
      } else if (call.inPlace) {
        mine = out + me * bytes;
      } else {
        pl.before.push_back({out + me * bytes, in, bytes});
      }
      for (int p = 0; p < n; ++p)
        if (p != me) exchange(p, mine, bytes, out + p * bytes, bytes);
      break;
    }
    case CollKind::Broadcast:
      for (int p = 0; p < n; ++p) {
        if (p == me) continue;
        if (me == call.root)
          pl.msgs.push_back({true, out, bytes, p});
        else if (p == call.root)
          pl.msgs.push_back({false, out, bytes, p});
      }
      break;
    case CollKind::AllToAll:
    case CollKind::AllToAllv: {
      const bool vee = call.kind == CollKind::AllToAllv;
      const size_t* sc = vee ? (call.inPlace ? call.recvCounts : call.sendCounts) : nullptr;
      const size_t* sd = vee ? (call.inPlace ? call.recvDispls : call.sendDispls) : nullptr;
      const char* src = in;
      if (call.inPlace) {  // the receives overwrite the blocks still to be sent: send a copy
        pl.before.push_back({scratch, in, scratchBytes(call, me, n)});
        src = scratch;
      }
      for (int p = 0; p < n; ++p) {
        const size_t sOff = (vee ? sd[p] : p * call.count) * eb,
                     sLen = (vee ? sc[p] : call.count) * eb;
        const size_t rOff = (vee ? call.recvDispls[p] : p * call.count) * eb;
        const size_t rLen = (vee ? call.recvCounts[p] : call.count) * eb;
        if (p == me) {
          if (sLen != rLen)
            throw InvalidArgument(
                strprintf("rank %d sends %zu bytes to itself but receives %zu", me, sLen, rLen));
          if (out + rOff != src + sOff) pl.before.push_back({out + rOff, src + sOff, sLen});
          continue;
        }
        exchange(p, src + sOff, sLen, out + rOff, rLen);
      }
      break;
    }
    case CollKind::Barrier:
      for (int p = 0; p < n; ++p)
        if (p != me) exchange(p, out, 0, out, 0);
      break;
    case CollKind::AllReduce:
      for (int p = 0, k = 0; p < n; ++p)
        if (p != me) exchange(p, in, bytes, scratch + static_cast<size_t>(k++) * bytes, bytes);
      pl.reduces = true;
      pl.reduction.dst = out;
      pl.reduction.srcs = rankOrder(in, scratch, bytes, me, n);
      break;
    case CollKind::ReduceScatter:
      // In place the input is recvbuf (n blocks) and the result lands in its
      // first block: that block was sent to rank 0 before the kernel runs
      // (or, on rank 0, is this rank's own source, read element by element
      // before it is written).
      for (int p = 0, k = 0; p < n; ++p)
        if (p != me)
          exchange(p, in + p * bytes, bytes, scratch + static_cast<size_t>(k++) * bytes, bytes);
      pl.reduces = true;
      pl.reduction.dst = out;
      pl.reduction.srcs = rankOrder(in + me * bytes, scratch, bytes, me, n);
      break;
    case CollKind::Reduce:
      if (me != call.root) {
        pl.msgs.push_back({true, mut(in), bytes, call.root});
        break;
      }
      for (int p = 0, k = 0; p < n; ++p)
        if (p != me)
          pl.msgs.push_back({false, scratch + static_cast<size_t>(k++) * bytes, bytes, p});
      pl.reduces = true;
      pl.reduction.dst = out;
      pl.reduction.srcs = rankOrder(in, scratch, bytes, me, n);
      break;
  }
  if (pl.reduces) {
    pl.reduction.count = call.count;
    pl.reduction.type = call.type;
    pl.reduction.op = call.op;
    if (call.count == 0) pl.reduces = false;
  }
  return pl;
}

}  // namespace gdr::paths::direct

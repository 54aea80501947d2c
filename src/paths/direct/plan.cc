#include "paths/direct/plan.h"

#include <algorithm>

#include "core/datatype.h"
#include "core/error.h"

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

}  // namespace

size_t scratchBytes(const CollCall& call, int me, int n) {
  const size_t bytes = call.count * typeSize(call.type);
  const size_t peers = static_cast<size_t>(n - 1);
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

Plan planCollective(const CollCall& call, int me, int n, char* scratch) {
  const size_t eb = typeSize(call.type);
  const size_t bytes = call.count * eb;
  char* out = static_cast<char*>(call.recvbuf);
  const char* in = static_cast<const char*>(call.inPlace ? call.recvbuf : call.sendbuf);
  auto mut = [](const char* p) { return const_cast<char*>(p); };  // sends only read
  Plan pl;
  pl.what = strprintf("%s of %zu B (GPUDirect path)", collName(call.kind), bytes);
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

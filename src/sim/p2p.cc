#include "sim/p2p.h"

#include <algorithm>

#include "core/error.h"
#include "sim/engine.h"
#include "sim/network.h"
#include "sim/predict.h"

namespace gdr::sim {
namespace {

// Sends read the input, receives land in the output: a group's buffers are
// the caller's own, so no receive waits on a send reading its region.
coll::Step message(bool send, int peer, size_t count) {
  coll::Step st{send ? coll::StepKind::Send : coll::StepKind::Recv};
  st.peer = peer;
  if (send)
    st.src = coll::Region{coll::BufId::Input, 0, count};
  else
    st.dst = coll::Region{coll::BufId::Output, 0, count};
  return st;
}

// One call of every rank's list from a common start; `kind` sets the
// single-copy threshold and `footprint` (bytes of one host) the cache rates.
double walk(const Cluster& given, coll::CollKind kind, std::vector<coll::Schedule>& scheds,
            size_t elemBytes, double footprint) {
  validate(given);
  const Cluster c = effectiveRates(given, footprint);
  const Network net(c);
  EngineInput in;
  in.cluster = &c;
  in.net = &net;
  in.kind = kind;
  in.elemBytes = elemBytes;
  in.sharing = c.nranks() > kMaxMinRanks ? Sharing::Frozen : Sharing::MaxMin;
  in.iterations = 1;
  in.launchUs = c.device ? c.kernelLaunchUs : c.launchUs;
  return runEngine(in, scheds).timeUs;
}

}  // namespace

double p2pUs(const Cluster& c, int rank, const std::vector<P2pOp>& ops) {
  const int n = c.nranks();
  GDR_CHECK_ARG(rank >= 0 && rank < n, "rank %d is outside [0, %d)", rank, n);
  std::vector<coll::Schedule> scheds(static_cast<size_t>(n));
  double bytes = 0;
  for (bool sends : {true, false})
    for (const P2pOp& op : ops) {
      GDR_CHECK_ARG(op.peer >= 0 && op.peer < n, "peer %d of rank %d is outside [0, %d)", op.peer,
                    rank, n);
      if (op.peer == rank) continue;  // a local copy, left out as for one rank
      if (op.send == sends) scheds[rank].steps.push_back(message(sends, op.peer, op.bytes));
      // The peer's side, its sends before its receives too.
      if (op.send != sends) scheds[op.peer].steps.push_back(message(!op.send, rank, op.bytes));
      bytes += sends ? static_cast<double>(op.bytes) : 0.0;
    }
  if (scheds[rank].steps.empty()) return 0.0;
  // A point-to-point message takes the transport's default threshold.
  return walk(c, coll::CollKind::Broadcast, scheds, 1, 2.0 * bytes);
}

double rootedUs(const Cluster& c, bool gather, int root, size_t count, size_t elemBytes) {
  const int n = c.nranks();
  GDR_CHECK_ARG(root >= 0 && root < n, "root %d is outside [0, %d)", root, n);
  if (count == 0) return 0.0;
  coll::CollArgs a;
  a.kind = coll::CollKind::AllToAllv;
  a.nranks = n;
  a.root = root;
  a.aloneOnHost = c.aloneOnHost();
  std::vector<coll::Schedule> scheds;
  std::vector<size_t> many(n, count), one(n, 0), zero(n, 0), displ(n, 0);
  one[root] = count;
  for (int d = 0; d < n; ++d) displ[d] = static_cast<size_t>(d) * count;
  for (int r = 0; r < n; ++r) {
    // The root exchanges `count` with every rank (itself included), the
    // others only with the root.
    const bool isRoot = r == root;
    a.rank = r;
    a.sendCounts = gather ? one : isRoot ? many : zero;
    a.recvCounts = gather ? (isRoot ? many : zero) : one;
    a.sendDispls = isRoot && !gather ? displ : zero;
    a.recvDispls = isRoot && gather ? displ : zero;
    scheds.push_back(coll::build(coll::select(a, elemBytes), a));
  }
  const double perRank = static_cast<double>(count * elemBytes);
  return walk(c, coll::CollKind::AllToAllv, scheds, elemBytes, perRank * (n + 1));
}

}  // namespace gdr::sim

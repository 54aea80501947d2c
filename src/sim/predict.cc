#include "sim/predict.h"

#include <algorithm>

#include "collectives/fused.h"
#include "core/error.h"
#include "sim/engine.h"
#include "sim/network.h"
#include "sim/symmetric.h"

namespace gdr::sim {
namespace {

using coll::CollKind;

bool perRankCount(CollKind k) {
  return k == CollKind::AllGather || k == CollKind::ReduceScatter || k == CollKind::AllToAll ||
         k == CollKind::AllToAllv;
}

const char* fusedName(coll::FusedKind k) {
  switch (k) {
    case coll::FusedKind::OneShot:
      return "oneshot";
    case coll::FusedKind::TwoShot:
      return "twoshot";
    case coll::FusedKind::LL:
      return "ll";
    case coll::FusedKind::ReduceScatter:
      return "ipc-reducescatter";
    case coll::FusedKind::Reduce:
      return "ipc-reduce";
    case coll::FusedKind::Exchange:
      return "ipc-exchange";
  }
  return "?";
}

// One kernel: launch and barriers, then the busiest GPU's peer traffic at
// the measured store rate and its reductions at the measured rate.
double fusedUs(const Cluster& c, const coll::FusedTraffic& t) {
  const double peer = std::max(t.peerOut, t.peerIn);
  double us = c.kernelLaunchUs * (t.barriers > 1 ? 1.0 + 0.25 * (t.barriers - 1) : 1.0);
  if (c.kernelStoreGBps > 0) us += peer / (c.kernelStoreGBps * 1e3);
  if (c.kernelReduceGBps > 0) us += t.reduced / (c.kernelReduceGBps * 1e3);
  return us;
}

// gdrBroadcast, MPI_Bcast and gdr-bench's loop broadcast in place (one
// buffer): the root copies nothing into an output of its own, and each rank
// touches one buffer. Every other collective gdr-bench runs out of place.
bool runsInPlace(CollKind k) { return k == CollKind::Broadcast; }

coll::CollArgs argsFor(const Cluster& c, const Query& q, size_t count) {
  coll::CollArgs a;
  a.kind = q.kind;
  a.nranks = c.nranks();
  a.count = count;
  a.root = q.root;
  a.inPlace = runsInPlace(q.kind);
  a.aloneOnHost = c.aloneOnHost();
  if (c.chunkBytes > 0) a.chunkElems = std::max<size_t>(1, c.chunkBytes / q.elemBytes);
  if (q.kind == CollKind::AllToAllv) {
    for (int d = 0; d < a.nranks; ++d) {
      a.sendCounts.push_back(count);
      a.recvCounts.push_back(count);
      a.sendDispls.push_back(d * count);
      a.recvDispls.push_back(d * count);
    }
  }
  return a;
}

// The bytes one call's buffers span per rank (input and output, or one
// buffer in place; all-to-all and the gathers hold n blocks).
double footprintPerRank(CollKind k, size_t bytes, int n) {
  if (runsInPlace(k)) return static_cast<double>(bytes);
  switch (k) {
    case CollKind::AllGather:
    case CollKind::ReduceScatter:
      return static_cast<double>(bytes) * (1.0 + 1.0 / n);
    case CollKind::Barrier:
      return 0;
    default:
      return 2.0 * static_cast<double>(bytes);
  }
}

}  // namespace

double busFactor(CollKind k, int n) {
  switch (k) {
    case CollKind::AllReduce:
      return 2.0 * (n - 1) / n;
    case CollKind::AllGather:
    case CollKind::ReduceScatter:
    case CollKind::AllToAll:
    case CollKind::AllToAllv:
      return static_cast<double>(n - 1) / n;
    default:
      return 1.0;
  }
}

Prediction predict(const Cluster& given, const Query& q) {
  validate(given);
  const int n = given.nranks();
  const Cluster c =
      effectiveRates(given, footprintPerRank(q.kind, q.bytes, n) * given.ranksPerHost);
  Prediction p;
  p.count = q.bytes / q.elemBytes / (perRankCount(q.kind) ? static_cast<size_t>(n) : 1);
  p.bytes = p.count * q.elemBytes * (perRankCount(q.kind) ? static_cast<size_t>(n) : 1);
  if (q.kind == CollKind::Barrier) p.count = p.bytes = 0;
  coll::CollArgs args = argsFor(c, q, p.count);

  EngineResult r;
  if (c.device && c.hosts == 1 && n > 1 && q.kind != CollKind::Barrier && !q.forced) {
    const coll::FusedTraffic t = coll::fusedTraffic(q.kind, n, p.bytes);
    p.algo = fusedName(t.kind);
    p.walker = "fused";
    r.timeUs = fusedUs(c, t);  // the kernel's launch included
  } else {
    const coll::Algo algo = q.forced ? q.algo : coll::select(args, q.elemBytes);
    GDR_CHECK_ARG(coll::supports(algo, args), "algorithm %s does not implement %s",
                  coll::algoName(algo), coll::collName(q.kind));
    p.algo = coll::algoName(algo);
    const Network net(c);
    EngineInput in;
    in.cluster = &c;
    in.net = &net;
    in.kind = q.kind;
    in.elemBytes = q.elemBytes;
    in.launchUs = c.device ? c.kernelLaunchUs : c.launchUs;
    // All-to-all-v's schedule is built on every call (never cached).
    if (q.kind == CollKind::AllToAllv && c.buildUs > 0) {
      coll::CollArgs a = args;
      a.rank = 0;
      in.launchUs += c.buildUs * static_cast<double>(coll::build(algo, a).steps.size());
    }
    bool done = false;
    if (q.walker == "symmetric" || (q.walker == "auto" && n > kEventRanks)) {
      done = runSymmetric(in, algo, args, &r);
      GDR_CHECK_ARG(done || q.walker != "symmetric", "%s %s is not symmetric: use the event walker",
                    coll::algoName(algo), coll::collName(q.kind));
      if (done) p.walker = "symmetric";
    }
    if (!done) {
      in.sharing = n > kMaxMinRanks ? Sharing::Frozen : Sharing::MaxMin;
      in.iterations = n > kMaxMinRanks ? 1 : n > kDeepRanks ? kIterationsWide : kIterations;
      if (c.benchIters > 0 && in.sharing == Sharing::MaxMin) {
        // gdr-bench's calls per size: a tenth of --iters and a fifth of
        // --warmup above 1 MiB (bench_options.cc).
        const bool large = q.bytes > (1u << 20);
        in.timedCalls = large && c.benchIters > 10 ? c.benchIters / 10 : c.benchIters;
        in.warmCalls = large && c.benchWarmup > 5 ? c.benchWarmup / 5 : c.benchWarmup;
      }
      p.walker = in.sharing == Sharing::Frozen ? "events-frozen" : "events";
      std::vector<coll::Schedule> scheds;
      scheds.reserve(static_cast<size_t>(n));
      for (int rank = 0; rank < n; ++rank) {
        coll::CollArgs a = args;
        a.rank = rank;
        scheds.push_back(coll::build(algo, a));
      }
      r = runEngine(in, scheds);
    }
  }
  p.timeUs = r.timeUs;
  p.messages = r.messages;
  p.yieldsPerCall = r.yieldsPerCall;
  p.algbw = p.timeUs > 0 ? static_cast<double>(p.bytes) / (p.timeUs * 1e3) : 0;
  p.busbw = p.algbw * busFactor(q.kind, n);
  return p;
}

}  // namespace gdr::sim

// Algorithm selection: GDR_ALGO first ("allreduce=ring,bcast=chain"; keys are
// collName()s, or "broadcast"), else a GDR_TUNING_FILE rule where one
// matches (collectives/tuning.h), else defaults by size and rank count. A
// forced algorithm that does not implement the collective is reported once
// per collective and replaced by the default; a name that is not a
// collective or an algorithm at all is an InvalidArgument.
//
// Defaults (bytes: the whole message, count·elemBytes, times nranks for
// all-gather, reduce-scatter and all-to-all). Guided by the usual alpha-beta
// reasoning and by what MPICH/NCCL ship; bench/ is where they get tuned.
//   allreduce      (n-1)·m <= 3 KiB and 3 <= n <= 8: direct (one round of
//                  independent messages; at np 3-4 on 2 cores it measured
//                  1.2-1.6x Open MPI where rd gave 0.8-1.1x);
//                  <= 16 KiB: rd (fewest rounds); <= 512 KiB and nranks a
//                  power of two: rhd; nranks >= 32: dbtree; else ring.
//   bcast          3 ranks and <= 256 B: chain (Open MPI's choice there; on
//                  2 cores it took 0.23-0.28 us at 8 B where binomial took
//                  0.33-0.53); < 256 KiB or nranks <= 2: binomial; else chain.
//   reduce         < 1 MiB: binomial; else ring (reduce-scatter + gather:
//                  every rank reduces 1/n). At np 2 on the dev machine ring
//                  measured 1.05-1.26x Open MPI from 1 to 8 MiB where
//                  binomial gave 0.76-1.03x (bench/results/host-2core.md).
//   allgather      <= 64 KiB: rd; else ring.
//   reducescatter  <= 64 KiB: rhd; else ring.
//   alltoall       blocks (bytes / nranks) <= 16 KiB and nranks >= 3: direct
//                  (every message posted at once; on 2 cores it took 0.76-0.99x
//                  pairwise's time at np 4 and 0.36-0.83x at np 8 there, and
//                  1.2-1.6x at np 4 with 32-64 KiB blocks); else pairwise.
//                  A rank alone on its host (every message crosses the
//                  network) takes direct at any size from 3 ranks: over TCP
//                  the pairwise steps drift apart, two senders then meet at
//                  one receiver: 4 emulated hosts on 1 Gbit/s links took
//                  1.03-1.8x direct's time at 1-16 MiB (bench/results/cluster.md).
//   alltoallv      the same rules on this rank's largest block, sent or
//                  received (ranks may differ: see alltoall.cc).
//   barrier        dissemination.
// The fused all-reduce kernels of the cuda_ipc path (ll, oneshot, twoshot) are
// chosen here too (selectFusedAllReduce), so GDR_ALGO forces them.
#include <algorithm>
#include <atomic>
#include <string>

#include "collectives/fused.h"
#include "collectives/schedule.h"
#include "collectives/tuning.h"
#include "core/error.h"
#include "core/log.h"
#include "core/params.h"

namespace gdr::coll {
namespace {

constexpr int kNumKinds = static_cast<int>(CollKind::Barrier) + 1;

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

bool parseKind(const std::string& name, CollKind* out) {
  if (name == "broadcast") {
    *out = CollKind::Broadcast;
    return true;
  }
  for (int k = 0; k < kNumKinds; ++k) {
    if (name == collName(static_cast<CollKind>(k))) {
      *out = static_cast<CollKind>(k);
      return true;
    }
  }
  return false;
}

std::string knownNames(bool algos) {
  std::string s;
  for (int i = 0; i < (algos ? kNumAlgos : kNumKinds); ++i) {
    if (!s.empty()) s += ", ";
    s += algos ? algoName(static_cast<Algo>(i)) : collName(static_cast<CollKind>(i));
  }
  return s;
}

}  // namespace

bool forcedAlgo(const std::string& spec, CollKind kind, Algo* out) {
  bool found = false;
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t end = spec.find(',', pos);
    if (end == std::string::npos) end = spec.size();
    const std::string entry = trim(spec.substr(pos, end - pos));
    pos = end + 1;
    if (entry.empty()) continue;
    const size_t eq = entry.find('=');
    GDR_CHECK_ARG(eq != std::string::npos,
                  "GDR_ALGO: '%s' is not collective=algorithm (e.g. allreduce=ring)",
                  entry.c_str());
    const std::string key = trim(entry.substr(0, eq)), value = trim(entry.substr(eq + 1));
    CollKind k;
    Algo algo;
    GDR_CHECK_ARG(parseKind(key, &k), "GDR_ALGO: unknown collective '%s' (known: %s)", key.c_str(),
                  knownNames(false).c_str());
    GDR_CHECK_ARG(parseAlgo(value, &algo), "GDR_ALGO: unknown algorithm '%s' for %s (known: %s)",
                  value.c_str(), key.c_str(), knownNames(true).c_str());
    if (k == kind) {
      *out = algo;
      found = true;
    }
  }
  return found;
}

namespace {

size_t messageBytes(const CollArgs& a, size_t elemBytes) {
  switch (a.kind) {
    case CollKind::AllGather:
    case CollKind::ReduceScatter:
    case CollKind::AllToAll:
      return a.count * static_cast<size_t>(a.nranks) * elemBytes;
    default:
      return a.count * elemBytes;
  }
}

// The largest block this rank sends or receives in an all-to-allv, in bytes.
size_t largestBlock(const CollArgs& a, size_t elemBytes) {
  size_t m = 0;
  for (size_t c : a.sendCounts) m = std::max(m, c);
  for (size_t c : a.recvCounts) m = std::max(m, c);
  return m * elemBytes;
}

// `vBlock`: an all-to-allv's largest block in bytes (largestBlock), else
// unused. `alone`: no other rank on this rank's host (CollArgs::aloneOnHost).
Algo defaultAlgo(CollKind kind, int nranks, size_t bytes, size_t vBlock, bool alone) {
  constexpr size_t kDirectBlock = 16u << 10;
  const bool pow2 = (nranks & (nranks - 1)) == 0;
  switch (kind) {
    case CollKind::AllReduce:
      if (nranks >= 3 && nranks <= 8 && bytes * static_cast<size_t>(nranks - 1) <= (3u << 10))
        return Algo::Direct;
      if (bytes <= (16u << 10)) return Algo::RecursiveDoubling;
      if (bytes <= (512u << 10) && pow2) return Algo::RecHalvingDoubling;
      return nranks >= 32 ? Algo::DoubleBinaryTree : Algo::Ring;
    case CollKind::Broadcast:
      if (nranks == 3 && bytes <= 256) return Algo::Chain;
      return bytes < (256u << 10) || nranks <= 2 ? Algo::Binomial : Algo::Chain;
    case CollKind::Reduce:
      return bytes < (1u << 20) ? Algo::Binomial : Algo::Ring;
    case CollKind::AllGather:
      return bytes <= (64u << 10) ? Algo::RecursiveDoubling : Algo::Ring;
    case CollKind::ReduceScatter:
      return bytes <= (64u << 10) ? Algo::RecHalvingDoubling : Algo::Ring;
    case CollKind::AllToAll:
      return nranks >= 3 && (alone || bytes / static_cast<size_t>(nranks) <= kDirectBlock)
                 ? Algo::Direct
                 : Algo::Pairwise;
    case CollKind::AllToAllv:
      return nranks >= 3 && (alone || vBlock <= kDirectBlock) ? Algo::Direct : Algo::Pairwise;
    case CollKind::Barrier:
      return Algo::Dissemination;
  }
  return Algo::Ring;
}

Algo defaultAlgo(const CollArgs& a, size_t bytes, size_t elemBytes) {
  return defaultAlgo(a.kind, a.nranks, bytes, a.kind == CollKind::AllToAllv ? largestBlock(a, elemBytes) : 0,
                     a.aloneOnHost);
}

}  // namespace

void checkAlgoSpec(const std::string& spec) {
  Algo unused;
  forcedAlgo(spec, CollKind::Barrier, &unused);
}

Algo select(const CollArgs& args, size_t elemBytes) { return select(args, elemBytes, param::getString("GDR_ALGO")); }

Algo builtInAlgo(CollKind kind, int nranks, size_t bytes) {
  if (kind == CollKind::AllToAllv) throw InvalidArgument("builtInAlgo: all-to-allv needs its counts (select())");
  return defaultAlgo(kind, nranks, bytes, 0, false);
}

Algo select(const CollArgs& args, size_t elemBytes, const std::string& algoSpec) {
  Algo fallback = defaultAlgo(args, messageBytes(args, elemBytes), elemBytes);
  Algo tuned;
  if (tunedAlgo(args, messageBytes(args, elemBytes), &tuned)) fallback = tuned;  // GDR_TUNING_FILE
  Algo forced;
  if (!forcedAlgo(algoSpec, args.kind, &forced)) return fallback;
  if (supports(forced, args)) return forced;
  static std::atomic<uint32_t> warned{0};
  const uint32_t bit = 1u << static_cast<int>(args.kind);
  if ((warned.fetch_or(bit) & bit) == 0) {
    if (isFused(forced))
      GDR_WARN(kColl,
               "GDR_ALGO asks for %s for %s, a fused device kernel (cuda_ipc path only); host "
               "buffers use %s",
               algoName(forced), collName(args.kind), algoName(fallback));
    else
      GDR_WARN(kColl, "GDR_ALGO asks for %s for %s, which it does not implement; using %s",
               algoName(forced), collName(args.kind), algoName(fallback));
  }
  return fallback;
}

FusedKind selectFusedAllReduce(int nranks, size_t bytes, size_t oneShotMax,
                               const std::string& algoSpec, size_t llMax, size_t llCapacity) {
  llMax = std::min(llMax, llCapacity);
  Algo forced;
  if (forcedAlgo(algoSpec, CollKind::AllReduce, &forced) && isFused(forced)) {
    if (forced == Algo::OneShot) return FusedKind::OneShot;
    if (forced == Algo::TwoShot) return FusedKind::TwoShot;
    if (bytes <= llCapacity) return FusedKind::LL;
    return fusedAllReduceKind(nranks, bytes, oneShotMax);  // too large for the LL area
  }
  return fusedAllReduceKind(nranks, bytes, oneShotMax, llMax);
}

}  // namespace gdr::coll

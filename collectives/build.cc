// Names, the (algorithm, collective) table, argument checks and dispatch.
#include <cctype>
#include <cstring>

#include "collectives/algorithms.h"
#include "collectives/schedule.h"
#include "core/error.h"

namespace gdr::coll {
namespace {

using Builder = Schedule (*)(const CollArgs&);

struct Entry {
  Algo algo;
  CollKind kind;
  Builder build;
};

// Every algorithm and the collectives it implements.
const Entry kTable[] = {
    {Algo::Ring, CollKind::AllReduce, detail::ringAllReduce},
    {Algo::Ring, CollKind::AllGather, detail::ringAllGather},
    {Algo::Ring, CollKind::ReduceScatter, detail::ringReduceScatter},
    {Algo::Ring, CollKind::Reduce, detail::ringReduce},
    {Algo::RecursiveDoubling, CollKind::AllReduce, detail::recursiveDoublingAllReduce},
    {Algo::RecursiveDoubling, CollKind::AllGather, detail::recursiveDoublingAllGather},
    {Algo::DoubleBinaryTree, CollKind::AllReduce, detail::doubleTreeAllReduce},
    {Algo::RecHalvingDoubling, CollKind::AllReduce, detail::rabenseifnerAllReduce},
    {Algo::Direct, CollKind::AllReduce, detail::directAllReduce},
    {Algo::RecHalvingDoubling, CollKind::ReduceScatter, detail::recursiveHalvingReduceScatter},
    {Algo::Binomial, CollKind::Broadcast, detail::binomialBroadcast},
    {Algo::Binomial, CollKind::Reduce, detail::binomialReduce},
    {Algo::Chain, CollKind::Broadcast, detail::chainBroadcast},
    {Algo::Chain, CollKind::Reduce, detail::chainReduce},
    {Algo::Direct, CollKind::Broadcast, detail::directBroadcast},
    {Algo::Direct, CollKind::Reduce, detail::directReduce},
    {Algo::Pairwise, CollKind::AllToAll, detail::pairwiseAllToAll},
    {Algo::Direct, CollKind::AllToAll, detail::directAllToAll},
    {Algo::Direct, CollKind::AllToAllv, detail::directAllToAllv},
    {Algo::Pairwise, CollKind::AllToAllv, detail::pairwiseAllToAllv},
    {Algo::Dissemination, CollKind::Barrier, detail::disseminationBarrier},
};

const Entry* findEntry(Algo algo, CollKind kind) {
  for (const Entry& e : kTable)
    if (e.algo == algo && e.kind == kind) return &e;
  return nullptr;
}

struct AlgoName {
  const char* name;
  Algo algo;
};
// The first name of each algorithm is its canonical one (algoName).
const AlgoName kAlgoNames[] = {
    {"ring", Algo::Ring},
    {"rd", Algo::RecursiveDoubling},
    {"recursive_doubling", Algo::RecursiveDoubling},
    {"dbtree", Algo::DoubleBinaryTree},
    {"tree", Algo::DoubleBinaryTree},
    {"double_binary_tree", Algo::DoubleBinaryTree},
    {"rhd", Algo::RecHalvingDoubling},
    {"rabenseifner", Algo::RecHalvingDoubling},
    {"recursive_halving", Algo::RecHalvingDoubling},
    {"binomial", Algo::Binomial},
    {"chain", Algo::Chain},
    {"pairwise", Algo::Pairwise},
    {"direct", Algo::Direct},
    {"dissemination", Algo::Dissemination},
    {"oneshot", Algo::OneShot},
    {"twoshot", Algo::TwoShot},
    {"ll", Algo::LL},
};

void checkArgs(const CollArgs& a) {
  GDR_CHECK_ARG(a.nranks >= 1, "schedule: nranks %d must be at least 1", a.nranks);
  GDR_CHECK_ARG(a.rank >= 0 && a.rank < a.nranks, "schedule: rank %d is not in [0, %d)", a.rank,
                a.nranks);
  if (a.kind == CollKind::Broadcast || a.kind == CollKind::Reduce)
    GDR_CHECK_ARG(a.root >= 0 && a.root < a.nranks, "%s: root %d is not in [0, %d)",
                  collName(a.kind), a.root, a.nranks);
  if (a.kind == CollKind::AllToAllv) {
    const size_t n = static_cast<size_t>(a.nranks);
    GDR_CHECK_ARG(a.sendCounts.size() == n && a.sendDispls.size() == n &&
                      a.recvCounts.size() == n && a.recvDispls.size() == n,
                  "alltoallv: counts and displacements need %d entries each", a.nranks);
  }
}

}  // namespace

const char* algoName(Algo a) {
  for (const AlgoName& n : kAlgoNames)
    if (n.algo == a) return n.name;
  return "unknown";
}

bool parseAlgo(const std::string& name, Algo* out) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const AlgoName& n : kAlgoNames) {
    if (lower == n.name) {
      *out = n.algo;
      return true;
    }
  }
  return false;
}

bool supports(Algo algo, const CollArgs& args) { return findEntry(algo, args.kind) != nullptr; }

Schedule build(Algo algo, const CollArgs& args) {
  checkArgs(args);
  const Entry* e = findEntry(algo, args.kind);
  GDR_CHECK_ARG(e != nullptr, "algorithm '%s' does not implement %s", algoName(algo),
                collName(args.kind));
  return e->build(args);
}

}  // namespace gdr::coll

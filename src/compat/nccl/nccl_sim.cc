#include "compat/nccl/nccl_sim.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <vector>

#include "core/params.h"
#include "sim/p2p.h"
#include "sim/predict.h"
#include "sim/sim_report.h"

namespace gdr::nccl {
namespace {

struct Note {
  const Comm* comm;
  int nranks;
  int rank;
  SimCall call;
};

thread_local std::vector<Note> tNotes;

// The cluster every estimate uses when GDR_SIM_CLUSTER is not set.
constexpr const char* kDefaultCluster = "h200x2";

}  // namespace

void groupNoteSim(const Comm& comm, const SimCall& call) {
  if (call.priced) tNotes.push_back(Note{&comm, comm.nranks, comm.rank, call});
}

void groupClearSim() { tNotes.clear(); }

float groupSimulatedUs() {
  std::string name = param::getString("GDR_SIM_CLUSTER");
  if (name.empty()) name = kDefaultCluster;
  // The estimate per communicator, in order of first note (a group holds a
  // handful: a linear search is enough), with its sends and receives.
  struct PerComm {
    const void* comm;
    const sim::Cluster* cluster;
    int rank;
    double us;
    std::vector<sim::P2pOp> p2p;
  };
  std::vector<PerComm> perComm;
  std::map<int, sim::Cluster> clusters;  // by rank count
  for (const Note& n : tNotes) {
    if (n.nranks < 2) continue;  // one rank: a local copy at most
    auto it = clusters.find(n.nranks);
    if (it == clusters.end())
      it = clusters.emplace(n.nranks, sim::makeCluster(name, "", "", n.nranks)).first;
    auto c = std::find_if(perComm.begin(), perComm.end(),
                          [&](const PerComm& pc) { return pc.comm == n.comm; });
    if (c == perComm.end())
      c = perComm.insert(perComm.end(), PerComm{n.comm, &it->second, n.rank, 0, {}});
    const size_t elemBytes = typeBytes(n.call.type);
    switch (n.call.shape) {
      case SimShape::Send:
      case SimShape::Recv:
        c->p2p.push_back(
            sim::P2pOp{n.call.shape == SimShape::Send, n.call.root, n.call.count * elemBytes});
        continue;
      case SimShape::Gather:
      case SimShape::Scatter:
        c->us += sim::rootedUs(it->second, n.call.shape == SimShape::Gather, n.call.root,
                               n.call.count, elemBytes);
        continue;
      case SimShape::Coll:
        break;
    }
    sim::Query q;
    q.kind = n.call.kind;
    q.elemBytes = elemBytes;
    const bool perRank = traitsOf(q.kind).layout != Layout::Whole;
    q.bytes = n.call.count * q.elemBytes * (perRank ? static_cast<size_t>(n.nranks) : 1);
    q.root = n.call.root;
    c->us += sim::predict(it->second, q).timeUs;
  }
  double worst = 0;
  for (const PerComm& pc : perComm)
    worst = std::max(worst, pc.us + sim::p2pUs(*pc.cluster, pc.rank, pc.p2p));
  return static_cast<float>(worst);
}

}  // namespace gdr::nccl

#include "compat/nccl/nccl_sim.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <vector>

#include "core/params.h"
#include "sim/predict.h"
#include "sim/sim_report.h"

namespace gdr::nccl {
namespace {

struct Note {
  const Comm* comm;
  int nranks;
  SimCall call;
};

thread_local std::vector<Note> tNotes;

// The cluster every estimate uses when GDR_SIM_CLUSTER is not set.
constexpr const char* kDefaultCluster = "h200x2";

}  // namespace

void groupNoteSim(const Comm& comm, const SimCall& call) {
  if (call.priced) tNotes.push_back(Note{&comm, comm.nranks, call});
}

void groupClearSim() { tNotes.clear(); }

float groupSimulatedUs() {
  std::string name = param::getString("GDR_SIM_CLUSTER");
  if (name.empty()) name = kDefaultCluster;
  // The estimate per communicator, in order of first note (a group holds a
  // handful: a linear search is enough).
  std::vector<std::pair<const void*, double>> perComm;
  std::map<int, sim::Cluster> clusters;  // by rank count
  for (const Note& n : tNotes) {
    if (n.nranks < 2) continue;  // one rank: a local copy at most
    auto it = clusters.find(n.nranks);
    if (it == clusters.end())
      it = clusters.emplace(n.nranks, sim::makeCluster(name, "", "", n.nranks)).first;
    sim::Query q;
    q.kind = n.call.kind;
    q.elemBytes = typeBytes(n.call.type);
    const bool perRank = traitsOf(q.kind).layout != Layout::Whole;
    q.bytes = n.call.count * q.elemBytes * (perRank ? static_cast<size_t>(n.nranks) : 1);
    q.root = n.call.root;
    const double us = sim::predict(it->second, q).timeUs;
    auto c = std::find_if(perComm.begin(), perComm.end(),
                          [&](const auto& kv) { return kv.first == n.comm; });
    if (c == perComm.end())
      perComm.emplace_back(n.comm, us);
    else
      c->second += us;
  }
  double worst = 0;
  for (const auto& kv : perComm) worst = std::max(worst, kv.second);
  return static_cast<float>(worst);
}

}  // namespace gdr::nccl

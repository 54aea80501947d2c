#include "comm/topo_plan.h"

#include <cstdlib>

#if GDR_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "core/error.h"
#include "core/log.h"
#include "core/params.h"
#include "topology/ring_order.h"
#include "topology/topology.h"

namespace gdr {

std::string localGpuBusId() {
#if GDR_HAVE_CUDA
  int n = 0, dev = -1;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0 || cudaGetDevice(&dev) != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  char bus[32] = {0};
  if (cudaDeviceGetPCIBusId(bus, sizeof(bus), dev) != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  return bus;
#else
  return "";
#endif
}

TopoPlan planTopology(int rank, const std::vector<std::string>& hostIds,
                      const std::vector<std::string>& gpuBusIds) {
  TopoPlan plan;
  const int n = static_cast<int>(hostIds.size());
  const std::string& mine = gpuBusIds[rank];
  std::unique_ptr<topo::Topology> topo;
  // The machine's topology matters only to a rank with a GPU (its NIC, its
  // neighbours) or when a saved one is given; host-memory ranks skip the scan.
  if (!mine.empty() || !param::getString("GDR_TOPO_FILE").empty()) {
    try {
      topo = std::make_unique<topo::Topology>(topo::Topology::fromEnv());
      GDR_INFO(kTopo, "topology from %s: %zu GPU(s), %zu RDMA NIC(s)", topo->source().c_str(),
               topo->gpus().size(), topo->nics().size());
    } catch (const Error& e) {
      GDR_WARN(kTopo, "topology unavailable, placement decisions fall back to defaults: %s", e.what());
    }
  }
  if (topo && !mine.empty()) {
    int g = topo->findGpu(mine);
    if (g < 0) {
      GDR_INFO(kTopo, "rank %d: GPU %s is not in the topology; no NIC preference", rank, mine.c_str());
    } else {
      topo::NicAssignment a = topo->assignNics()[g];
      if (a.nic >= 0) {
        plan.nic = topo->nics()[a.nic].name;
        for (int n : a.more) plan.nic += "," + topo->nics()[n].name;
        plan.nicUsesGdr = a.useGdr;
      }
      GDR_INFO(kTopo, "rank %d: GPU %s -> NIC %s (%s), GPUDirect RDMA %s: %s", rank, mine.c_str(),
               plan.nic.empty() ? "none" : plan.nic.c_str(), topo::pathName(a.path), a.useGdr ? "on" : "off",
               a.reason.c_str());
    }
  } else if (mine.empty()) {
    GDR_INFO(kTopo, "rank %d: no GPU in use; host memory only, no NIC preference", rank);
  }
  std::vector<topo::RankPlace> places(n);
  for (int r = 0; r < n; ++r) places[r] = {hostIds[r], gpuBusIds[r]};
  plan.order = topo::ringOrder(places, topo.get());
  for (int i = 0; i < n; ++i) plan.identity &= plan.order[i] == i;
  if (!plan.identity) {
    std::string s;
    for (int r : plan.order) s += std::to_string(r) + " ";
    GDR_INFO(kTopo, "ring/tree order (hosts together, closest GPUs adjacent): %s", s.c_str());
  }
  return plan;
}

}  // namespace gdr

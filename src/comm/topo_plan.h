// What the communicator takes from the topology (topology/): this rank's
// GPU, the NIC assigned to it (for the verbs transport) and the order of
// ranks that rings and trees follow. Every decision is logged under
// GDR_DEBUG_SUBSYS=TOPO with its reason.
#pragma once

#include <string>
#include <vector>

namespace gdr {

struct TopoPlan {
  std::string nic;  // the topology's NIC(s) for this rank's GPU, comma-separated ("" none)
  bool nicUsesGdr = false;
  std::vector<int> order;     // order[i] = the rank at ring position i
  std::vector<int> position;  // position[r] = ring position of rank r
  bool identity = true;    // order is 0, 1, 2, ...
};

// The PCI bus id of the CUDA device this thread uses ("" without CUDA or a device).
std::string localGpuBusId();

// `hostIds` and `gpuBusIds` hold every rank's values (allgathered). A
// topology that cannot be read is logged and leaves the plan neutral.
TopoPlan planTopology(int rank, const std::vector<std::string>& hostIds,
                      const std::vector<std::string>& gpuBusIds);

}  // namespace gdr

// What a Topology holds. Internal to topology/: the only header that names an
// hwloc type, and only by a forward declaration.
#pragma once

#include <string>
#include <vector>

#include "topology/pci_path.h"
#include "topology/topology.h"

struct hwloc_topology;

namespace gdr::topo {

// NVLinks between GPUs: links[a][b] is the number of links joining GPU a and b
// (directly or through NVSwitches), perGpu[a] the links leaving GPU a.
struct NvlinkMap {
  std::vector<std::vector<int>> links;
  std::vector<int> perGpu;
  std::string source;  // where the numbers came from, for the log; empty: none found
};

struct Topology::Impl {
  hwloc_topology* hw = nullptr;  // owned
  bool live = false;
  std::string source;
  std::vector<Gpu> gpus;
  std::vector<Nic> nics;
  std::vector<PciPlace> gpuPlaces, nicPlaces;
  NvlinkMap nvlink;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl();
};

// Fills gpus, nics, their places and the NVLink map from impl.hw (loaded).
void scanDevices(Topology::Impl& impl);

// NVLinks from the topology's "NVLinkBandwidth" distance matrix (hwloc's NVML
// backend exports it, and XML keeps it). Empty source when the matrix is absent.
NvlinkMap nvlinksFromHwloc(hwloc_topology* hw, const std::vector<std::string>& gpuBusIds);
// NVLinks asked of NVML at run time; empty source when libnvidia-ml.so.1 cannot
// be loaded or knows none of these GPUs.
NvlinkMap nvlinksFromNvml(const std::vector<std::string>& gpuBusIds);
// Link count from a bandwidth in MB/s as hwloc reports it.
int linksFromBandwidth(unsigned long long mbps);

}  // namespace gdr::topo

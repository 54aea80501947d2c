// NVLinks from hwloc's "NVLinkBandwidth" distance matrix. hwloc's NVML backend
// exports it (and XML keeps it) with GPUs as OS devices and NVSwitches as PCI
// devices; an entry is the bandwidth in MB/s from row object to column object.
// Two GPUs are NVLink peers when linked directly or when both have links into
// NVSwitches; through switches, a pair gets as many links as the less
// connected GPU has into the fabric (how nvidia-smi's NV# reads).
//
// The matrix never holds links between NVSwitches: NVML, its source, is asked
// only about GPU links. We take all NVSwitches of one host to be one fabric,
// as they are on every NVSwitch system NVIDIA builds (DGX-2's two baseboards
// are joined by switch-to-switch trunks that this matrix does not show).
#include <hwloc.h>

#include <algorithm>

#include "topology/bus_id.h"
#include "topology/topology_impl.h"

namespace gdr::topo {

int linksFromBandwidth(unsigned long long mbps) {
  // hwloc reports links x per-link speed: 20000 MB/s for NVLink 1, 25000 after.
  if (mbps == 0) return 0;
  if (mbps % 25000 == 0) return static_cast<int>(mbps / 25000);
  if (mbps % 20000 == 0) return static_cast<int>(mbps / 20000);
  return std::max(1, static_cast<int>((mbps + 12500) / 25000));
}

namespace {

// The GPU index of a matrix object, or -1 for anything else (an NVSwitch).
int gpuIndexOf(hwloc_obj_t o, const std::vector<std::string>& gpuBusIds) {
  if (o->type == HWLOC_OBJ_OS_DEVICE) o = o->parent;
  if (!o || o->type != HWLOC_OBJ_PCI_DEVICE) return -1;
  const auto& a = o->attr->pcidev;
  auto it = std::find(gpuBusIds.begin(), gpuBusIds.end(), formatBusId(a.domain, a.bus, a.dev, a.func));
  return it == gpuBusIds.end() ? -1 : static_cast<int>(it - gpuBusIds.begin());
}

}  // namespace

NvlinkMap nvlinksFromHwloc(hwloc_topology* hw, const std::vector<std::string>& gpuBusIds) {
  const size_t ngpu = gpuBusIds.size();
  NvlinkMap map;
  map.links.assign(ngpu, std::vector<int>(ngpu, 0));
  map.perGpu.assign(ngpu, 0);

  unsigned nr = 1;
  hwloc_distances_s* d = nullptr;
  if (hwloc_distances_get_by_name(hw, "NVLinkBandwidth", &nr, &d, 0) < 0 || nr == 0) return map;
  const unsigned n = d->nbobjs;
  std::vector<int> gpuOf(n);
  for (unsigned i = 0; i < n; ++i) gpuOf[i] = gpuIndexOf(d->objs[i], gpuBusIds);
  auto bw = [&](unsigned i, unsigned j) { return d->values[i * n + j]; };

  // Per GPU: bandwidth into the switch fabric, and direct links to other GPUs.
  std::vector<unsigned long long> toSwitch(ngpu, 0);
  for (unsigned i = 0; i < n; ++i) {
    int g = gpuOf[i];
    if (g < 0) continue;
    unsigned long long total = 0;
    for (unsigned j = 0; j < n; ++j) {
      if (j == i) continue;
      total += bw(i, j);
      if (gpuOf[j] >= 0) map.links[g][gpuOf[j]] += linksFromBandwidth(bw(i, j));
      else toSwitch[g] += bw(i, j);
    }
    map.perGpu[g] = linksFromBandwidth(total);
  }
  for (size_t a = 0; a < ngpu; ++a)
    for (size_t b = 0; b < ngpu; ++b)
      if (a != b) map.links[a][b] += linksFromBandwidth(std::min(toSwitch[a], toSwitch[b]));
  hwloc_distances_release(hw, d);
  map.source = "the topology's NVLinkBandwidth matrix";
  return map;
}

}  // namespace gdr::topo

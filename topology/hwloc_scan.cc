// Reading GPUs, RDMA NICs and their places in the PCI tree out of a loaded
// hwloc topology. hwloc answers every question here; nothing reads sysfs.
#include <hwloc.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "core/log.h"
#include "topology/bus_id.h"
#include "topology/topology_impl.h"

namespace gdr::topo {

namespace {

constexpr unsigned kNvidiaVendor = 0x10de;

std::string bitmapText(hwloc_const_bitmap_t b) {
  if (!b) return std::string();
  char* s = nullptr;
  if (hwloc_bitmap_asprintf(&s, b) < 0 || !s) return std::string();
  std::string out(s);
  std::free(s);
  return out;
}

std::string busIdOf(hwloc_obj_t pci) {
  const auto& a = pci->attr->pcidev;
  return formatBusId(a.domain, a.bus, a.dev, a.func);
}

bool isPciToPciBridge(hwloc_obj_t o) {
  return o->type == HWLOC_OBJ_BRIDGE && o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI;
}

// See PciPlace for why bridges are paired.
PciPlace placeOf(hwloc_obj_t pci) {
  PciPlace place;
  std::vector<hwloc_obj_t> bridges;
  hwloc_obj_t o = pci->parent;
  for (; o && isPciToPciBridge(o); o = o->parent) bridges.push_back(o);
  for (size_t i = 0; i + 1 < bridges.size(); i += 2) place.switches.push_back(bridges[i + 1]->gp_index + 1);
  if (o && o->type == HWLOC_OBJ_BRIDGE) place.hostBridge = o->gp_index + 1;
  hwloc_obj_t cpuSide = hwloc_get_non_io_ancestor_obj(nullptr, pci);
  if (cpuSide) place.locality = bitmapText(cpuSide->nodeset);
  return place;
}

// NUMA node and local CPUs of a PCI function.
void localityOf(hwloc_obj_t pci, int& numa, std::string& cpuset) {
  hwloc_obj_t cpuSide = hwloc_get_non_io_ancestor_obj(nullptr, pci);
  numa = -1;
  if (!cpuSide) return;
  if (cpuSide->nodeset && hwloc_bitmap_weight(cpuSide->nodeset) == 1)
    numa = hwloc_bitmap_first(cpuSide->nodeset);
  cpuset = bitmapText(cpuSide->cpuset);
}

bool isNvidiaGpu(hwloc_obj_t pci) {
  const auto& a = pci->attr->pcidev;
  // 0300: VGA controller, 0302: 3D controller (data-centre GPUs).
  return a.vendor_id == kNvidiaVendor && (a.class_id == 0x0300 || a.class_id == 0x0302);
}

std::string gpuModel(hwloc_obj_t pci) {
  for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling)
    if (c->type == HWLOC_OBJ_OS_DEVICE)
      if (const char* m = hwloc_obj_get_info_by_name(c, "GPUModel")) return m;
  return strprintf("[%04x:%04x]", pci->attr->pcidev.vendor_id, pci->attr->pcidev.device_id);
}

// Ports hwloc saw, from info keys "Port<N>State".
std::vector<int> portsOf(hwloc_obj_t osdev) {
  std::vector<int> ports;
  for (unsigned i = 0; i < osdev->infos_count; ++i) {
    const char* name = osdev->infos[i].name;
    if (std::strncmp(name, "Port", 4) != 0) continue;
    char* end = nullptr;
    long p = std::strtol(name + 4, &end, 10);
    if (end != name + 4 && std::strcmp(end, "State") == 0) ports.push_back(static_cast<int>(p));
  }
  std::sort(ports.begin(), ports.end());
  return ports;
}

// Names compared with their digit runs as numbers: mlx5_2 before mlx5_10.
bool naturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (isdigit(static_cast<unsigned char>(a[i])) && isdigit(static_cast<unsigned char>(b[j]))) {
      size_t ie = i, je = j;
      while (ie < a.size() && isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && isdigit(static_cast<unsigned char>(b[je]))) ++je;
      unsigned long long x = std::strtoull(a.substr(i, ie - i).c_str(), nullptr, 10);
      unsigned long long y = std::strtoull(b.substr(j, je - j).c_str(), nullptr, 10);
      if (x != y) return x < y;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

}  // namespace

void scanDevices(Topology::Impl& impl) {
  hwloc_topology_t hw = impl.hw;
  struct Found {
    Gpu gpu;
    PciPlace place;
  };
  std::vector<Found> gpus;
  for (hwloc_obj_t pci = nullptr; (pci = hwloc_get_next_pcidev(hw, pci));) {
    if (!isNvidiaGpu(pci)) continue;
    Found f;
    f.gpu.busId = busIdOf(pci);
    f.gpu.model = gpuModel(pci);
    localityOf(pci, f.gpu.numa, f.gpu.cpuset);
    f.place = placeOf(pci);
    gpus.push_back(std::move(f));
  }
  std::sort(gpus.begin(), gpus.end(),
            [](const Found& a, const Found& b) { return a.gpu.busId < b.gpu.busId; });

  struct FoundNic {
    Nic nic;
    PciPlace place;
  };
  std::vector<FoundNic> nics;
  for (hwloc_obj_t os = nullptr; (os = hwloc_get_next_osdev(hw, os));) {
    if (os->attr->osdev.type != HWLOC_OBJ_OSDEV_OPENFABRICS) continue;
    hwloc_obj_t pci = os->parent;
    if (!pci || pci->type != HWLOC_OBJ_PCI_DEVICE) {
      // Soft-RoCE and other software devices have no PCI function to place.
      GDR_INFO(kTopo, "RDMA device %s has no PCI function; left out of the topology", os->name);
      continue;
    }
    FoundNic f;
    f.nic.name = os->name ? os->name : "?";
    f.nic.busId = busIdOf(pci);
    f.nic.ports = portsOf(os);
    for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling)
      if (c->type == HWLOC_OBJ_OS_DEVICE && c->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && c->name)
        f.nic.netdevs.push_back(c->name);
    localityOf(pci, f.nic.numa, f.nic.cpuset);
    f.place = placeOf(pci);
    nics.push_back(std::move(f));
  }
  std::sort(nics.begin(), nics.end(),
            [](const FoundNic& a, const FoundNic& b) { return naturalLess(a.nic.name, b.nic.name); });

  for (Found& f : gpus) {
    impl.gpus.push_back(std::move(f.gpu));
    impl.gpuPlaces.push_back(std::move(f.place));
  }
  for (FoundNic& f : nics) {
    impl.nics.push_back(std::move(f.nic));
    impl.nicPlaces.push_back(std::move(f.place));
  }

  std::vector<std::string> busIds;
  for (const Gpu& g : impl.gpus) busIds.push_back(g.busId);
  // On the live machine NVML counts links exactly; a saved XML has only
  // hwloc's bandwidth matrix.
  if (impl.live) impl.nvlink = nvlinksFromNvml(busIds);
  if (impl.nvlink.source.empty()) impl.nvlink = nvlinksFromHwloc(hw, busIds);
  if (impl.nvlink.source.empty()) {
    impl.nvlink.links.assign(busIds.size(), std::vector<int>(busIds.size(), 0));
    impl.nvlink.perGpu.assign(busIds.size(), 0);
    if (busIds.size() > 1)
      GDR_INFO(kTopo, "%s: no NVLink information (no NVML, no NVLinkBandwidth matrix); "
               "GPU pairs are classified by PCIe only", impl.source.c_str());
  } else {
    GDR_INFO(kTopo, "%s: NVLinks from %s", impl.source.c_str(), impl.nvlink.source.c_str());
  }
  for (size_t g = 0; g < impl.gpus.size(); ++g) impl.gpus[g].nvlinks = impl.nvlink.perGpu[g];
}

}  // namespace gdr::topo

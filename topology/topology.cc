// Topology: loading (live machine or XML), dumping, and the path queries.
#include "topology/topology.h"

#include <hwloc.h>

#include <cerrno>
#include <cstdio>

#include "core/error.h"
#include "core/log.h"
#include "core/params.h"
#include "topology/bus_id.h"
#include "topology/nic_assign.h"
#include "topology/topology_impl.h"

namespace gdr::topo {

Topology::Impl::~Impl() {
  if (hw) hwloc_topology_destroy(hw);
}

namespace {

std::unique_ptr<Topology::Impl> newImpl(const std::string& source) {
  auto impl = std::make_unique<Topology::Impl>();
  impl->source = source;
  if (hwloc_topology_init(&impl->hw) < 0) throw SystemError("hwloc_topology_init failed", errno);
  // Keep every PCI device and bridge: the path classes need the whole tree,
  // and a dump should be as complete as lstopo's.
  hwloc_topology_set_io_types_filter(impl->hw, HWLOC_TYPE_FILTER_KEEP_ALL);
  return impl;
}

void logPaths(const Topology& t) {
  if (!log::enabled(log::Level::Info, log::kTopo)) return;
  const auto& gpus = t.gpus();
  const auto& nics = t.nics();
  GDR_INFO(kTopo, "%s: %zu GPU(s), %zu RDMA NIC(s)", t.source().c_str(), gpus.size(), nics.size());
  for (size_t g = 0; g < gpus.size(); ++g) {
    GDR_INFO(kTopo, "GPU %s (%s) NUMA %d, %d NVLink(s)", gpus[g].busId.c_str(),
             gpus[g].model.c_str(), gpus[g].numa, gpus[g].nvlinks);
    for (size_t n = 0; n < nics.size(); ++n)
    {
      PathClass p = t.gpuNicPath(static_cast<int>(g), static_cast<int>(n));
      GDR_INFO(kTopo, "path GPU %s - %s (%s): %s, %s", gpus[g].busId.c_str(), nics[n].name.c_str(),
               nics[n].busId.c_str(), pathName(p), describePath(p));
    }
    for (size_t h = g + 1; h < gpus.size(); ++h) {
      PathClass p = t.gpuGpuPath(static_cast<int>(g), static_cast<int>(h));
      GDR_INFO(kTopo, "path GPU %s - GPU %s: %s, %s (%d NVLinks)", gpus[g].busId.c_str(),
               gpus[h].busId.c_str(), pathName(p), describePath(p),
               t.nvlinkCount(static_cast<int>(g), static_cast<int>(h)));
    }
  }
}

}  // namespace

AssignOptions AssignOptions::fromEnv() {
  AssignOptions o;
  o.gdrLevel = parsePathClass(param::getString("GDR_NET_GDR_LEVEL"), "GDR_NET_GDR_LEVEL");
  o.hca = param::getString("GDR_IB_HCA");
  return o;
}

Topology::Topology(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;
Topology::~Topology() = default;

Topology Topology::live() {
  auto impl = newImpl("this machine");
  impl->live = true;
  if (hwloc_topology_load(impl->hw) < 0)
    throw SystemError("hwloc could not read this machine's topology", errno);
  scanDevices(*impl);
  Topology t(std::move(impl));
  logPaths(t);
  return t;
}

Topology Topology::loadXml(const std::string& path) {
  // Ask the OS first: hwloc's own message for a missing file is vague.
  FILE* f = std::fopen(path.c_str(), "r");
  if (!f) throw SystemError(strprintf("cannot read hwloc XML topology %s", path.c_str()), errno);
  std::fclose(f);
  auto impl = newImpl(path);
  if (hwloc_topology_set_xml(impl->hw, path.c_str()) < 0 || hwloc_topology_load(impl->hw) < 0)
    throw InvalidArgument(strprintf(
        "%s is not a topology hwloc can load (expected an XML export such as `lstopo "
        "--of xml` writes)", path.c_str()));
  scanDevices(*impl);
  Topology t(std::move(impl));
  logPaths(t);
  return t;
}

Topology Topology::fromEnv() {
  std::string file = param::getString("GDR_TOPO_FILE");
  if (file.empty()) return live();
  GDR_INFO(kTopo, "topology from GDR_TOPO_FILE=%s instead of this machine", file.c_str());
  return loadXml(file);
}

void Topology::dumpXml(const std::string& path) const {
  errno = 0;
  if (hwloc_topology_export_xml(impl_->hw, path.c_str(), 0) < 0)
    throw SystemError(strprintf("cannot write hwloc XML topology to %s", path.c_str()),
                      errno ? errno : EIO);
  GDR_INFO(kTopo, "topology of %s written to %s", impl_->source.c_str(), path.c_str());
}

const std::string& Topology::source() const { return impl_->source; }
const std::vector<Gpu>& Topology::gpus() const { return impl_->gpus; }
const std::vector<Nic>& Topology::nics() const { return impl_->nics; }

PathClass Topology::gpuNicPath(int gpu, int nic) const {
  GDR_CHECK_ARG(gpu >= 0 && gpu < static_cast<int>(impl_->gpus.size()), "no GPU %d", gpu);
  GDR_CHECK_ARG(nic >= 0 && nic < static_cast<int>(impl_->nics.size()), "no NIC %d", nic);
  return classifyPci(impl_->gpuPlaces[gpu], impl_->nicPlaces[nic]);
}

int Topology::nvlinkCount(int a, int b) const {
  const int n = static_cast<int>(impl_->gpus.size());
  GDR_CHECK_ARG(a >= 0 && a < n && b >= 0 && b < n, "no GPU pair (%d, %d)", a, b);
  return a == b ? 0 : impl_->nvlink.links[a][b];
}

PathClass Topology::gpuGpuPath(int a, int b) const {
  // A GPU and itself: NVL, the closest class (gdr-topo prints X).
  if (a == b || nvlinkCount(a, b) > 0) return PathClass::NVL;
  return classifyPci(impl_->gpuPlaces[a], impl_->gpuPlaces[b]);
}

int Topology::findGpu(const std::string& busId) const {
  std::string want = canonicalBusId(busId);
  for (size_t g = 0; g < impl_->gpus.size(); ++g)
    if (!want.empty() && impl_->gpus[g].busId == want) return static_cast<int>(g);
  return -1;
}

int Topology::findNic(const std::string& name) const {
  for (size_t n = 0; n < impl_->nics.size(); ++n)
    if (impl_->nics[n].name == name) return static_cast<int>(n);
  return -1;
}

std::vector<NicAssignment> Topology::assignNics(const AssignOptions& opts) const {
  AssignInput in;
  for (const Gpu& g : impl_->gpus) in.gpuNames.push_back(g.busId);
  for (const Nic& n : impl_->nics) in.nicNames.push_back(n.name);
  in.path.resize(impl_->gpus.size());
  for (size_t g = 0; g < impl_->gpus.size(); ++g)
    for (size_t n = 0; n < impl_->nics.size(); ++n)
      in.path[g].push_back(gpuNicPath(static_cast<int>(g), static_cast<int>(n)));
  return gdr::topo::assignNics(in, opts);
}

bool Topology::bindThreadNearGpu(int gpu) const {
  GDR_CHECK_ARG(gpu >= 0 && gpu < static_cast<int>(impl_->gpus.size()), "no GPU %d", gpu);
  const std::string& bus = impl_->gpus[gpu].busId;
  if (!impl_->live) {
    GDR_INFO(kTopo, "not binding near GPU %s: the topology is %s, not this machine", bus.c_str(),
             impl_->source.c_str());
    return false;
  }
  hwloc_obj_t pci = hwloc_get_pcidev_by_busidstring(impl_->hw, bus.c_str());
  hwloc_obj_t cpuSide = pci ? hwloc_get_non_io_ancestor_obj(impl_->hw, pci) : nullptr;
  if (!cpuSide || !cpuSide->cpuset || hwloc_set_cpubind(impl_->hw, cpuSide->cpuset, HWLOC_CPUBIND_THREAD) < 0) {
    GDR_WARN(kTopo, "could not bind this thread near GPU %s (%s)", bus.c_str(),
             cpuSide ? "hwloc_set_cpubind failed" : "GPU not in the tree");
    return false;
  }
  GDR_INFO(kTopo, "thread bound to CPUs %s, local to GPU %s (NUMA %d)",
           impl_->gpus[gpu].cpuset.c_str(), bus.c_str(), impl_->gpus[gpu].numa);
  return true;
}

}  // namespace gdr::topo

// NVLinks asked of NVML at run time. libnvidia-ml.so.1 is loaded with dlopen so
// that one binary runs on hosts without the NVIDIA driver; its few functions
// are declared here rather than pulling in nvml.h.
#include <dlfcn.h>

#include <algorithm>

#include "core/log.h"
#include "topology/bus_id.h"
#include "topology/topology_impl.h"

namespace gdr::topo {

namespace {

using nvmlReturn = int;  // 0: NVML_SUCCESS
using nvmlDevice = struct nvmlDeviceOpaque*;
constexpr int kNvmlFeatureEnabled = 1;
constexpr unsigned kMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS as of Hopper

struct NvmlPciInfo {  // nvmlPciInfo_t (the _v2 entry points' layout)
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};

struct Nvml {
  void* lib = nullptr;
  nvmlReturn (*init)() = nullptr;
  nvmlReturn (*shutdown)() = nullptr;
  nvmlReturn (*byBusId)(const char*, nvmlDevice*) = nullptr;
  nvmlReturn (*linkState)(nvmlDevice, unsigned, int*) = nullptr;
  nvmlReturn (*remotePci)(nvmlDevice, unsigned, NvmlPciInfo*) = nullptr;

  bool load() {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return false;
    init = reinterpret_cast<decltype(init)>(dlsym(lib, "nvmlInit_v2"));
    shutdown = reinterpret_cast<decltype(shutdown)>(dlsym(lib, "nvmlShutdown"));
    byBusId = reinterpret_cast<decltype(byBusId)>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    linkState = reinterpret_cast<decltype(linkState)>(dlsym(lib, "nvmlDeviceGetNvLinkState"));
    remotePci = reinterpret_cast<decltype(remotePci)>(dlsym(lib, "nvmlDeviceGetNvLinkRemotePciInfo_v2"));
    return init && shutdown && byBusId && linkState && remotePci && init() == 0;
  }
  ~Nvml() {
    if (lib && init && shutdown) shutdown();
    if (lib) dlclose(lib);
  }
};

}  // namespace

NvlinkMap nvlinksFromNvml(const std::vector<std::string>& gpuBusIds) {
  const size_t ngpu = gpuBusIds.size();
  NvlinkMap map;
  map.links.assign(ngpu, std::vector<int>(ngpu, 0));
  map.perGpu.assign(ngpu, 0);
  if (ngpu == 0) return map;
  Nvml nvml;
  if (!nvml.load()) {
    GDR_INFO(kTopo, "NVML not usable (libnvidia-ml.so.1: %s)", nvml.lib ? "init failed" : dlerror());
    return map;
  }
  // Links to something that is not one of our GPUs go to NVSwitches; with
  // switches, every GPU reaches every other (HGX baseboards have one fabric).
  std::vector<int> toSwitch(ngpu, 0);
  bool any = false;
  for (size_t g = 0; g < ngpu; ++g) {
    nvmlDevice dev = nullptr;
    if (nvml.byBusId(gpuBusIds[g].c_str(), &dev) != 0) continue;
    any = true;
    for (unsigned link = 0; link < kMaxLinks; ++link) {
      int state = 0;
      NvmlPciInfo remote{};
      if (nvml.linkState(dev, link, &state) != 0 || state != kNvmlFeatureEnabled) continue;
      if (nvml.remotePci(dev, link, &remote) != 0) continue;
      ++map.perGpu[g];
      std::string peer = canonicalBusId(remote.busId);
      auto it = std::find(gpuBusIds.begin(), gpuBusIds.end(), peer);
      if (it != gpuBusIds.end()) ++map.links[g][it - gpuBusIds.begin()];
      else ++toSwitch[g];
    }
  }
  if (!any) return map;
  for (size_t a = 0; a < ngpu; ++a)
    for (size_t b = 0; b < ngpu; ++b)
      if (a != b) map.links[a][b] += std::min(toSwitch[a], toSwitch[b]);
  map.source = "NVML";
  return map;
}

}  // namespace gdr::topo

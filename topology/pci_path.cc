#include "topology/pci_path.h"

#include <strings.h>

#include "core/error.h"

namespace gdr::topo {

namespace {
constexpr const char* kNames[] = {"NVL", "PIX", "PXB", "PHB", "NODE", "SYS"};
}

const char* pathName(PathClass p) {
  int i = static_cast<int>(p);
  return i >= 0 && i < 6 ? kNames[i] : "?";
}

PathClass parsePathClass(const std::string& text, const char* what) {
  for (int i = 0; i < 6; ++i)
    if (!strcasecmp(text.c_str(), kNames[i])) return static_cast<PathClass>(i);
  throw InvalidArgument(strprintf("%s=%s is not a path class (use NVL, PIX, PXB, PHB, NODE or SYS)",
                                  what, text.c_str()));
}

const char* describePath(PathClass p) {
  switch (p) {
    case PathClass::NVL: return "over NVLink";
    case PathClass::PIX: return "under the same PCIe switch";
    case PathClass::PXB: return "behind several PCIe switches, without crossing the host bridge";
    case PathClass::PHB: return "through the CPU's PCIe host bridge";
    case PathClass::NODE: return "across host bridges of one NUMA node";
    case PathClass::SYS: return "across the link between NUMA nodes";
  }
  return "?";
}

PathClass classifyPci(const PciPlace& a, const PciPlace& b) {
  // The lowest switch both sit under; the switches crossed are the ones below
  // it on each side plus itself.
  for (size_t i = 0; i < a.switches.size(); ++i)
    for (size_t j = 0; j < b.switches.size(); ++j)
      if (a.switches[i] == b.switches[j]) return i + j == 0 ? PathClass::PIX : PathClass::PXB;
  if (a.hostBridge != 0 && a.hostBridge == b.hostBridge) return PathClass::PHB;
  if (a.locality == b.locality) return PathClass::NODE;
  return PathClass::SYS;
}

}  // namespace gdr::topo

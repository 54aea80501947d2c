// gdr-topo: what gdrcoll makes of this machine (or of a saved hwloc XML): the
// GPU/NIC matrix of path classes, each GPU's NIC, and whether GPUDirect RDMA
// will be used and why.
#include <cstdio>
#include <cstring>
#include <string>

#if GDR_HAVE_IB
#include "transport/ib/gdr_mode.h"
#endif
#include "core/error.h"
#include "topology/report.h"
#include "topology/topology.h"

namespace {

constexpr const char* kUsage =
    "usage: gdr-topo [--xml FILE] [--dump FILE] [--json]\n"
    "\n"
    "Prints the GPU/NIC matrix of path classes (like `nvidia-smi topo -m`, NICs as\n"
    "columns), then for each GPU its NIC, the path class, whether GPUDirect RDMA\n"
    "will be used (and why not), and its NUMA node.\n"
    "\n"
    "  --xml FILE   read a saved hwloc XML topology instead of this machine\n"
    "               (default: GDR_TOPO_FILE if set, else this machine)\n"
    "  --dump FILE  save the topology that was read as hwloc XML to FILE\n"
    "  --json       print the same facts as JSON\n"
    "  -h, --help   this text\n"
    "\n"
    "Honours GDR_NET_GDR_LEVEL (GPUDirect up to this path class, default PXB) and\n"
    "GDR_IB_HCA (NICs to use, e.g. mlx5_0 or ^mlx5_1). GDR_DEBUG=INFO\n"
    "GDR_DEBUG_SUBSYS=TOPO logs every decision.\n";

int usageError(const std::string& msg) {
  std::fprintf(stderr, "gdr-topo: %s\n(run gdr-topo --help for usage)\n", msg.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string xml, dump;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--json") {
      json = true;
    } else if (arg == "--xml" || arg == "--dump") {
      if (i + 1 >= argc || argv[i + 1][0] == '\0') return usageError(arg + " needs a FILE argument");
      (arg == "--xml" ? xml : dump) = argv[++i];
    } else {
      return usageError("unknown argument '" + arg + "'");
    }
  }
  try {
    gdr::topo::Topology t =
        xml.empty() ? gdr::topo::Topology::fromEnv() : gdr::topo::Topology::loadXml(xml);
    if (!dump.empty()) {
      t.dumpXml(dump);
      std::fprintf(stderr, "gdr-topo: topology of %s written to %s\n", t.source().c_str(),
                   dump.c_str());
    }
    std::vector<gdr::topo::NicAssignment> assign = t.assignNics();
    std::string out = json ? formatJson(t, assign) : formatText(t, assign);
    std::fputs(out.c_str(), stdout);
#if GDR_HAVE_IB
    if (!json && xml.empty()) {  // this machine: how GPU memory would meet the NIC
      gdr::transport::ib::GdrChecks c = gdr::transport::ib::probeGdrChecks();
      std::printf("GPUDirect RDMA here: %s\n",
                  gdr::transport::ib::describeGdr(c, gdr::transport::ib::decideGdr(c)).c_str());
    }
#endif
  } catch (const gdr::Error& e) {
    std::fprintf(stderr, "gdr-topo: %s\n", e.what());
    return 1;
  }
  return 0;
}

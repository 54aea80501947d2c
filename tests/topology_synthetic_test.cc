// Edge cases the real fixtures lack, on hwloc XML the tests write: a GPU with
// no NIC under its switch, two NICs equally close, a GPU behind a host bridge
// only, NIC names against bus order, NVLink pairs, and the GDR_* knobs.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "topology/topology.h"

using gdr::topo::AssignOptions;
using gdr::topo::NicAssignment;
using gdr::topo::PathClass;
using gdr::topo::Topology;

namespace {

// A two-socket machine (NUMA 0: PUs 0-1, NUMA 1: PUs 2-3) whose PCI trees the
// test describes with the helpers below. gp_index values only need to be unique.
class XmlMachine {
 public:
  std::string socket0, socket1, distances;

  std::string hostBridge(const std::string& inner) {
    return "<object type=\"Bridge\" gp_index=\"" + gp() +
           "\" bridge_type=\"0-1\" depth=\"0\" bridge_pci=\"0000:[00-ff]\">" + inner + "</object>";
  }
  // A PCI-to-PCI bridge: a CPU root port, or a switch port.
  std::string bridge(const std::string& bus, const std::string& inner) {
    return "<object type=\"Bridge\" gp_index=\"" + gp() +
           "\" bridge_type=\"1-1\" depth=\"1\" bridge_pci=\"0000:[00-ff]\" pci_busid=\"" + bus +
           "\" pci_type=\"0604 [10b5:8764] [10b5:8764] ab\" pci_link_speed=\"15.75\">" + inner +
           "</object>";
  }
  // A PCIe switch: an upstream port with one downstream port per device.
  std::string pciSwitch(const std::string& upBus, const std::vector<std::string>& devices) {
    std::string ports;
    for (size_t i = 0; i < devices.size(); ++i)
      ports += bridge(upBus.substr(0, 8) + std::to_string(i + 1) + ".0", devices[i]);
    return bridge(upBus, ports);
  }
  std::string gpu(const std::string& bus) {
    lastGpuGp_ = gp();
    return "<object type=\"PCIDev\" gp_index=\"" + lastGpuGp_ + "\" pci_busid=\"" + bus +
           "\" pci_type=\"0302 [10de:2335] [10de:18be] a1\" pci_link_speed=\"31.5\"/>";
  }
  std::string nic(const std::string& bus, const std::string& name) {
    return "<object type=\"PCIDev\" gp_index=\"" + gp() + "\" pci_busid=\"" + bus +
           "\" pci_type=\"0207 [15b3:101b] [15b3:0007] 00\" pci_link_speed=\"31.5\">"
           "<object type=\"OSDev\" gp_index=\"" + gp() + "\" name=\"" + name +
           "\" osdev_type=\"3\"><info name=\"Port1State\" value=\"4\"/></object></object>";
  }
  const std::string& lastGpuGp() const { return lastGpuGp_; }

  std::string write(const char* name) const {
    std::string xml =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
        "<topology version=\"2.0\">\n"
        "<object type=\"Machine\" os_index=\"0\" cpuset=\"0x0000000f\" complete_cpuset=\"0x0000000f\" "
        "allowed_cpuset=\"0x0000000f\" nodeset=\"0x00000003\" complete_nodeset=\"0x00000003\" "
        "allowed_nodeset=\"0x00000003\" gp_index=\"1\">\n" +
        package(0, socket0) + package(1, socket1) + "</object>\n" + distances + "</topology>\n";
    std::string path = testing::TempDir() + name;
    std::ofstream(path) << xml;
    return path;
  }

 private:
  int next_ = 100;
  std::string lastGpuGp_;
  std::string gp() { return std::to_string(next_++); }
  static std::string package(int i, const std::string& io) {
    std::string cpus = i == 0 ? "0x00000003" : "0x0000000c", node = i == 0 ? "0x00000001" : "0x00000002";
    std::string sets = "cpuset=\"" + cpus + "\" complete_cpuset=\"" + cpus + "\" nodeset=\"" + node +
                       "\" complete_nodeset=\"" + node + "\"";
    std::string pus;
    for (int p = 2 * i; p < 2 * i + 2; ++p) {
      std::string bit = p == 0 ? "0x00000001" : p == 1 ? "0x00000002" : p == 2 ? "0x00000004" : "0x00000008";
      pus += "<object type=\"PU\" os_index=\"" + std::to_string(p) + "\" cpuset=\"" + bit +
             "\" complete_cpuset=\"" + bit + "\" nodeset=\"" + node + "\" complete_nodeset=\"" + node +
             "\" gp_index=\"" + std::to_string(10 + p) + "\"/>";
    }
    return "<object type=\"Package\" os_index=\"" + std::to_string(i) + "\" " + sets + " gp_index=\"" +
           std::to_string(2 + i) + "\"><object type=\"NUMANode\" os_index=\"" + std::to_string(i) +
           "\" " + sets + " gp_index=\"" + std::to_string(4 + i) + "\" local_memory=\"1073741824\"/>" +
           pus + io + "</object>\n";
  }
};

Topology load(const XmlMachine& m, const char* name) {
  std::string path = m.write(name);
  Topology t = Topology::loadXml(path);
  std::remove(path.c_str());
  return t;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Sets an environment variable for one scope.
class EnvVar {
 public:
  EnvVar(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old, had_ = true;
    setenv(name, value, 1);
  }
  ~EnvVar() { had_ ? setenv(name_, old_.c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

}  // namespace

// Socket 0, one host bridge, two switches: the GPU under one, mlx5_1 under the
// other (PHB: they meet only at the host bridge). mlx5_0 is on socket 1 (SYS).
// The GPU must fall back to the nearer mlx5_1 although mlx5_0 comes first,
// say so, and stage through host memory at the default level PXB.
TEST(TopoSynthetic, GpuWithNoNicUnderItsSwitchFallsBackToTheNearest) {
  XmlMachine m;
  m.socket0 = m.hostBridge(m.pciSwitch("0000:01:00.0", {m.gpu("0000:03:00.0")}) +
                           m.pciSwitch("0000:05:00.0", {m.nic("0000:07:00.0", "mlx5_1")}));
  m.socket1 = m.hostBridge(m.pciSwitch("0000:81:00.0", {m.nic("0000:83:00.0", "mlx5_0")}));
  Topology t = load(m, "fallback.xml");
  ASSERT_EQ(t.gpus().size(), 1u);
  ASSERT_EQ(t.nics().size(), 2u);
  EXPECT_EQ(t.gpus()[0].numa, 0);
  EXPECT_EQ(t.gpuNicPath(0, t.findNic("mlx5_1")), PathClass::PHB);
  EXPECT_EQ(t.gpuNicPath(0, t.findNic("mlx5_0")), PathClass::SYS);
  NicAssignment a = t.assignNics(AssignOptions{})[0];
  EXPECT_EQ(a.nic, t.findNic("mlx5_1"));
  EXPECT_EQ(a.path, PathClass::PHB);
  EXPECT_FALSE(a.useGdr);
  EXPECT_TRUE(contains(a.reason, "no NIC under its PCIe switch")) << a.reason;
  EXPECT_TRUE(contains(a.reason, "staged through host memory near mlx5_1")) << a.reason;
  AssignOptions phb;
  phb.gdrLevel = PathClass::PHB;
  EXPECT_TRUE(t.assignNics(phb)[0].useGdr);
}

// One switch holding two GPUs and two NICs: all four pairs are PIX, and each
// GPU gets its own NIC rather than both taking mlx5_0.
TEST(TopoSynthetic, TwoNicsEquallyCloseAreSharedOut) {
  XmlMachine m;
  m.socket0 = m.hostBridge(m.pciSwitch(
      "0000:01:00.0", {m.gpu("0000:02:00.0"), m.gpu("0000:03:00.0"), m.nic("0000:04:00.0", "mlx5_0"),
                       m.nic("0000:05:00.0", "mlx5_1")}));
  Topology t = load(m, "tie.xml");
  std::vector<NicAssignment> as = t.assignNics(AssignOptions{});
  ASSERT_EQ(as.size(), 2u);
  EXPECT_EQ(as[0].nic, 0);
  EXPECT_EQ(as[1].nic, 1);
  for (const NicAssignment& a : as) {
    EXPECT_EQ(a.path, PathClass::PIX);
    EXPECT_TRUE(a.useGdr);
    EXPECT_TRUE(contains(a.reason, "tied with")) << a.reason;
  }
}

// A GPU with two NICs under its switch, and two GPUs with four: every NIC
// no GPU took as its own goes to a GPU it is closest to, evenly.
TEST(TopoSynthetic, NicsNoGpuTookGoToTheirClosestGpu) {
  XmlMachine m;
  m.socket0 = m.hostBridge(m.pciSwitch(
      "0000:01:00.0",
      {m.gpu("0000:02:00.0"), m.nic("0000:04:00.0", "mlx5_0"), m.nic("0000:05:00.0", "mlx5_1")}));
  std::vector<NicAssignment> one = load(m, "two_nics.xml").assignNics(AssignOptions{});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].nic, 0);
  EXPECT_EQ(one[0].more, std::vector<int>{1}) << one[0].reason;
  EXPECT_TRUE(contains(one[0].reason, "also mlx5_1")) << one[0].reason;

  XmlMachine m4;
  m4.socket0 = m4.hostBridge(m4.pciSwitch(
      "0000:01:00.0", {m4.gpu("0000:02:00.0"), m4.gpu("0000:03:00.0"),
                       m4.nic("0000:04:00.0", "mlx5_0"), m4.nic("0000:05:00.0", "mlx5_1"),
                       m4.nic("0000:06:00.0", "mlx5_2"), m4.nic("0000:07:00.0", "mlx5_3")}));
  std::vector<NicAssignment> two = load(m4, "four_nics.xml").assignNics(AssignOptions{});
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].nic, 0);
  EXPECT_EQ(two[1].nic, 1);
  EXPECT_EQ(two[0].more, std::vector<int>{2});
  EXPECT_EQ(two[1].more, std::vector<int>{3});
  // GDR_IB_HCA leaving one NIC: nothing more to give.
  AssignOptions only;
  only.hca = "mlx5_0";
  EXPECT_TRUE(load(m, "two_nics.xml").assignNics(only)[0].more.empty());
}

// A tie must not steal a constrained GPU's only close NIC. Switch U holds
// sub-switch S {GPU 06, mlx5_0}, GPU 03 directly, and sub-switch T {mlx5_1}:
// GPU 06 - mlx5_0 is PIX, everything else crosses U plus a sub-switch (PXB).
// GPU 03 (lower bus id) is tied between mlx5_0 and mlx5_1 at PXB; if it chose
// first in bus order it would take mlx5_0 and GPU 06 would have to share it.
TEST(TopoSynthetic, ConstrainedGpuChoosesFirst) {
  XmlMachine m;
  std::string s = m.pciSwitch("0000:05:00.0", {m.gpu("0000:06:00.0"), m.nic("0000:07:00.0", "mlx5_0")});
  std::string tsw = m.pciSwitch("0000:08:00.0", {m.nic("0000:09:00.0", "mlx5_1")});
  m.socket0 = m.hostBridge(m.pciSwitch("0000:01:00.0", {s, m.gpu("0000:03:00.0"), tsw}));
  Topology t = load(m, "constrained.xml");
  ASSERT_EQ(t.gpus().size(), 2u);
  EXPECT_EQ(t.gpus()[0].busId, "0000:03:00.0");
  EXPECT_EQ(t.gpuNicPath(0, 0), PathClass::PXB);
  EXPECT_EQ(t.gpuNicPath(0, 1), PathClass::PXB);
  EXPECT_EQ(t.gpuNicPath(1, 0), PathClass::PIX);
  EXPECT_EQ(t.gpuNicPath(1, 1), PathClass::PXB);
  std::vector<NicAssignment> as = t.assignNics(AssignOptions{});
  EXPECT_EQ(as[0].nic, 1) << as[0].reason;
  EXPECT_EQ(as[1].nic, 0) << as[1].reason;
  EXPECT_TRUE(as[0].useGdr);  // PXB is within the default level
}

// As in a VM or a board without switches: the GPU hangs straight off the host
// bridge and the NIC off a root port of the same host bridge. That is PHB.
// A second host bridge on socket 0 gives NODE; socket 1 gives SYS.
TEST(TopoSynthetic, GpuBehindAHostBridgeOnly) {
  XmlMachine m;
  m.socket0 = m.hostBridge(m.gpu("0000:00:05.0") +
                           m.bridge("0000:00:01.0", m.nic("0000:01:00.0", "mlx5_0"))) +
              m.hostBridge(m.bridge("0000:40:01.0", m.nic("0000:41:00.0", "mlx5_1")));
  m.socket1 = m.hostBridge(m.bridge("0000:80:01.0", m.nic("0000:81:00.0", "mlx5_2")));
  Topology t = load(m, "hostbridge.xml");
  ASSERT_EQ(t.gpus().size(), 1u);
  EXPECT_EQ(t.gpuNicPath(0, 0), PathClass::PHB);
  EXPECT_EQ(t.gpuNicPath(0, 1), PathClass::NODE);
  EXPECT_EQ(t.gpuNicPath(0, 2), PathClass::SYS);
  NicAssignment a = t.assignNics(AssignOptions{})[0];
  EXPECT_EQ(a.nic, 0);
  EXPECT_FALSE(a.useGdr);
  EXPECT_TRUE(contains(a.reason, "beyond GDR_NET_GDR_LEVEL=PXB")) << a.reason;
}

// NIC names against bus order: mlx5_0 sits with the GPU of the higher bus id.
TEST(TopoSynthetic, NicNamesNeedNotFollowGpuBusOrder) {
  XmlMachine m;
  m.socket0 = m.hostBridge(m.pciSwitch("0000:01:00.0", {m.gpu("0000:03:00.0"), m.nic("0000:04:00.0", "mlx5_1")}));
  m.socket1 = m.hostBridge(m.pciSwitch("0000:81:00.0", {m.gpu("0000:83:00.0"), m.nic("0000:84:00.0", "mlx5_0")}));
  Topology t = load(m, "names.xml");
  std::vector<NicAssignment> as = t.assignNics(AssignOptions{});
  EXPECT_EQ(t.nics()[as[0].nic].name, "mlx5_1");
  EXPECT_EQ(t.nics()[as[1].nic].name, "mlx5_0");
  EXPECT_EQ(t.nics()[0].numa, 1);
  EXPECT_EQ(t.nics()[1].numa, 0);
}

// Two GPUs with 18 NVLinks between them (as on an H200 pair), recorded the way
// hwloc's NVML backend does: a bandwidth matrix of 18 x 25000 MB/s.
TEST(TopoSynthetic, NvlinkMatrixGivesNvl) {
  XmlMachine m;
  std::string g0 = m.gpu("0000:18:00.0");
  std::string gp0 = m.lastGpuGp();
  std::string g1 = m.gpu("0000:2a:00.0");
  std::string gp1 = m.lastGpuGp();
  m.socket0 = m.hostBridge(m.bridge("0000:17:01.0", g0)) + m.hostBridge(m.bridge("0000:29:01.0", g1));
  std::string idx = "PCIDev:" + gp0 + " PCIDev:" + gp1, vals = "0 450000 450000 0";
  m.distances = "<distances2hetero nbobjs=\"2\" kind=\"25\" name=\"NVLinkBandwidth\"><indexes length=\"" +
                std::to_string(idx.size() + 1) + "\">" + idx + " </indexes><u64values length=\"" +
                std::to_string(vals.size() + 1) + "\">" + vals + " </u64values></distances2hetero>\n";
  Topology t = load(m, "nvlink.xml");
  ASSERT_EQ(t.gpus().size(), 2u);
  EXPECT_EQ(t.nvlinkCount(0, 1), 18);
  EXPECT_EQ(t.gpus()[0].nvlinks, 18);
  EXPECT_EQ(t.gpuGpuPath(0, 1), PathClass::NVL);
  // Without the matrix the same pair is NODE (two host bridges of socket 0).
  m.distances.clear();
  Topology plain = load(m, "no-nvlink.xml");
  EXPECT_EQ(plain.gpuGpuPath(0, 1), PathClass::NODE);
  EXPECT_TRUE(plain.nics().empty());
}

TEST(TopoSynthetic, IbHcaForcesRestrictsAndExcludes) {
  XmlMachine m;
  m.socket0 = m.hostBridge(m.pciSwitch("0000:01:00.0", {m.gpu("0000:03:00.0"), m.nic("0000:04:00.0", "mlx5_0")}));
  m.socket1 = m.hostBridge(m.pciSwitch("0000:81:00.0", {m.gpu("0000:83:00.0"), m.nic("0000:84:00.0", "mlx5_1")}));
  Topology t = load(m, "hca.xml");
  {
    EnvVar hca("GDR_IB_HCA", "mlx5_1:1");
    std::vector<NicAssignment> as = t.assignNics();
    EXPECT_EQ(as[0].nic, 1);
    EXPECT_EQ(as[0].path, PathClass::SYS);
    EXPECT_FALSE(as[0].useGdr);
    EXPECT_TRUE(contains(as[0].reason, "GDR_IB_HCA=mlx5_1:1 selects it")) << as[0].reason;
    EXPECT_EQ(as[1].nic, 1);
    EXPECT_TRUE(as[1].useGdr);
  }
  {
    EnvVar hca("GDR_IB_HCA", "^mlx5_1");
    std::vector<NicAssignment> as = t.assignNics();
    EXPECT_EQ(as[0].nic, 0);
    EXPECT_EQ(as[1].nic, 0);
  }
  {
    EnvVar hca("GDR_IB_HCA", "mlx5_9");
    try {
      t.assignNics();
      FAIL() << "no error";
    } catch (const gdr::InvalidArgument& e) {
      EXPECT_TRUE(contains(e.what(), "mlx5_9")) << e.what();
      EXPECT_TRUE(contains(e.what(), "mlx5_0, mlx5_1")) << e.what();
    }
  }
  {
    EnvVar hca("GDR_IB_HCA", "^mlx5_0,mlx5_1");
    EXPECT_THROW(t.assignNics(), gdr::InvalidArgument);
  }
}

TEST(TopoSynthetic, GdrLevelFromEnvironment) {
  XmlMachine m;
  m.socket0 = m.hostBridge(m.pciSwitch("0000:01:00.0", {m.gpu("0000:03:00.0")}) +
                           m.pciSwitch("0000:05:00.0", {m.nic("0000:07:00.0", "mlx5_0")}));
  Topology t = load(m, "level.xml");
  EXPECT_FALSE(t.assignNics()[0].useGdr);  // PHB, default PXB
  {
    EnvVar level("GDR_NET_GDR_LEVEL", "phb");
    EXPECT_TRUE(t.assignNics()[0].useGdr);
  }
  {
    EnvVar level("GDR_NET_GDR_LEVEL", "SYS");
    EXPECT_TRUE(t.assignNics()[0].useGdr);
  }
  {
    EnvVar level("GDR_NET_GDR_LEVEL", "PIX");
    EXPECT_FALSE(t.assignNics()[0].useGdr);
  }
  {
    EnvVar level("GDR_NET_GDR_LEVEL", "fast");
    try {
      t.assignNics();
      FAIL() << "no error";
    } catch (const gdr::InvalidArgument& e) {
      EXPECT_TRUE(contains(e.what(), "GDR_NET_GDR_LEVEL=fast")) << e.what();
    }
  }
}

TEST(TopoSynthetic, PathNamesRoundTrip) {
  for (int i = 0; i <= 5; ++i) {
    PathClass p = static_cast<PathClass>(i);
    EXPECT_EQ(gdr::topo::parsePathClass(gdr::topo::pathName(p), "X"), p);
  }
  EXPECT_STREQ(gdr::topo::pathName(PathClass::NODE), "NODE");
  EXPECT_THROW(gdr::topo::parsePathClass("", "X"), gdr::InvalidArgument);
}

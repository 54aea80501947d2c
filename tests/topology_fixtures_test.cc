// The topology module on hwloc exports of real servers (tests/data/topologies,
// provenance in SOURCES.md there). Every expected answer below was worked out
// by reading the fixture's PCI tree (`lstopo-no-graphics -i FILE`), not copied
// from what the code printed; the reasoning is next to each test.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "core/error.h"
#include "topology/topology.h"

using gdr::topo::AssignOptions;
using gdr::topo::NicAssignment;
using gdr::topo::PathClass;
using gdr::topo::Topology;

namespace {

std::string fixture(const char* name) {
  return std::string(GDR_TEST_DATA_DIR) + "/topologies/" + name;
}

AssignOptions defaults() { return AssignOptions{}; }  // PXB, no GDR_IB_HCA

std::vector<std::string> busIds(const Topology& t) {
  std::vector<std::string> out;
  for (const auto& g : t.gpus()) out.push_back(g.busId);
  return out;
}

}  // namespace

// JUWELS Booster node (hwloc 2.2, XML v2). Four NUMA quadrants carry one PCIe
// tree each of the form
//   host bridge -> AMD root port (1022:1483) -> Broadcom PEX switch upstream
//   port (1000:c010) -> downstream ports -> {ConnectX-6, A100, SAS HBA}.
// Quadrant:  NUMA 3         NUMA 1         NUMA 7         NUMA 5
//   GPU      03:00.0        44:00.0        84:00.0        c4:00.0
//   NIC      04:00.0 mlx5_0 43:00.0 mlx5_1 83:00.0 mlx5_2 c3:00.0 mlx5_3
// So each GPU shares one switch with exactly one NIC (PIX) and is SYS from
// everything else (other quadrants are other NUMA nodes). The 62:00.0 VGA is
// an ASPEED BMC chip and the e1:00.x functions are plain Ethernet: neither
// counts. hwloc lists the quadrants in the order NUMA 1, 3, 5, 7, i.e. mlx5_1
// before mlx5_0: an assignment that went by position in the tree, or by NUMA
// order, would give GPU 0000:03:00.0 the wrong NIC.
TEST(TopoFixtureJuwelsBooster, FindsFourA100AndFourHdrNics) {
  Topology t = Topology::loadXml(fixture("topo.jwb0004.xml"));
  EXPECT_EQ(busIds(t), (std::vector<std::string>{"0000:03:00.0", "0000:44:00.0", "0000:84:00.0",
                                                 "0000:c4:00.0"}));
  ASSERT_EQ(t.nics().size(), 4u);
  const char* names[] = {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"};
  const char* nicBus[] = {"0000:04:00.0", "0000:43:00.0", "0000:83:00.0", "0000:c3:00.0"};
  const int nicNuma[] = {3, 1, 7, 5};
  for (int n = 0; n < 4; ++n) {
    EXPECT_EQ(t.nics()[n].name, names[n]);
    EXPECT_EQ(t.nics()[n].busId, nicBus[n]);
    EXPECT_EQ(t.nics()[n].numa, nicNuma[n]);
    EXPECT_EQ(t.nics()[n].ports, std::vector<int>{1});
    EXPECT_EQ(t.nics()[n].netdevs, std::vector<std::string>{"ib" + std::to_string(n)});
  }
  const int gpuNuma[] = {3, 1, 7, 5};
  for (int g = 0; g < 4; ++g) {
    EXPECT_EQ(t.gpus()[g].numa, gpuNuma[g]);
    EXPECT_EQ(t.gpus()[g].model, "[10de:20b0]");  // no NVML info in this export
    EXPECT_EQ(t.gpus()[g].nvlinks, 0);
  }
}

TEST(TopoFixtureJuwelsBooster, EachGpuTakesTheNicUnderItsSwitch) {
  Topology t = Topology::loadXml(fixture("topo.jwb0004.xml"));
  for (int g = 0; g < 4; ++g)
    for (int n = 0; n < 4; ++n)
      EXPECT_EQ(t.gpuNicPath(g, n), g == n ? PathClass::PIX : PathClass::SYS) << g << "," << n;
  // Four quadrants, four NUMA nodes: every GPU pair crosses the fabric. (The
  // A100s are NVLinked, but this export carries no NVLink information.)
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b)
      EXPECT_EQ(t.gpuGpuPath(a, b), a == b ? PathClass::NVL : PathClass::SYS);
  std::vector<NicAssignment> as = t.assignNics(defaults());
  ASSERT_EQ(as.size(), 4u);
  for (int g = 0; g < 4; ++g) {
    EXPECT_EQ(as[g].nic, g) << "GPU " << t.gpus()[g].busId << ": " << as[g].reason;
    EXPECT_EQ(as[g].path, PathClass::PIX);
    EXPECT_TRUE(as[g].useGdr);  // PIX is within the default level, PXB
    EXPECT_NE(as[g].reason.find("closest"), std::string::npos) << as[g].reason;
    EXPECT_EQ(as[g].reason.find("shared"), std::string::npos) << as[g].reason;
  }
}

TEST(TopoFixtureJuwelsBooster, GdrLevelBelowPixTurnsGdrOffAndSaysWhy) {
  Topology t = Topology::loadXml(fixture("topo.jwb0004.xml"));
  AssignOptions o;
  o.gdrLevel = PathClass::NVL;
  for (const NicAssignment& a : t.assignNics(o)) {
    EXPECT_FALSE(a.useGdr);
    EXPECT_NE(a.reason.find("beyond GDR_NET_GDR_LEVEL=NVL"), std::string::npos) << a.reason;
    EXPECT_NE(a.reason.find("staged through host memory"), std::string::npos) << a.reason;
  }
}

// JUWELS Cluster GPU node (hwloc 1.11, XML v1: the NUMA node is the parent of
// the package there). Per socket one tree
//   host bridge -> Intel root port (8086:2030) -> PLX 8764 upstream port ->
//   three downstream ports -> {V100, V100, ConnectX-4}
// socket 0: GPUs 5d:00.0 and 5e:00.0, mlx5_0 at 5f:00.0
// socket 1: GPUs 88:00.0 and 89:00.0, mlx5_1 at 8a:00.0
// so both GPUs of a socket are PIX from each other and from their socket's NIC,
// and share it; across sockets everything is SYS. The 37:00.x Ethernet ports
// and the Matrox VGA (102b) do not count.
TEST(TopoFixtureJuwelsCluster, TwoGpusShareEachNic) {
  Topology t = Topology::loadXml(fixture("topo.jwc09n003.xml"));
  EXPECT_EQ(busIds(t), (std::vector<std::string>{"0000:5d:00.0", "0000:5e:00.0", "0000:88:00.0",
                                                 "0000:89:00.0"}));
  ASSERT_EQ(t.nics().size(), 2u);
  EXPECT_EQ(t.nics()[0].name, "mlx5_0");
  EXPECT_EQ(t.nics()[0].busId, "0000:5f:00.0");
  EXPECT_EQ(t.nics()[1].name, "mlx5_1");
  EXPECT_EQ(t.nics()[1].busId, "0000:8a:00.0");
  const int numa[] = {0, 0, 1, 1};
  for (int g = 0; g < 4; ++g) EXPECT_EQ(t.gpus()[g].numa, numa[g]);

  const int expectNic[] = {0, 0, 1, 1};
  for (int g = 0; g < 4; ++g)
    for (int n = 0; n < 2; ++n)
      EXPECT_EQ(t.gpuNicPath(g, n), expectNic[g] == n ? PathClass::PIX : PathClass::SYS);
  EXPECT_EQ(t.gpuGpuPath(0, 1), PathClass::PIX);
  EXPECT_EQ(t.gpuGpuPath(2, 3), PathClass::PIX);
  EXPECT_EQ(t.gpuGpuPath(1, 2), PathClass::SYS);
  EXPECT_EQ(t.nvlinkCount(0, 1), 0);  // NVLinked V100-SXM2, but a v1 export has no NVLink data

  std::vector<NicAssignment> as = t.assignNics(defaults());
  for (int g = 0; g < 4; ++g) {
    EXPECT_EQ(as[g].nic, expectNic[g]) << as[g].reason;
    EXPECT_EQ(as[g].path, PathClass::PIX);
    EXPECT_TRUE(as[g].useGdr);
  }
  EXPECT_NE(as[0].reason.find("shared with GPU 0000:5e:00.0"), std::string::npos) << as[0].reason;
  EXPECT_NE(as[3].reason.find("shared with GPU 0000:88:00.0"), std::string::npos) << as[3].reason;
}

// NVIDIA DGX-2H (hwloc 2.x with the NVML backend). 16 V100s, 8 per socket;
// each sits two PLX switches below its host bridge:
//   host bridge -> root port -> PLX (2c:00.0) -> PLX (32:00.0) -> GPU 34:00.0
//                                             \-> PLX (32:00.0) -> GPU 36:00.0
//                                             \-> PLX (37:00.0) -> GPU 39, 3b
// Each socket has two such host bridges of four GPUs. No NIC is in the file.
// The NVLinkBandwidth matrix gives every GPU 25000 MB/s (one NVLink 2) to each
// of the six NVSwitches on its baseboard: six links per GPU, NV6 to every
// other GPU through the switch fabric (the two baseboards are joined by
// switch-to-switch trunks, which NVML and so the matrix never show).
TEST(TopoFixtureDgx2, SixteenGpusAllNv6AndNoNic) {
  Topology t = Topology::loadXml(fixture("nvidiaDGX2.xml"));
  ASSERT_EQ(t.gpus().size(), 16u);
  EXPECT_TRUE(t.nics().empty());
  EXPECT_EQ(t.gpus()[0].busId, "0000:34:00.0");
  EXPECT_EQ(t.gpus()[15].busId, "0000:e7:00.0");
  EXPECT_EQ(t.gpus()[0].model, "Tesla V100-SXM3-32GB-H");
  for (int g = 0; g < 16; ++g) {
    EXPECT_EQ(t.gpus()[g].numa, g < 8 ? 0 : 1);
    EXPECT_EQ(t.gpus()[g].nvlinks, 6);
    for (int h = 0; h < 16; ++h) {
      EXPECT_EQ(t.gpuGpuPath(g, h), PathClass::NVL);
      if (g != h) {
        EXPECT_EQ(t.nvlinkCount(g, h), 6) << g << "," << h;
      }
    }
  }
  for (const NicAssignment& a : t.assignNics(defaults())) {
    EXPECT_EQ(a.nic, -1);
    EXPECT_FALSE(a.useGdr);
    EXPECT_NE(a.reason.find("no RDMA NIC"), std::string::npos) << a.reason;
  }
  AssignOptions forced;
  forced.hca = "mlx5_0";
  EXPECT_THROW(t.assignNics(forced), gdr::InvalidArgument);
}

// The same DGX-2 with its NVLink matrix cut out, to check the PCIe classes
// (see the tree above): 34 and 36 share PLX 32:00.0 -> PIX; 34 and 39 meet
// only at PLX 2c:00.0, crossing three switches -> PXB; 34 and 57 sit on two
// host bridges of socket 0 -> NODE; 34 and b7 are on different sockets -> SYS.
TEST(TopoFixtureDgx2, PcieClassesWithoutNvlink) {
  std::ifstream in(fixture("nvidiaDGX2.xml"));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string xml = ss.str();
  size_t a = xml.find("<distances2hetero"), b = xml.find("</distances2hetero>");
  ASSERT_NE(a, std::string::npos);
  xml.erase(a, b + std::string("</distances2hetero>").size() - a);
  std::string path = testing::TempDir() + "dgx2-no-nvlink.xml";
  std::ofstream(path) << xml;
  Topology t = Topology::loadXml(path);
  std::remove(path.c_str());
  int g34 = t.findGpu("0000:34:00.0"), g36 = t.findGpu("0000:36:00.0"),
      g39 = t.findGpu("0000:39:00.0"), g57 = t.findGpu("0000:57:00.0"),
      gb7 = t.findGpu("0000:b7:00.0");
  EXPECT_EQ(t.nvlinkCount(g34, g36), 0);
  EXPECT_EQ(t.gpuGpuPath(g34, g36), PathClass::PIX);
  EXPECT_EQ(t.gpuGpuPath(g34, g39), PathClass::PXB);
  EXPECT_EQ(t.gpuGpuPath(g34, g57), PathClass::NODE);
  EXPECT_EQ(t.gpuGpuPath(g34, gb7), PathClass::SYS);
}

TEST(TopoFixtureDgx2, FindsGpusByAnyBusIdSpelling) {
  Topology t = Topology::loadXml(fixture("nvidiaDGX2.xml"));
  EXPECT_EQ(t.findGpu("0000:34:00.0"), 0);
  EXPECT_EQ(t.findGpu("0000:E7:00.0"), 15);      // cudaDeviceGetPCIBusId
  EXPECT_EQ(t.findGpu("00000000:e7:00.0"), 15);  // NVML
  EXPECT_EQ(t.findGpu("e7:00.0"), 15);           // lspci
  EXPECT_EQ(t.findGpu("0000:35:00.0"), -1);
  EXPECT_EQ(t.findGpu("0000:34:00.1"), -1);
  EXPECT_EQ(t.findGpu("not a bus id"), -1);
  EXPECT_EQ(t.findGpu(""), -1);
}

TEST(TopoFixture, DumpThenReloadKeepsTheAnswers) {
  for (const char* name : {"topo.jwb0004.xml", "topo.jwc09n003.xml", "nvidiaDGX2.xml"}) {
    Topology a = Topology::loadXml(fixture(name));
    std::string path = testing::TempDir() + "reloaded-" + name;
    a.dumpXml(path);
    Topology b = Topology::loadXml(path);
    std::remove(path.c_str());
    ASSERT_EQ(busIds(a), busIds(b)) << name;
    ASSERT_EQ(a.nics().size(), b.nics().size()) << name;
    const int ngpu = static_cast<int>(a.gpus().size()), nnic = static_cast<int>(a.nics().size());
    for (int g = 0; g < ngpu; ++g) {
      for (int h = 0; h < ngpu; ++h) EXPECT_EQ(a.gpuGpuPath(g, h), b.gpuGpuPath(g, h)) << name;
      for (int n = 0; n < nnic; ++n) EXPECT_EQ(a.gpuNicPath(g, n), b.gpuNicPath(g, n)) << name;
    }
  }
}

TEST(TopoFixture, UnreadableAndMalformedFilesGiveClearErrors) {
  try {
    Topology::loadXml("/nonexistent/topo.xml");
    FAIL() << "no error";
  } catch (const gdr::SystemError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/topo.xml"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("No such file"), std::string::npos) << e.what();
  }
  std::string path = testing::TempDir() + "garbage.xml";
  std::ofstream(path) << "<topology version=\"2.0\"><object type=\"Machine\"";
  try {
    Topology::loadXml(path);
    FAIL() << "no error";
  } catch (const gdr::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("garbage.xml"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
  Topology t = Topology::loadXml(fixture("topo.jwb0004.xml"));
  EXPECT_THROW(t.dumpXml("/nonexistent/dir/out.xml"), gdr::SystemError);
  EXPECT_THROW(t.gpuNicPath(4, 0), gdr::InvalidArgument);
  EXPECT_THROW(t.gpuGpuPath(0, -1), gdr::InvalidArgument);
}

// The lent H200 VM, dumped by gdr-topo there: both GPUs sit directly on the
// VM's host bridge (00:06.0, 00:07.0; no bridge above them), so by PCIe they
// are PHB. NVML counted 18 NVLinks between them at run time, but hwloc there
// had no NVML plugin, so the XML has no NVLink matrix and the file alone says PHB.
TEST(TopoFixtureH200Vm, TwoGpusOnTheHostBridgeAndNoNic) {
  Topology t = Topology::loadXml(fixture("h200-vm.xml"));
  EXPECT_EQ(busIds(t), (std::vector<std::string>{"0000:00:06.0", "0000:00:07.0"}));
  EXPECT_TRUE(t.nics().empty());
  EXPECT_EQ(t.gpus()[0].model, "[10de:2335]");
  EXPECT_EQ(t.gpuGpuPath(0, 1), PathClass::PHB);
  EXPECT_EQ(t.nvlinkCount(0, 1), 0);
  EXPECT_EQ(t.assignNics(defaults())[1].nic, -1);
}

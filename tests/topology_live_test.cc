// The topology module on the machine the tests run on, and the gdr-topo tool.
// The live counts are checked against sysfs read here independently of hwloc,
// so the test holds on a bare CI box and on a GPU machine alike.
#include <gtest/gtest.h>
#include <dirent.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "topology/topology.h"

using gdr::topo::Topology;

namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

// NVIDIA display/3D controllers (class 0300xx / 0302xx) in sysfs.
size_t sysfsNvidiaGpus() {
  size_t n = 0;
  if (DIR* d = opendir("/sys/bus/pci/devices")) {
    while (dirent* e = readdir(d)) {
      std::string dev = std::string("/sys/bus/pci/devices/") + e->d_name;
      std::string cls = readFile(dev + "/class");
      if (readFile(dev + "/vendor") == "0x10de" &&
          (cls.rfind("0x0300", 0) == 0 || cls.rfind("0x0302", 0) == 0))
        ++n;
    }
    closedir(d);
  }
  return n;
}

// RDMA devices backed by a PCI function (software ones such as rxe have none).
size_t sysfsPciRdmaDevices() {
  size_t n = 0;
  if (DIR* d = opendir("/sys/class/infiniband")) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::string link = std::string("/sys/class/infiniband/") + e->d_name + "/device";
      char buf[512];
      ssize_t len = readlink(link.c_str(), buf, sizeof(buf) - 1);
      if (len > 0 && std::string(buf, len).find("/pci") != std::string::npos) ++n;
    }
    closedir(d);
  }
  return n;
}

struct ToolRun {
  int rc;
  std::string out;
};

ToolRun gdrTopo(const std::string& args) {
  std::string cmd = std::string(GDR_BIN_DIR) + "/gdr-topo " + args + " 2>&1";
  ToolRun r{-1, ""};
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string fixture(const char* name) {
  return std::string(GDR_TEST_DATA_DIR) + "/topologies/" + name;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST(TopoLive, LoadsAndCountsWhatSysfsShows) {
  Topology t = Topology::live();
  EXPECT_EQ(t.source(), "this machine");
  EXPECT_EQ(t.gpus().size(), sysfsNvidiaGpus());
  EXPECT_EQ(t.nics().size(), sysfsPciRdmaDevices());
  auto as = t.assignNics(gdr::topo::AssignOptions{});
  ASSERT_EQ(as.size(), t.gpus().size());
  for (const auto& a : as) {
    if (t.nics().empty()) {
      EXPECT_EQ(a.nic, -1);
      EXPECT_FALSE(a.useGdr);
    }
    EXPECT_FALSE(a.reason.empty());
  }
  for (size_t g = 0; g < t.gpus().size(); ++g) EXPECT_TRUE(t.bindThreadNearGpu(static_cast<int>(g)));
}

TEST(TopoLive, DumpReloadsWithTheSameDevices) {
  Topology t = Topology::live();
  std::string path = testing::TempDir() + "live-dump.xml";
  t.dumpXml(path);
  Topology back = Topology::loadXml(path);
  std::remove(path.c_str());
  EXPECT_EQ(back.gpus().size(), t.gpus().size());
  EXPECT_EQ(back.nics().size(), t.nics().size());
  for (size_t g = 0; g < t.gpus().size(); ++g) EXPECT_EQ(back.gpus()[g].busId, t.gpus()[g].busId);
  // A saved topology is not this machine: no binding from it.
  if (!back.gpus().empty()) {
    EXPECT_FALSE(back.bindThreadNearGpu(0));
  }
}

TEST(TopoLive, FromEnvHonoursGdrTopoFile) {
  setenv("GDR_TOPO_FILE", fixture("topo.jwb0004.xml").c_str(), 1);
  Topology t = Topology::fromEnv();
  unsetenv("GDR_TOPO_FILE");
  EXPECT_EQ(t.source(), fixture("topo.jwb0004.xml"));
  EXPECT_EQ(t.gpus().size(), 4u);
  Topology live = Topology::fromEnv();
  EXPECT_EQ(live.source(), "this machine");
}

TEST(TopoTool, PrintsEachFixtureWithItsMapping) {
  ToolRun r = gdrTopo("--xml " + fixture("topo.jwc09n003.xml"));
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "GPU0 0000:5d:00.0 [10de:1db1], NUMA 0: NIC mlx5_0, path PIX, GPUDirect RDMA yes")) << r.out;
  EXPECT_TRUE(contains(r.out, "GPU3 0000:89:00.0 [10de:1db1], NUMA 1: NIC mlx5_1, path PIX, GPUDirect RDMA yes")) << r.out;
  EXPECT_TRUE(contains(r.out, "shared with GPU 0000:5e:00.0")) << r.out;

  r = gdrTopo("--xml " + fixture("nvidiaDGX2.xml"));
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "No RDMA NIC found")) << r.out;
  EXPECT_TRUE(contains(r.out, "GPU0    X     NV6")) << r.out;

  r = gdrTopo("--json --xml " + fixture("topo.jwb0004.xml"));
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "\"busId\": \"0000:44:00.0\"")) << r.out;
  EXPECT_TRUE(contains(r.out, "\"nic\": \"mlx5_1\", \"path\": \"PIX\", \"gdr\": true")) << r.out;
  EXPECT_TRUE(contains(r.out, "\"messages\": []")) << r.out;
}

TEST(TopoTool, LiveMachineSaysPlainlyWhatIsMissing) {
  ToolRun r = gdrTopo("");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(contains(r.out, "No NVIDIA GPU found"), sysfsNvidiaGpus() == 0) << r.out;
  EXPECT_EQ(contains(r.out, "No RDMA NIC found"), sysfsPciRdmaDevices() == 0) << r.out;
  std::string path = testing::TempDir() + "gdr-topo-dump.xml";
  r = gdrTopo("--json --dump " + path);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "\"source\": \"this machine\"")) << r.out;
  Topology back = Topology::loadXml(path);
  std::remove(path.c_str());
  EXPECT_EQ(back.gpus().size(), sysfsNvidiaGpus());
}

TEST(TopoTool, HelpAndBadArguments) {
  ToolRun r = gdrTopo("--help");
  EXPECT_EQ(r.rc, 0);
  EXPECT_TRUE(contains(r.out, "usage: gdr-topo")) << r.out;
  r = gdrTopo("--frobnicate");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.out, "unknown argument '--frobnicate'")) << r.out;
  r = gdrTopo("--xml");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.out, "--xml needs a FILE")) << r.out;
  r = gdrTopo("--xml /nonexistent.xml");
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.out, "cannot read hwloc XML topology /nonexistent.xml")) << r.out;
  r = gdrTopo("--xml " + fixture("topo.jwb0004.xml") + " --json");
  EXPECT_EQ(r.rc, 0);
  setenv("GDR_IB_HCA", "mlx5_42", 1);
  r = gdrTopo("--xml " + fixture("topo.jwb0004.xml"));
  unsetenv("GDR_IB_HCA");
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.out, "GDR_IB_HCA=mlx5_42 names mlx5_42")) << r.out;
}

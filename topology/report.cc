#include "topology/report.h"

#include <algorithm>

#include "core/error.h"

namespace gdr::topo {

namespace {

constexpr const char* kLegend =
    "Legend:\n"
    "  X    = self\n"
    "  NV#  = NVLink, # links (directly or through NVSwitches)\n"
    "  PIX  = at most one PCIe switch\n"
    "  PXB  = several PCIe switches, no host bridge\n"
    "  PHB  = through a PCIe host bridge (the CPU)\n"
    "  NODE = between PCIe host bridges of one NUMA node\n"
    "  SYS  = across the interconnect between NUMA nodes\n";

std::string numaText(int numa) { return numa < 0 ? "?" : std::to_string(numa); }

std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += std::string("\\") + c;
    else if (static_cast<unsigned char>(c) < 0x20) out += strprintf("\\u%04x", c);
    else out += c;
  }
  return out + "\"";
}

template <class T, class F>
std::string jsonArray(const std::vector<T>& v, F item) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + item(v[i]);
  return out + "]";
}

std::string noNicMessage() {
  return "No RDMA NIC found: GPUDirect RDMA is not possible; traffic between hosts uses TCP.";
}

std::string noGpuMessage(const Topology& t) {
  return "No NVIDIA GPU found in " + t.source() + ".";
}

}  // namespace

std::string gpuPairCell(const Topology& t, int a, int b) {
  if (a == b) return "X";
  int links = t.nvlinkCount(a, b);
  if (links > 0) return "NV" + std::to_string(links);
  return pathName(t.gpuGpuPath(a, b));
}

std::string formatText(const Topology& t, const std::vector<NicAssignment>& assign) {
  const auto& gpus = t.gpus();
  const auto& nics = t.nics();
  std::string out = strprintf("Topology of %s: %zu GPU(s), %zu RDMA NIC(s)\n", t.source().c_str(),
                              gpus.size(), nics.size());
  if (gpus.empty()) {
    out += noGpuMessage(t) + "\n";
    if (nics.empty()) out += noNicMessage() + "\n";
    for (const Nic& n : nics)
      out += strprintf("  %s  %s  NUMA %s\n", n.name.c_str(), n.busId.c_str(), numaText(n.numa).c_str());
    return out;
  }

  size_t w = 6;
  for (const Nic& n : nics) w = std::max(w, n.name.size() + 2);
  out += "\n" + std::string(8, ' ');
  for (size_t g = 0; g < gpus.size(); ++g) out += strprintf("%-*s", (int)w, strprintf("GPU%zu", g).c_str());
  for (const Nic& n : nics) out += strprintf("%-*s", (int)w, n.name.c_str());
  out += "NUMA  CPUs\n";
  for (size_t g = 0; g < gpus.size(); ++g) {
    out += strprintf("%-8s", strprintf("GPU%zu", g).c_str());
    for (size_t h = 0; h < gpus.size(); ++h)
      out += strprintf("%-*s", (int)w, gpuPairCell(t, (int)g, (int)h).c_str());
    for (size_t n = 0; n < nics.size(); ++n)
      out += strprintf("%-*s", (int)w, pathName(t.gpuNicPath((int)g, (int)n)));
    out += strprintf("%-6s%s\n", numaText(gpus[g].numa).c_str(), gpus[g].cpuset.c_str());
  }
  out += std::string("\n") + kLegend + "\n";

  out += "GPUs:\n";
  for (size_t g = 0; g < gpus.size(); ++g) {
    const Gpu& gpu = gpus[g];
    const NicAssignment& a = assign[g];
    out += strprintf("  GPU%zu %s %s, NUMA %s: ", g, gpu.busId.c_str(), gpu.model.c_str(),
                     numaText(gpu.numa).c_str());
    if (a.nic < 0) {
      out += "no NIC\n";  // why is said once, below
      continue;
    }
    out += strprintf("NIC %s, path %s, GPUDirect RDMA %s\n", nics[a.nic].name.c_str(),
                     pathName(a.path), a.useGdr ? "yes" : "no");
    out += "       " + a.reason + "\n";
  }
  if (nics.empty()) {
    out += noNicMessage() + "\n";
  } else {
    out += "NICs:\n";
    for (const Nic& n : nics) {
      out += strprintf("  %s %s, NUMA %s", n.name.c_str(), n.busId.c_str(), numaText(n.numa).c_str());
      if (!n.ports.empty())
        out += ", ports " + jsonArray(n.ports, [](int p) { return std::to_string(p); });
      if (!n.netdevs.empty())
        out += ", netdev " + jsonArray(n.netdevs, [](const std::string& s) { return s; });
      out += "\n";
    }
  }
  return out;
}

std::string formatJson(const Topology& t, const std::vector<NicAssignment>& assign) {
  const auto& gpus = t.gpus();
  const auto& nics = t.nics();
  std::vector<std::string> messages;
  if (gpus.empty()) messages.push_back(noGpuMessage(t));
  if (nics.empty()) messages.push_back(noNicMessage());

  std::string out = "{\n  \"source\": " + jsonString(t.source()) + ",\n  \"gpus\": [";
  for (size_t g = 0; g < gpus.size(); ++g) {
    const Gpu& gpu = gpus[g];
    const NicAssignment& a = assign[g];
    out += strprintf(
        "%s\n    {\"index\": %zu, \"busId\": %s, \"model\": %s, \"numa\": %d, \"cpuset\": %s, "
        "\"nvlinks\": %d, \"nic\": %s, \"path\": %s, \"gdr\": %s, \"reason\": %s}",
        g ? "," : "", g, jsonString(gpu.busId).c_str(), jsonString(gpu.model).c_str(), gpu.numa,
        jsonString(gpu.cpuset).c_str(), gpu.nvlinks,
        a.nic < 0 ? "null" : jsonString(nics[a.nic].name).c_str(),
        a.nic < 0 ? "null" : jsonString(pathName(a.path)).c_str(), a.useGdr ? "true" : "false",
        jsonString(a.reason).c_str());
  }
  out += "\n  ],\n  \"nics\": [";
  for (size_t n = 0; n < nics.size(); ++n) {
    const Nic& nic = nics[n];
    out += strprintf("%s\n    {\"name\": %s, \"busId\": %s, \"numa\": %d, \"ports\": %s, \"netdevs\": %s}",
                     n ? "," : "", jsonString(nic.name).c_str(), jsonString(nic.busId).c_str(),
                     nic.numa, jsonArray(nic.ports, [](int p) { return std::to_string(p); }).c_str(),
                     jsonArray(nic.netdevs, jsonString).c_str());
  }
  out += "\n  ],\n  \"gpuGpu\": [";
  for (size_t g = 0; g < gpus.size(); ++g) {
    std::vector<std::string> row;
    for (size_t h = 0; h < gpus.size(); ++h) row.push_back(gpuPairCell(t, (int)g, (int)h));
    out += (g ? ", " : "") + jsonArray(row, jsonString);
  }
  out += "],\n  \"gpuNic\": [";
  for (size_t g = 0; g < gpus.size(); ++g) {
    std::vector<std::string> row;
    for (size_t n = 0; n < nics.size(); ++n) row.push_back(pathName(t.gpuNicPath((int)g, (int)n)));
    out += (g ? ", " : "") + jsonArray(row, jsonString);
  }
  out += "],\n  \"messages\": " + jsonArray(messages, jsonString) + "\n}\n";
  return out;
}

}  // namespace gdr::topo

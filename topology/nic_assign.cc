#include "topology/nic_assign.h"

#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "core/log.h"
#include "topology/pci_path.h"

namespace gdr::topo {

namespace {

std::string joinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

std::vector<std::string> splitList(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    std::string tok = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (!tok.empty()) out.push_back(tok);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

}  // namespace

std::vector<bool> selectHcas(const std::string& spec, const std::vector<std::string>& nicNames) {
  if (spec.empty()) return std::vector<bool>(nicNames.size(), true);
  bool exclude = spec[0] == '^';
  std::vector<bool> named(nicNames.size(), false);
  for (std::string tok : splitList(exclude ? spec.substr(1) : spec)) {
    std::string name = tok.substr(0, tok.find(':'));  // a port, if given, is the transport's
    auto it = std::find(nicNames.begin(), nicNames.end(), name);
    if (it == nicNames.end())
      throw InvalidArgument(strprintf(
          "GDR_IB_HCA=%s names %s, which is not an RDMA device of this host (it has: %s)",
          spec.c_str(), name.c_str(), joinNames(nicNames).c_str()));
    named[it - nicNames.begin()] = true;
  }
  std::vector<bool> allowed(nicNames.size());
  for (size_t i = 0; i < named.size(); ++i) allowed[i] = exclude ? !named[i] : named[i];
  if (std::none_of(allowed.begin(), allowed.end(), [](bool b) { return b; }))
    throw InvalidArgument(strprintf("GDR_IB_HCA=%s leaves no RDMA device to use (this host has: %s)",
                                    spec.c_str(), joinNames(nicNames).c_str()));
  return allowed;
}

std::vector<NicAssignment> assignNics(const AssignInput& in, const AssignOptions& opts) {
  const size_t ngpu = in.gpuNames.size(), nnic = in.nicNames.size();
  std::vector<NicAssignment> out(ngpu);
  if (nnic == 0) {
    if (!opts.hca.empty())
      throw InvalidArgument(strprintf("GDR_IB_HCA=%s, but this host has no RDMA device",
                                      opts.hca.c_str()));
    for (size_t g = 0; g < ngpu; ++g) {
      out[g].reason = "this host has no RDMA NIC, so no GPUDirect RDMA; traffic to other hosts "
                      "goes over TCP";
      GDR_INFO(kTopo, "GPU %s: %s", in.gpuNames[g].c_str(), out[g].reason.c_str());
    }
    return out;
  }
  const std::vector<bool> allowed = selectHcas(opts.hca, in.nicNames);
  const size_t nallowed = std::count(allowed.begin(), allowed.end(), true);

  // Closest allowed class and the NICs at it, per GPU.
  std::vector<PathClass> best(ngpu, PathClass::SYS);
  std::vector<std::vector<int>> closest(ngpu);
  for (size_t g = 0; g < ngpu; ++g) {
    for (size_t n = 0; n < nnic; ++n)
      if (allowed[n] && in.path[g][n] < best[g]) best[g] = in.path[g][n];
    for (size_t n = 0; n < nnic; ++n)
      if (allowed[n] && in.path[g][n] == best[g]) closest[g].push_back(static_cast<int>(n));
  }
  std::vector<size_t> order(ngpu);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return closest[a].size() < closest[b].size(); });

  std::vector<int> load(nnic, 0);
  for (size_t g : order) {
    int pick = closest[g][0];
    for (int n : closest[g])
      if (load[n] < load[pick]) pick = n;
    ++load[pick];
    NicAssignment& a = out[g];
    a.nic = pick;
    a.path = best[g];
    const char* nic = in.nicNames[pick].c_str();
    if (nallowed == 1 && !opts.hca.empty())
      a.reason = strprintf("%s because GDR_IB_HCA=%s selects it (%s: %s)", nic, opts.hca.c_str(),
                           pathName(a.path), describePath(a.path));
    else if (a.path <= PathClass::PXB)
      a.reason = strprintf("%s is the closest NIC (%s: %s)", nic, pathName(a.path),
                           describePath(a.path));
    else
      a.reason = strprintf("no NIC under its PCIe switch; falls back to the nearest, %s (%s: %s)",
                           nic, pathName(a.path), describePath(a.path));
    if (closest[g].size() > 1) {
      std::vector<std::string> others;
      for (int n : closest[g])
        if (n != pick) others.push_back(in.nicNames[n]);
      a.reason += strprintf("; tied with %s, took the one fewer GPUs use", joinNames(others).c_str());
    }
  }

  // NICs no GPU took: each to the GPU among whose closest it is with the
  // fewest NICs so far (GPUs in choosing order on ties).
  for (size_t n = 0; n < nnic; ++n) {
    if (load[n] != 0 || !allowed[n]) continue;
    size_t* to = nullptr;
    for (size_t& g : order)
      if (std::find(closest[g].begin(), closest[g].end(), static_cast<int>(n)) !=
              closest[g].end() &&
          (!to || out[g].more.size() < out[*to].more.size()))
        to = &g;
    if (!to) continue;
    out[*to].more.push_back(static_cast<int>(n));
    out[*to].reason +=
        strprintf("; also %s, as close and taken by no other GPU", in.nicNames[n].c_str());
  }

  // Sharing is known only once every GPU has chosen.
  for (size_t g = 0; g < ngpu; ++g) {
    NicAssignment& a = out[g];
    std::vector<std::string> sharers;
    for (size_t h = 0; h < ngpu; ++h)
      if (h != g && out[h].nic == a.nic) sharers.push_back(in.gpuNames[h]);
    if (!sharers.empty()) a.reason += "; shared with GPU " + joinNames(sharers);
    a.useGdr = a.path <= opts.gdrLevel;
    if (a.useGdr)
      a.reason += strprintf("; GPUDirect RDMA on, %s is within GDR_NET_GDR_LEVEL=%s",
                            pathName(a.path), pathName(opts.gdrLevel));
    else
      a.reason += strprintf(
          "; GPUDirect RDMA off, %s is beyond GDR_NET_GDR_LEVEL=%s: data is staged through host "
          "memory near %s",
          pathName(a.path), pathName(opts.gdrLevel), in.nicNames[a.nic].c_str());
    GDR_INFO(kTopo, "GPU %s uses %s: %s", in.gpuNames[g].c_str(), in.nicNames[a.nic].c_str(),
             a.reason.c_str());
  }
  return out;
}

}  // namespace gdr::topo

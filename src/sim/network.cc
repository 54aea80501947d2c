#include "sim/network.h"

#include <algorithm>

namespace gdr::sim {
namespace {

const LinkParams& params(const Cluster& c, LinkClass cls) { return c.link[static_cast<int>(cls)]; }

}  // namespace

Network::Network(const Cluster& c) : c_(c) {
  auto block = [&](int n, double cap) {
    const int first = numLinks();
    capacity_.insert(capacity_.end(), static_cast<size_t>(n), cap);
    return first;
  };
  const int gpus = c.nranks();
  const double nvl = params(c, LinkClass::NvLink).gbps;
  const LinkClass netCls = c.netTransport == "socket" ? LinkClass::Socket : LinkClass::Nic;
  socketPorts_ = netCls == LinkClass::Socket;
  const double nic = params(c, netCls).gbps;
  nvlOut_ = block(gpus, nvl);
  nvlIn_ = block(gpus, nvl);
  nicOut_ = block(c.hosts * c.nicsPerHost, nic);
  nicIn_ = block(c.hosts * c.nicsPerHost, nic);
  const int hostsPerLeaf = c.railOptimised ? c.leafPorts : std::max(1, c.leafPorts / c.nicsPerHost);
  const int groups = (c.hosts + hostsPerLeaf - 1) / hostsPerLeaf;
  numLeaves_ = c.railOptimised ? groups * c.nicsPerHost : groups;
  // A leaf's uplinks carry its host-facing capacity divided by the
  // oversubscription (two levels) or by 1 (three levels: the pods oversubscribe).
  const double leafDownCap = nic * c.leafPorts;
  const double leafOver = c.treeLevels == 3 ? 1.0 : c.oversubscription;
  leafUp_ = block(numLeaves_, leafDownCap / leafOver);
  leafDown_ = block(numLeaves_, leafDownCap / leafOver);
  numPods_ = c.treeLevels == 3 ? (numLeaves_ + c.podLeaves - 1) / c.podLeaves : 0;
  podUp_ = block(numPods_, leafDownCap * c.podLeaves / c.oversubscription);
  podDown_ = block(numPods_, leafDownCap * c.podLeaves / c.oversubscription);
  const int cores = c.coresPerHost > 0 ? std::min(c.coresPerHost, c.ranksPerHost) : c.ranksPerHost;
  // The host's cores, in cores: every shm message of the host (one core
  // copies at the single-copy rate; eager messages are copied twice) and,
  // where ranks time-share the cores, their CPU work (cpuPath) share them.
  hostCores_ = block(c.hosts, cores);
  // Single-copy reads of one host share its memory (cma_mem_gbps; 0: only the cores).
  hostMem_ = block(c.hosts, c.cmaMemGBps > 0 ? c.cmaMemGBps : 1e30);
}

int Network::nicOf(int rank) const {
  const int g = rank % c_.ranksPerHost;
  return c_.hostOf(rank) * c_.nicsPerHost + g * c_.nicsPerHost / c_.ranksPerHost;
}

int Network::leafOf(int host, int nic) const {
  if (c_.railOptimised) return (host / c_.leafPorts) * c_.nicsPerHost + nic % c_.nicsPerHost;
  return host / std::max(1, c_.leafPorts / c_.nicsPerHost);
}

Path Network::path(int a, int b, bool cma, bool shared) const {
  Path p;
  const int ha = c_.hostOf(a), hb = c_.hostOf(b);
  if (ha == hb) {
    if (c_.device) {
      p.cls = LinkClass::NvLink;
      p.add(nvlOut_ + a);
      p.add(nvlIn_ + b);
    } else if (c_.hostTransport == "socket") {
      p.cls = LinkClass::Socket;
    } else {
      // An eager message is copied twice (into the slots, out of them), a
      // single-copy one once; both by the host's cores.
      p.cls = cma ? LinkClass::ShmCma : LinkClass::Shm;
      const double perCore = params(c_, LinkClass::ShmCma).gbps;
      p.add(hostCores_ + ha, (cma ? 1.0 : 2.0) / (perCore > 0 ? perCore : 1.0));
      if (cma && c_.cmaMemGBps > 0) p.add(hostMem_ + ha);
    }
  } else {
    p.cls = c_.netTransport == "socket" ? LinkClass::Socket : LinkClass::Nic;
    const int na = nicOf(a), nb = nicOf(b);
    p.add(nicOut_ + na);
    const int la = leafOf(ha, na % c_.nicsPerHost), lb = leafOf(hb, nb % c_.nicsPerHost);
    if (c_.treeLevels > 1 && la != lb) {
      p.add(leafUp_ + la);
      const int pa = numPods_ ? la / c_.podLeaves : 0, pb = numPods_ ? lb / c_.podLeaves : 0;
      if (pa != pb) {
        p.add(podUp_ + pa);
        p.add(podDown_ + pb);
      }
      p.add(leafDown_ + lb);
    }
    p.add(nicIn_ + nb);
  }
  const LinkParams& lp = params(c_, p.cls);
  p.latencyUs = lp.latencyUs;
  p.flowCapGBps = lp.gbps;
  // A shared single copy: two cores at the per-core rate (cma_share_gain),
  // the same bytes on the host's cores and memory.
  if (p.cls == LinkClass::ShmCma && shared) p.flowCapGBps *= c_.cmaShareGain;
  return p;
}

Path Network::cpuPath(int host) const {
  Path p;
  p.add(hostCores_ + host);
  p.flowCapGBps = 1.0;
  return p;
}

}  // namespace gdr::sim

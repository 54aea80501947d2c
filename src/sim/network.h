// The links of a cluster and the path a message takes between two ranks.
//
// Every shared resource is a link with a capacity in GB/s: a GPU's NVLink
// port each way, a NIC port each way, a leaf switch's uplink bundle each
// way (its host-facing capacity divided by the oversubscription), a pod's
// uplink bundle each way (three levels), and a host's memory-copy capacity
// (its cores, a link whose unit is one core: a single-copy message moving at
// r GB/s takes r / link.shm_cma.gbps of it) for host processes, beside the
// host's memory that all its single-copy reads share (cma_mem_gbps). A bundle stands
// for all the parallel cables of a switch tier: flows are assumed spread
// evenly over them (perfect ECMP), which is optimistic where real hashing
// collides.
//
// Rail-optimised: NIC k of every host in a group of leafPorts hosts plugs
// into that group's leaf k, so same-rail traffic of a group stays on one
// leaf. Otherwise a host's NICs all plug into one leaf, leafPorts / nics
// hosts per leaf. GPU g uses NIC g * nics / ranksPerHost.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/cluster.h"

namespace gdr::sim {

struct Path {
  int links[8];
  double weight[8];  // bytes the link carries per byte of the message
  int nlinks = 0;
  LinkClass cls = LinkClass::Shm;
  double latencyUs = 0;
  double flowCapGBps = 0;  // the most one flow gets on this class (single stream)
  void add(int link, double w = 1.0) {
    links[nlinks] = link;
    weight[nlinks++] = w;
  }
};

class Network {
 public:
  explicit Network(const Cluster& c);
  int numLinks() const { return static_cast<int>(capacity_.size()); }
  double capacity(int link) const { return capacity_[link]; }
  // The capacity of `link` while `flows` flows cross it (socket_shared_eff on
  // a host's TCP port shared by two or more).
  double capacity(int link, int flows) const {
    return flows > 1 && socketPorts_ && link >= nicOut_ && link < leafUp_ ? capacity_[link] * c_.socketSharedEff
                                                                         : capacity_[link];
  }
  // The path of a `bytes` message from rank a to rank b (a != b); `cma`
  // says whether a host-memory message goes single-copy.
  Path path(int a, int b, bool cma, bool shared = false) const;
  // Work of one core on `host` (a host process's copy, reduction or call
  // cost) as a flow on the host's cores: one core at most, so 1 byte is a
  // nanosecond of one core (see Cluster::coresPerHost).
  Path cpuPath(int host) const;

 private:
  int leafOf(int host, int nic) const;
  int nicOf(int rank) const;
  const Cluster& c_;
  std::vector<double> capacity_;
  int nvlOut_ = 0, nvlIn_ = 0, nicOut_ = 0, nicIn_ = 0, leafUp_ = 0, leafDown_ = 0, podUp_ = 0,
      podDown_ = 0, hostCores_ = 0, hostMem_ = 0;
  int numLeaves_ = 0, numPods_ = 0;
  bool socketPorts_ = false;  // the hosts' ports are TCP (net_transport socket)
};

}  // namespace gdr::sim

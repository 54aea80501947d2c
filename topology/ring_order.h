// Ordering ranks for rings and trees. Every rank calls this with the same
// allgathered input and gets the same answer.
//
// - Ranks of one host are adjacent; hosts come in the order of their lowest rank.
// - Inside a host, ranks form the chain with the closest hops (NVLink, then one
//   PCIe switch, ...): a nearest-neighbour chain tried from every start, the
//   cheapest kept. Ranks sharing one GPU stay together.
// - Between hosts, each host's chain runs forwards or backwards so that it
//   starts on the rail (NIC index) the previous host ended on; with identical
//   hosts the ring snakes GPU k -> GPU k across hosts, so inter-host hops stay
//   on one rail of a rail-optimised fabric.
// Trees use the same order: hosts contiguous, and the first rank of each host
// in it is the one to lead that host.
#pragma once

#include <string>
#include <vector>

#include "topology/topology.h"

namespace gdr::topo {

struct RankPlace {
  std::string hostId;
  std::string busId;  // the rank's GPU; empty for a rank without one
};

// `local` describes the hosts' layout (taken to be alike, as in a cluster of one
// server model); null orders each host's ranks by bus id, without rails.
// Returns order: order[i] is the rank at ring position i.
std::vector<int> ringOrder(const std::vector<RankPlace>& ranks, const Topology* local);

}  // namespace gdr::topo

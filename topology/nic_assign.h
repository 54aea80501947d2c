// Choosing a NIC for every GPU, and whether GPUDirect RDMA is used on that
// pair. Pure: works on the path classes Topology computed.
//
// Rules, in order:
//  1. GDR_IB_HCA (AssignOptions::hca) narrows the candidates; a name that is no
//     NIC of this host is an error, never silently ignored.
//  2. Each GPU takes a candidate at its closest path class. When several are
//     equally close, it takes the one the fewest GPUs use so far (then the
//     lowest index), so tied NICs are shared evenly. GPUs with fewer closest
//     candidates choose first, so a flexible GPU never takes the only close
//     NIC of a constrained one.
//     A NIC no GPU took that is among a GPU's closest goes to it as well
//     (NicAssignment::more; to the GPU with the fewest NICs so far when
//     several are that close), so a GPU with two NICs under its switch
//     uses both.
//  3. GPUDirect RDMA is used when the path is AssignOptions::gdrLevel or closer;
//     otherwise the transport stages data through host memory near the NIC.
#pragma once

#include <string>
#include <vector>

#include "topology/topology.h"

namespace gdr::topo {

struct AssignInput {
  std::vector<std::string> gpuNames;         // for messages (bus ids)
  std::vector<std::string> nicNames;         // e.g. mlx5_0
  std::vector<std::vector<PathClass>> path;  // [gpu][nic]
};

std::vector<NicAssignment> assignNics(const AssignInput& in, const AssignOptions& opts);

// Which NICs a GDR_IB_HCA value allows: "a,b[:port]" keeps only those,
// "^a,b" keeps all but those. Throws InvalidArgument for unknown names or a
// value that leaves no NIC.
std::vector<bool> selectHcas(const std::string& spec, const std::vector<std::string>& nicNames);

}  // namespace gdr::topo

// The topology and NIC assignment in words: the table gdr-topo prints (like
// `nvidia-smi topo -m`, with NICs as columns) and the same facts as JSON.
#pragma once

#include <string>
#include <vector>

#include "topology/topology.h"

namespace gdr::topo {

// Matrix cell for a GPU pair: "X" for itself, "NV<links>" over NVLink, else the class.
std::string gpuPairCell(const Topology& t, int a, int b);

std::string formatText(const Topology& t, const std::vector<NicAssignment>& assign);
std::string formatJson(const Topology& t, const std::vector<NicAssignment>& assign);

}  // namespace gdr::topo

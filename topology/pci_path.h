// Classifying the PCIe path between two devices, from where each sits in the
// PCI tree. Pure: hwloc_scan.cc turns hwloc objects into PciPlace values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "topology/topology.h"

namespace gdr::topo {

// Where a PCI function sits.
//
// A PCIe switch shows up in the tree as two bridge levels: its upstream port,
// and below it one downstream port per slot. Like NCCL, we pair the bridges
// above a device from the bottom up (downstream, upstream) and call each pair
// one switch; a single bridge left over at the top is the CPU's root port and
// does not count (a device on a root port hangs off the host bridge). Without
// the pairing, two GPUs under one switch would look three bridges apart.
struct PciPlace {
  std::vector<uint64_t> switches;  // ids of the switches above it, nearest first
  uint64_t hostBridge = 0;         // id of its host bridge (0: none seen)
  std::string locality;            // NUMA nodes of its CPU-side ancestor (hwloc nodeset text)
};

// What a class means, in words for logs and reasons.
const char* describePath(PathClass p);

// PIX, PXB, PHB, NODE or SYS (NVLink is decided elsewhere).
PathClass classifyPci(const PciPlace& a, const PciPlace& b);

}  // namespace gdr::topo

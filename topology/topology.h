// The machine as gdrcoll sees it: GPUs, RDMA NICs, NUMA nodes and the PCIe /
// NVLink paths between them, read through hwloc from the live machine or from
// a saved hwloc XML. Everything here is a plain value type; hwloc stays behind
// the pimpl so that callers (the communicator, gdr-topo, tests) never see it.
//
// Path classes follow `nvidia-smi topo -m`'s legend, closest first:
//   NVL   NVLink (direct, or through NVSwitches)
//   PIX   at most one PCIe switch between the two devices
//   PXB   several PCIe switches, but no host bridge
//   PHB   through a PCIe host bridge (the CPU's root complex)
//   NODE  between host bridges of one NUMA node
//   SYS   across the interconnect between NUMA nodes (UPI, Infinity Fabric)
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace gdr::topo {

enum class PathClass : int { NVL = 0, PIX = 1, PXB = 2, PHB = 3, NODE = 4, SYS = 5 };

const char* pathName(PathClass p);
// Parses a class name, case-insensitively. `what` names the source of the text
// (e.g. "GDR_NET_GDR_LEVEL") in the InvalidArgument thrown for a bad name.
PathClass parsePathClass(const std::string& text, const char* what);

struct Gpu {
  std::string busId;   // canonical "0000:1b:00.0" (lower case, 4-digit domain)
  std::string model;   // hwloc's GPUModel where known, else "[10de:xxxx]"
  int numa = -1;       // OS index of the NUMA node it hangs off; -1: unknown or several
  std::string cpuset;  // CPUs local to it, as hwloc prints a bitmap ("0x00ff,...")
  int nvlinks = 0;     // NVLinks leaving this GPU (to GPUs or NVSwitches)
};

struct Nic {
  std::string name;                  // RDMA device name, e.g. "mlx5_0"
  std::string busId;                 // its PCI function, canonical form
  std::vector<int> ports;            // port numbers known from the topology (may be empty)
  std::vector<std::string> netdevs;  // network interfaces of the same function, e.g. "ib0"
  int numa = -1;
  std::string cpuset;
};

// Which NIC a GPU uses and whether GPUDirect RDMA is used on that pair.
struct NicAssignment {
  int nic = -1;  // index into Topology::nics(); -1 when the host has no RDMA NIC
  // Further NICs as close as `nic` that no GPU took as its own (a GPU with
  // two NICs under its switch): the transport's connections use them too.
  std::vector<int> more;
  PathClass path = PathClass::SYS;
  bool useGdr = false;
  std::string reason;  // one sentence a user can act on
};

struct AssignOptions {
  // GPUDirect RDMA is used for a GPU-NIC pair whose path is this class or closer.
  PathClass gdrLevel = PathClass::PXB;
  // NIC selection in GDR_IB_HCA syntax: "mlx5_0", "mlx5_0:1,mlx5_2" (restrict
  // to these), "^mlx5_1" (exclude these). Empty: every NIC is a candidate.
  std::string hca;
  // Reads GDR_NET_GDR_LEVEL and GDR_IB_HCA.
  static AssignOptions fromEnv();
};

class Topology {
 public:
  // GDR_TOPO_FILE when set, else the live machine.
  static Topology fromEnv();
  // This machine, with PCI devices, bridges and OS devices kept.
  static Topology live();
  // A saved hwloc XML (v1 or v2 format). Throws gdr::Error on an unreadable or
  // malformed file.
  static Topology loadXml(const std::string& path);

  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;
  ~Topology();

  // Writes the topology as hwloc XML (v2), as loaded: a dump of the live machine
  // can be read back with loadXml or GDR_TOPO_FILE.
  void dumpXml(const std::string& path) const;
  // "this machine" or the XML path it came from.
  const std::string& source() const;

  // GPUs sorted by PCI bus id (the order CUDA_DEVICE_ORDER=PCI_BUS_ID gives).
  const std::vector<Gpu>& gpus() const;
  // RDMA NICs sorted by name, numbers compared as numbers (mlx5_2 < mlx5_10).
  const std::vector<Nic>& nics() const;

  PathClass gpuNicPath(int gpu, int nic) const;
  PathClass gpuGpuPath(int a, int b) const;
  // NVLinks joining two GPUs (directly or through NVSwitches); 0 if none known.
  int nvlinkCount(int a, int b) const;

  // Index of the GPU with this PCI bus id, in any of the usual spellings
  // ("0000:1B:00.0" from CUDA, "00000000:1b:00.0" from NVML, "1b:00.0"); -1 if absent.
  int findGpu(const std::string& busId) const;
  int findNic(const std::string& name) const;  // -1 if absent

  // One assignment per GPU (see nic_assign.h for the rules). Throws
  // InvalidArgument when opts.hca names no NIC of this topology.
  std::vector<NicAssignment> assignNics(const AssignOptions& opts) const;
  std::vector<NicAssignment> assignNics() const { return assignNics(AssignOptions::fromEnv()); }

  // Binds the calling thread to the CPUs local to `gpu` (for a progress
  // thread). Only a live topology can bind; returns false (and logs why) otherwise.
  bool bindThreadNearGpu(int gpu) const;

  struct Impl;

 private:
  explicit Topology(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gdr::topo

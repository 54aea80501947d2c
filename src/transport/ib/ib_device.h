// One opened RDMA device and its active ports: the context, protection
// domain, and per port the GID this rank uses (RoCEv2 IPv4-mapped found
// automatically, GDR_IB_GID_INDEX overrides), LID and MTU. The accessors
// without a port index give the first port. Shared by the endpoints of one
// communicator, whose QPs go round the ports of every device it opened
// (openAll: several HCAs of one GPU).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "transport/ib/ibv_api.h"

namespace gdr::transport::ib {

class IbDevice {
 public:
  struct Port {
    uint8_t num = 1;
    int gidIndex = 0;
    ibv_gid gid{};
    uint16_t lid = 0;
    ibv_mtu mtu = IBV_MTU_1024;
  };
  // Opens GDR_IB_HCA ("name": every active port, or "name:port"), else `preferred` (the
  // topology's NIC for this rank's GPU; if it has no active port, logged and
  // skipped), else the first device with an active port. Throws NotSupported
  // with the reason when none is usable.
  static std::shared_ptr<IbDevice> open(const std::string& preferred = "");
  // Every device this rank's connections use (1 to kMaxIbDevices, in order):
  // those GDR_IB_HCA lists ("a,b:2": each must be usable; "^a,b": the first
  // usable one not named), else those of `preferred` (the topology's NICs for
  // this GPU, comma-separated) with an active port, else the first device
  // with one. Throws NotSupported with the reason when none is usable.
  static std::vector<std::shared_ptr<IbDevice>> openAll(const std::string& preferred = "");
  // Whether open() would succeed, without throwing; `why` says why not.
  static bool usable(std::string* why);
  ~IbDevice();

  const IbvApi& api() const { return *api_; }
  ibv_context* ctx() const { return ctx_; }
  ibv_pd* pd() const { return pd_; }
  const std::string& name() const { return name_; }
  uint8_t port() const { return port_; }
  const std::vector<Port>& ports() const { return ports_; }
  int gidIndex() const { return gidIndex_; }
  const ibv_gid& gid() const { return gid_; }
  uint16_t lid() const { return lid_; }
  ibv_mtu mtu() const { return mtu_; }
  bool roce() const { return roce_; }
  int maxQpWr() const { return maxQpWr_; }
  int maxCqe() const { return maxCqe_; }
  // Asynchronous events waiting on the device (QP fatal, access errors, port
  // changes), as text; never blocks. Empty when there are none.
  std::string drainAsyncEvents() const;

 private:
  // "" = any (but those in `skip`), "name" or "name:port".
  static std::shared_ptr<IbDevice> openNamed(std::string want,
                                             const std::vector<std::string>& skip = {});
  IbDevice() = default;
  const IbvApi* api_ = nullptr;
  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  std::string name_;
  uint8_t port_ = 1;
  int gidIndex_ = 0;
  ibv_gid gid_{};
  uint16_t lid_ = 0;
  ibv_mtu mtu_ = IBV_MTU_1024;
  bool roce_ = true;
  int maxQpWr_ = 0;
  int maxCqe_ = 0;
  std::vector<Port> ports_;
};

// Picks the GID index for RoCE: the first IPv4-mapped (::ffff:a.b.c.d) entry
// whose type is RoCE v2 (types from sysfs; `typeOf` returns "" when unknown).
// Returns -1 when there is none. Pure, for tests.
int pickRoceGid(int tableLen, const std::function<bool(int, ibv_gid*)>& query,
                const std::function<std::string(int)>& typeOf);

}  // namespace gdr::transport::ib

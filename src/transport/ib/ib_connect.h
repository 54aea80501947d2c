// The verbs back end of one communicator: the devices this rank opened, and
// an endpoint per peer it claims. Like the shm back end it makes its own
// resources and endpoints; the communicator only names the candidate peers
// (on other hosts, or every peer under GDR_TRANSPORT=ib), hands in each
// one's TCP endpoint (kept for abort notices and peer-death detection) and
// passes the exchange between offer() and claim().
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "security/channel_keys.h"
#include "transport/ib/ib_wire.h"
#include "transport/transport.h"

namespace gdr::transport::ib {

class IbDevice;
class IbEndpoint;

class IbBackend {
 public:
  struct Options {
    // GDR_TRANSPORT=ib: a rank without a usable device, or a peer without
    // one, throws instead of staying on TCP.
    bool forced = false;
    // The topology's NIC(s) for this rank's GPU, comma-separated
    // (GDR_IB_HCA still wins); the connections use every usable one.
    std::string preferredNic;
    // The topology finds GPUDirect worth it on that GPU-NIC path (within
    // GDR_NET_GDR_LEVEL), used when the device opened is that NIC.
    bool gdrPathAllowed = true;
  };
  IbBackend(int rank, int size, Options opt);
  ~IbBackend();
  IbBackend(const IbBackend&) = delete;
  IbBackend& operator=(const IbBackend&) = delete;

  // Opens the devices and makes an unconnected endpoint per candidate peer.
  // Returns this rank's row of the exchange: `size` entries, the one for
  // peer r its connection info (nQps 0: not offered). `keys` (GDR_ENCRYPT=1):
  // each peer's verbs keys (security::kIbKeyLabel); a peer without keys is
  // not encrypted. A rank without a device still returns a row (all
  // empty), so the others fail with a message instead of waiting for it.
  std::vector<IbConnInfo> offer(const std::vector<int>& candidates,
                                const security::ChannelKeyTable* keys);

  // After the exchange (`table`: every rank's row, rank order): connects the
  // peers that both ends offered, each endpoint taking eps[r] (the TCP one)
  // as its side connection, and puts it in eps[r]. The others keep their TCP
  // endpoint (forced: throws).
  void claim(const std::vector<IbConnInfo>& table, std::vector<std::unique_ptr<Endpoint>>& eps);

 private:
  int rank_;
  int size_;
  Options opt_;
  std::vector<std::shared_ptr<IbDevice>> devs_;  // empty: no usable device
  std::string whyNot_;                           // why there is none
  std::vector<int> candidates_;
  std::vector<std::unique_ptr<IbEndpoint>> offered_;  // by rank
};

}  // namespace gdr::transport::ib

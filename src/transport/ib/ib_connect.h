// Set-up of the verbs transport for a communicator: turns the TCP endpoints
// to other ranks into verbs endpoints where both ends have a usable device.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "security/channel_keys.h"
#include "transport/transport.h"

namespace gdr::transport::ib {

// Collective over `boot` (every rank calls it with its own `remote` list,
// which is symmetric). eps[r] for r in `remote` must be a connected TCP
// endpoint; where rank r and this rank both have a usable device it is
// replaced by an IbEndpoint that keeps the TCP one for abort notices and
// peer-death detection. `forced` (GDR_TRANSPORT=ib): a rank without a
// usable device throws instead of falling back. `preferredNic`: the
// topology's NIC for this rank's GPU (GDR_IB_HCA still wins);
// `gdrPathAllowed`: the topology finds GPUDirect worth it on that GPU-NIC path
// (within GDR_NET_GDR_LEVEL), used when the device opened is that NIC.
// `keys` (GDR_ENCRYPT=1): each peer's verbs keys (security::kIbKeyLabel),
// derived from its TCP connection's; a peer without keys is not encrypted.
void upgradeEndpoints(boot::Bootstrap& boot, int rank, int size, const std::vector<int>& remote,
                      std::vector<std::unique_ptr<Endpoint>>& eps, bool forced,
                      const std::string& preferredNic = "", bool gdrPathAllowed = true,
                      const security::ChannelKeyTable* keys = nullptr);

}  // namespace gdr::transport::ib

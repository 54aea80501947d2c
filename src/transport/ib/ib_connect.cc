#include "transport/ib/ib_connect.h"

#include <cstring>

#include "core/error.h"
#include "core/log.h"
#include "core/params.h"
#include "transport/ib/gdr_mode.h"
#include "transport/ib/ib_endpoint.h"
#include "transport/ib/peer_cc.h"

namespace gdr::transport::ib {

namespace {

IbEndpointConfig configFromParams(int rank, int peer, GdrMode gpuMode) {
  IbEndpointConfig c;
  c.myRank = rank;
  c.peerRank = peer;
  c.nQps = static_cast<int>(param::getInt("GDR_IB_QPS_PER_PEER"));
  c.qpDepth = static_cast<int>(param::getInt("GDR_IB_QP_DEPTH"));
  c.maxWr = static_cast<int>(param::getInt("GDR_IB_MAX_WR"));
  c.nSlots = static_cast<uint32_t>(param::getInt("GDR_IB_SLOTS"));
  int64_t chunk = param::getInt("GDR_IB_CHUNK");
  if (chunk < 0 || chunk % 4096 || chunk > (16 << 20))
    throw InvalidArgument(
        strprintf("GDR_IB_CHUNK=%lld must be 0 (adaptive) or a multiple of 4096 up to 16M",
                  (long long)chunk));
  c.chunkFixed = static_cast<size_t>(chunk);
  c.trafficClass = static_cast<int>(param::getInt("GDR_IB_TC"));
  c.serviceLevel = static_cast<int>(param::getInt("GDR_IB_SL"));
  c.timeout = static_cast<int>(param::getInt("GDR_IB_TIMEOUT"));
  c.retryCnt = static_cast<int>(param::getInt("GDR_IB_RETRY_CNT"));
  c.keepRegistrations = param::getBool("GDR_IB_REG_CACHE");
  const int64_t zb = param::getInt("GDR_IB_ZCOPY_BYTES"), zc = param::getInt("GDR_IB_ZCOPY_CHUNK");
  if (zb < 0 || zb > INT32_MAX || zc < 4096 || zc % 4096 || zc > (1 << 30))
    throw InvalidArgument(strprintf(
        "GDR_IB_ZCOPY_BYTES=%lld must be in [0, 2^31) and GDR_IB_ZCOPY_CHUNK=%lld a multiple of "
        "4096 up to 1 GiB",
        (long long)zb, (long long)zc));
  c.zcopyBytes = static_cast<size_t>(zb);
  c.zcopyChunk = static_cast<size_t>(zc);
  c.gpuMode = gpuMode;
  c.cc = ccConfigFromParams();
  c.failover = param::getBool("GDR_IB_FAILOVER");
  if (c.qpDepth < 16 || c.maxWr < 1 || c.timeout < 0 || c.timeout > 31 || c.retryCnt < 0 ||
      c.retryCnt > 7 || c.trafficClass < 0 || c.trafficClass > 255 || c.serviceLevel < 0 ||
      c.serviceLevel > 15)
    throw InvalidArgument(
        "GDR_IB_QP_DEPTH >= 16, GDR_IB_MAX_WR >= 1, GDR_IB_TIMEOUT in [0,31], GDR_IB_RETRY_CNT in "
        "[0,7], "
        "GDR_IB_TC in [0,255] and GDR_IB_SL in [0,15] are required");
  return c;
}

}  // namespace

void upgradeEndpoints(boot::Bootstrap& boot, int rank, int size, const std::vector<int>& remote,
                      std::vector<std::unique_ptr<Endpoint>>& eps, bool forced,
                      const std::string& preferredNic, bool gdrPathAllowed,
                      const security::ChannelKeyTable* keys) {
  std::shared_ptr<IbDevice> dev;
  std::string why;
  try {
    dev = IbDevice::open(preferredNic);
  } catch (const NotSupported& e) {
    why = e.what();
  }
  // A rank that cannot take part still joins the exchange below, so the
  // others fail with a message instead of waiting for it.
  if (!dev && !forced) GDR_INFO(kNet, "rank %d: verbs transport not used: %s", rank, why.c_str());
  GdrMode gpuMode = GdrMode::Staged;
  if (dev) {
    GdrDecision d = decideGdr(probeGdrChecks(gdrPathAllowed || preferredNic != dev->name()));
    gpuMode = d.mode;
    GDR_INFO(kNet, "rank %d: GPU memory over %s: %s (%s)", rank, dev->name().c_str(),
             gdrModeName(d.mode), d.reason.c_str());
  }

  // One row per rank: its connection info for every peer (nQps 0: none).
  std::vector<IbConnInfo> table(static_cast<size_t>(size) * size);
  std::memset(table.data(), 0, table.size() * sizeof(IbConnInfo));
  std::vector<std::unique_ptr<IbEndpoint>> ibs(size);
  if (dev) {
    for (int r : remote) {
      ibs[r] = std::make_unique<IbEndpoint>(dev, configFromParams(rank, r, gpuMode),
                                            keys ? keys->get(r) : nullptr);
      table[static_cast<size_t>(rank) * size + r] = ibs[r]->localInfo();
    }
  }
  boot.allgather(table.data(), static_cast<size_t>(size) * sizeof(IbConnInfo));
  if (forced && !dev) throw NotSupported("GDR_TRANSPORT=ib: " + why);

  for (int r : remote) {
    const IbConnInfo& theirs = table[static_cast<size_t>(r) * size + rank];
    if (!ibs[r] || theirs.nQps == 0) {
      if (forced)
        throw NotSupported(
            strprintf("GDR_TRANSPORT=ib but rank %d has no usable RDMA device", ibs[r] ? r : rank));
      continue;
    }
    ibs[r]->connect(theirs, std::move(eps[r]));
    eps[r] = std::move(ibs[r]);
  }
}

}  // namespace gdr::transport::ib

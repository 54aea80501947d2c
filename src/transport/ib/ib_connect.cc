#include "transport/ib/ib_connect.h"

#include <cstring>
#include <utility>

#include "core/error.h"
#include "core/log.h"
#include "core/params.h"
#include "transport/ib/gdr_mode.h"
#include "transport/ib/ib_device.h"
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

IbBackend::IbBackend(int rank, int size, Options opt)
    : rank_(rank), size_(size), opt_(std::move(opt)) {}

IbBackend::~IbBackend() = default;

std::vector<IbConnInfo> IbBackend::offer(const std::vector<int>& candidates,
                                         const security::ChannelKeyTable* keys) {
  candidates_ = candidates;
  try {
    devs_ = IbDevice::openAll(opt_.preferredNic);
  } catch (const NotSupported& e) {
    whyNot_ = e.what();
  }
  if (devs_.empty() && !opt_.forced)
    GDR_INFO(kNet, "rank %d: verbs transport not used: %s", rank_, whyNot_.c_str());
  std::vector<IbConnInfo> row(size_);
  std::memset(row.data(), 0, row.size() * sizeof(IbConnInfo));
  offered_.resize(size_);
  if (devs_.empty()) return row;
  // The topology's GPU-NIC verdict holds for the NICs it named; another
  // device (GDR_IB_HCA, or the first active one) is not judged by it.
  bool named = false;
  std::string names;
  for (const auto& dev : devs_) {
    named |= ("," + opt_.preferredNic + ",").find("," + dev->name() + ",") != std::string::npos;
    names += (names.empty() ? "" : "+") + dev->name();
  }
  GdrDecision d = decideGdr(probeGdrChecks(opt_.gdrPathAllowed || !named));
  GDR_INFO(kNet, "rank %d: GPU memory over %s: %s (%s)", rank_, names.c_str(), gdrModeName(d.mode),
           d.reason.c_str());
  for (int r : candidates_) {
    offered_[r] = std::make_unique<IbEndpoint>(devs_, configFromParams(rank_, r, d.mode),
                                               keys ? keys->get(r) : nullptr);
    row[r] = offered_[r]->localInfo();
  }
  return row;
}

void IbBackend::claim(const std::vector<IbConnInfo>& table,
                      std::vector<std::unique_ptr<Endpoint>>& eps) {
  if (opt_.forced && devs_.empty()) throw NotSupported("GDR_TRANSPORT=ib: " + whyNot_);
  for (int r : candidates_) {
    const IbConnInfo& theirs = table[static_cast<size_t>(r) * size_ + rank_];
    if (!offered_[r] || theirs.nQps == 0) {
      if (opt_.forced)
        throw NotSupported(strprintf("GDR_TRANSPORT=ib but rank %d has no usable RDMA device",
                                     offered_[r] ? r : rank_));
      continue;
    }
    offered_[r]->connect(theirs, std::move(eps[r]));
    eps[r] = std::move(offered_[r]);
  }
}

}  // namespace gdr::transport::ib

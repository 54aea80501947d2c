// The verbs endpoint's set-up on each of its devices (ib_endpoint.cc has
// the rest): which port of which device each lane is, the regions and caches
// registered on every device, each device's completion queue and congestion
// path, each QP on its device, and their teardown.
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/error.h"
#include "transport/ib/ib_endpoint.h"
#include "transport/ib/mr_register.h"

namespace gdr::transport::ib {

std::vector<IbEndpoint::Rail> IbEndpoint::railsOf(
    const std::vector<std::shared_ptr<IbDevice>>& devs) {
  if (devs.empty() || devs.size() > static_cast<size_t>(kMaxIbDevices))
    throw InvalidArgument(
        strprintf("%zu verbs devices for one connection: 1 to %d", devs.size(), kMaxIbDevices));
  // Port p of every device before port p+1 of any: QP 0 on the first
  // device, QP 1 on the second, so even two QPs use two devices.
  std::vector<Rail> rails;
  for (size_t p = 0;; ++p) {
    const size_t before = rails.size();
    for (size_t d = 0; d < devs.size(); ++d)
      if (p < devs[d]->ports().size()) rails.push_back({static_cast<int>(d), static_cast<int>(p)});
    if (rails.size() == before) break;
  }
  return rails;
}

// A congestion window per device, each reading the retransmission counters
// of the ports its QPs are on.
std::vector<CcPath> IbEndpoint::ccPaths() const {
  std::vector<CcPath> paths(devs_.size());
  for (size_t d = 0; d < devs_.size(); ++d) paths[d].name = devs_[d].dev->name();
  for (int q = 0; q < cfg_.nQps; ++q) {
    const std::string dir = RetryCounters::portDir(deviceOf(q).name(), portOf(q).num);
    std::vector<std::string>& dirs = paths[devOf(q)].countersDirs;
    if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
  }
  return paths;
}

// Registers this side's regions on one device and makes its caches and its
// completion queue (sized for the QPs that will be on it).
void IbEndpoint::openDevSide(DevSide& d, const security::SessionKeys* keys) {
  const IbvApi& api = *api_;
  const IbDevice& dev = *d.dev;
  ibv_pd* pd = dev.pd();
  // Send sources only: the NIC reads them, so they get no access rights
  // beyond local read. Device memory goes by the GPUDirect decision.
  MrContext mc;
  mc.api = &api;
  mc.pd = pd;
  mc.gpuMode = cfg_.gpuMode;
  mc.use = MrUse::SendSource;
  mc.what = strprintf("sends to rank %d on %s", cfg_.peerRank, dev.name().c_str());
  const IbvApi* apiPtr = &api;
  d.regs = std::make_unique<RegCache>(
      cacheRegisterFn(mc), [apiPtr](const Registration& r) { deregister(*apiPtr, r); },
      static_cast<size_t>(sysconf(_SC_PAGESIZE)), cfg_.keepRegistrations);
  d.regs->followUserRanges();
  if (zBytes_) {
    MrContext rc = mc;
    rc.use = MrUse::RecvTarget;
    rc.what = strprintf("zero-copy receives from rank %d on %s", cfg_.peerRank, dev.name().c_str());
    d.rregs = std::make_unique<RegCache>(
        cacheRegisterFn(std::move(rc)), [apiPtr](const Registration& r) { deregister(*apiPtr, r); },
        static_cast<size_t>(sysconf(_SC_PAGESIZE)), cfg_.keepRegistrations);
    d.rregs->followUserRanges();
  }
  const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  d.slotsMr = api.reg_mr(pd, slots_, slotStride_ * cfg_.nSlots, rw);
  if (!d.slotsMr)
    throw SystemError(strprintf("ibv_reg_mr of receive slots on %s", dev.name().c_str()), errno);
  d.ctrlMr = api.reg_mr(pd, ctrl_, ctrlBytes(), rw);
  if (!d.ctrlMr)
    throw SystemError(strprintf("ibv_reg_mr of the control block on %s", dev.name().c_str()),
                      errno);
  d.ctsMr = api.reg_mr(pd, cts_, 2 * kCtsSlots * sizeof(ZcopyCts), rw);
  if (!d.ctsMr)
    throw SystemError(strprintf("ibv_reg_mr of the rendezvous mailbox on %s", dev.name().c_str()),
                      errno);
  if (keys) {
    d.ringMr = api.reg_mr(pd, cipher_->ringBase(), cipher_->ringBytes(), IBV_ACCESS_LOCAL_WRITE);
    if (!d.ringMr)
      throw SystemError(strprintf("ibv_reg_mr of the sealing ring on %s", dev.name().c_str()),
                        errno);
  }
  const int self = static_cast<int>(&d - devs_.data());
  int qpsHere = 0;
  for (int q = 0; q < cfg_.nQps; ++q) qpsHere += devOf(q) == self;
  int cqe = std::max(1, qpsHere) * 2 * sqCap_;
  if (dev.maxCqe() > 0) cqe = std::min(cqe, dev.maxCqe());
  d.cq = api.create_cq(dev.ctx(), cqe, nullptr, nullptr, 0);
  if (!d.cq)
    throw SystemError(strprintf("ibv_create_cq(%d) on %s", cqe, dev.name().c_str()), errno);
}

// QP q on its device's queue, bound to its port, in the INIT state.
ibv_qp* IbEndpoint::createQp(int q) {
  const IbvApi& api = *api_;
  DevSide& d = sideOf(q);
  ibv_qp_init_attr ia{};
  ia.send_cq = d.cq;
  ia.recv_cq = d.cq;
  ia.qp_type = IBV_QPT_RC;
  ia.cap.max_send_wr = static_cast<uint32_t>(sqCap_);
  ia.cap.max_recv_wr = static_cast<uint32_t>(sqCap_);
  ia.cap.max_send_sge = 2;
  ia.cap.max_recv_sge = 1;
  ibv_qp* qp = api.create_qp(d.dev->pd(), &ia);
  if (!qp)
    throw SystemError(
        strprintf("ibv_create_qp (RC, depth %d) on %s", sqCap_, d.dev->name().c_str()), errno);
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = portOf(q).num;
  a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
  if (int e = api.modify_qp(qp, &a,
                            IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
    throw SystemError(
        strprintf("ibv_modify_qp(INIT) of QP %u to rank %d", qp->qp_num, cfg_.peerRank), e);
  return qp;
}

// After the QPs on it are gone: its caches, queue and registrations.
void IbEndpoint::closeDevSide(DevSide& d) {
  const IbvApi& api = *api_;
  d.regs.reset();
  d.rregs.reset();
  if (d.cq) api.destroy_cq(d.cq);
  if (d.slotsMr) api.dereg_mr(d.slotsMr);
  if (d.ctrlMr) api.dereg_mr(d.ctrlMr);
  if (d.ringMr) api.dereg_mr(d.ringMr);
  if (d.ctsMr) api.dereg_mr(d.ctsMr);
}

void IbEndpoint::acquireSendRegs(PendingSend& p) {
  for (size_t d = 0; d < devs_.size(); ++d) {
    try {
      p.reg[d] = devs_[d].regs->acquire(p.op->data, p.op->bytes);
    } catch (...) {
      releaseRegs(p.reg, false);
      throw;
    }
  }
}

void IbEndpoint::releaseRegs(const RegCache::Entry* const* regs, bool recv) {
  for (size_t d = 0; d < devs_.size(); ++d)
    if (regs[d]) (recv ? devs_[d].rregs : devs_[d].regs)->release(regs[d]);
}

}  // namespace gdr::transport::ib

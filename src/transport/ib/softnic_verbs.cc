// The software NIC's verbs entry points: the IbvApi table the transport
// loads with GDR_IB_PROVIDER=softnic, over the state in softnic_nic.h.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/log.h"
#include "core/params.h"
#include "transport/ib/softnic.h"
#include "transport/ib/softnic_device.h"
#include "transport/ib/softnic_nic.h"

namespace gdr::transport::ib::softnic {

namespace {

// --- the verbs entry points -------------------------------------------------

int postSend(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
  Nic& n = nic();
  std::lock_guard<std::mutex> g(n.mu);
  auto it = n.qps.find(qp->qp_num);
  if (it == n.qps.end()) return EINVAL;
  static const int64_t delayUs = param::getInt("GDR_SOFTNIC_DELAY_US");
  for (; wr; wr = wr->next) {
    if (n.downAt && ++n.writes == n.downAt) portDownLocked(n, n.downDev, n.downPort);
    if ((wr->opcode != IBV_WR_RDMA_WRITE && wr->opcode != IBV_WR_RDMA_WRITE_WITH_IMM) ||
        qp->state < IBV_QPS_RTS) {
      *bad = wr;
      return EINVAL;
    }
    Write w;
    w.wrId = wr->wr_id;
    w.signaled = (wr->send_flags & IBV_SEND_SIGNALED) != 0;
    w.withImm = wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
    w.imm = wr->imm_data;
    w.raddr = wr->wr.rdma.remote_addr;
    w.rkey = wr->wr.rdma.rkey;
    w.sge.assign(wr->sg_list, wr->sg_list + wr->num_sge);
    w.fail = n.failAt && ++n.posted == n.failAt;
    w.failStatus = n.failStatus;
    if (w.fail) n.failAt = 0;
    w.ackLost = n.ackLostAt && ++n.ackPosted == n.ackLostAt;
    if (w.ackLost) n.ackLostAt = 0;
    w.notBefore = Clock::now() + std::chrono::microseconds(delayUs > 0 ? delayUs : 0);
    if (n.bytesPerUs > 0) {  // the port's link: writes go through it one after another
      uint64_t total = 0;
      for (const ibv_sge& s : w.sge) total += s.length;
      Clock::time_point& busy = n.busyUntil[it->second->dev][it->second->port];
      busy = std::max(busy, Clock::now()) +
             std::chrono::nanoseconds(static_cast<int64_t>(1000.0 * total / n.bytesPerUs));
      w.notBefore = std::max(w.notBefore, busy);
    }
    it->second->sq.push_back(std::move(w));
  }
  pump(n);
  return 0;
}

int postRecv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  Nic& n = nic();
  std::lock_guard<std::mutex> g(n.mu);
  auto it = n.qps.find(qp->qp_num);
  if (it == n.qps.end()) return EINVAL;
  for (; wr; wr = wr->next) {
    if (wr->num_sge != 0) {  // only landing receives for immediates
      *bad = wr;
      return EINVAL;
    }
    it->second->recvs.push_back(wr->wr_id);
    if (it->second->shm) it->second->shm->recvPosted.fetch_add(1, std::memory_order_release);
  }
  pump(n);
  return 0;
}

int pollCq(ibv_cq* cq, int max, ibv_wc* out) {
  Nic& n = nic();
  std::lock_guard<std::mutex> g(n.mu);
  pump(n);
  auto* c = reinterpret_cast<SoftCq*>(cq);
  drainInboxes(n, c);
  int k = 0;
  for (; k < max && !c->wcs.empty(); ++k) {
    out[k] = c->wcs.front();
    c->wcs.pop_front();
  }
  return k;
}

// GDR_SOFTNIC_DEVICES of them, read at each listing (so one test process can
// ask for several devices after another test listed one).
ibv_device** getDeviceList(int* num) {
  Nic& n = nic();
  std::lock_guard<std::mutex> g(n.mu);
  const int k =
      static_cast<int>(std::clamp<int64_t>(param::getInt("GDR_SOFTNIC_DEVICES"), 1, kMaxDevices));
  for (int i = 0; i <= kMaxDevices; ++i) n.list[i] = i < k ? &n.devs[i] : nullptr;
  if (num) *num = k;
  return n.list;
}
void freeDeviceList(ibv_device**) {}
const char* getDeviceName(ibv_device* d) { return d->name; }

ibv_context* openDevice(ibv_device* d) {
  auto* c = new ibv_context{};
  c->device = d;
  c->ops.post_send = &postSend;
  c->ops.post_recv = &postRecv;
  c->ops.poll_cq = &pollCq;
  c->cmd_fd = c->async_fd = -1;
  GDR_INFO(kNet, "%s: opened the software NIC (a test device, not an RDMA NIC)", d->name);
  return c;
}
int closeDevice(ibv_context* c) {
  delete c;
  return 0;
}
int queryDevice(ibv_context*, ibv_device_attr* a) {
  *a = ibv_device_attr{};
  std::strncpy(a->fw_ver, "softnic", sizeof(a->fw_ver) - 1);
  a->phys_port_cnt = static_cast<uint8_t>(nic().ports);
  a->max_qp_wr = 16384;
  a->max_cqe = 1 << 20;
  a->max_sge = 4;
  return 0;
}
int queryPortCompat(ibv_context* c, uint8_t port, _compat_ibv_port_attr* out) {
  Nic& n = nic();
  std::lock_guard<std::mutex> g(n.mu);
  if (port < 1 || port > n.ports) return EINVAL;
  // IbvApi::queryPort hands over a whole ibv_port_attr.
  auto* a = reinterpret_cast<ibv_port_attr*>(out);
  const int d = devIndex(c);
  a->state = n.portsDown[d] & (1u << port) ? IBV_PORT_DOWN : IBV_PORT_ACTIVE;
  a->max_mtu = a->active_mtu = IBV_MTU_4096;
  a->lid = static_cast<uint16_t>(16 * d + port);  // one subnet: every port its own LID
  a->gid_tbl_len = 1;
  a->link_layer = IBV_LINK_LAYER_INFINIBAND;
  return 0;
}
int queryGid(ibv_context*, uint8_t, int idx, ibv_gid* g) {
  if (idx != 0) return EINVAL;
  *g = ibv_gid{};
  return 0;
}
ibv_pd* allocPd(ibv_context* c) {
  auto* pd = new ibv_pd{};
  pd->context = c;
  return pd;
}
int deallocPd(ibv_pd* pd) {
  delete pd;
  return 0;
}
ibv_mr* regMr(ibv_pd* pd, void* addr, size_t len, int access) {
  Nic& n = nic();
  std::lock_guard<std::mutex> g(n.mu);
  auto* mr = new ibv_mr{};
  mr->context = pd->context;
  mr->pd = pd;
  mr->addr = addr;
  mr->length = len;
  mr->handle = static_cast<uint32_t>(access);  // the access rights, checked by writes
  mr->lkey = n.nextKey++;
  mr->rkey = n.nextKey++;
  n.mrs[mr->lkey] = mr;
  n.mrs[mr->rkey] = mr;
  if (MrShm* t = myMrShm())  // for writers in other processes
    for (uint32_t i = 0; i < kMaxMrs; ++i)
      if (t->mrs[i].rkey.load() == 0) {
        t->mrs[i].addr = reinterpret_cast<uintptr_t>(addr);
        t->mrs[i].len = len;
        t->mrs[i].access = static_cast<uint32_t>(access);
        t->mrs[i].dev = static_cast<uint32_t>(devIndex(pd->context));
        t->mrs[i].nalloc = 0;
        const auto a = reinterpret_cast<uintptr_t>(addr);
        // Only a range others may write needs its allocations published.
        if ((access & IBV_ACCESS_REMOTE_WRITE) && mayBeDevice(a, len)) exportDevice(a, len, t->mrs[i]);
        t->mrs[i].rkey.store(mr->rkey, std::memory_order_release);
        break;
      }
  return mr;
}
int deregMr(ibv_mr* mr) {
  Nic& n = nic();
  std::lock_guard<std::mutex> g(n.mu);
  n.mrs.erase(mr->lkey);
  n.mrs.erase(mr->rkey);
  if (MrShm* t = myMrShm())
    for (uint32_t i = 0; i < kMaxMrs; ++i)
      if (t->mrs[i].rkey.load() == mr->rkey) t->mrs[i].rkey.store(0);
  delete mr;
  return 0;
}
ibv_cq* createCq(ibv_context* c, int, void*, ibv_comp_channel*, int) {
  auto* cq = new SoftCq;
  cq->cq.context = c;
  return &cq->cq;
}
int destroyCq(ibv_cq* cq) {
  Nic& n = nic();
  std::lock_guard<std::mutex> g(n.mu);
  delete reinterpret_cast<SoftCq*>(cq);
  return 0;
}
ibv_qp* createQp(ibv_pd* pd, ibv_qp_init_attr* ia) {
  if (ia->qp_type != IBV_QPT_RC) return nullptr;
  Nic& n = nic();
  std::lock_guard<std::mutex> g(n.mu);
  auto* q = new SoftQp;
  q->qp.context = pd->context;
  q->qp.pd = pd;
  q->qp.send_cq = ia->send_cq;
  q->qp.recv_cq = ia->recv_cq;
  q->qp.qp_type = IBV_QPT_RC;
  q->qp.state = IBV_QPS_RESET;
  q->dev = devIndex(pd->context);
  // A number no QP of this machine has: its segment is created exclusively.
  for (int tries = 0; !q->shm && tries < 64; ++tries) {
    q->qp.qp_num = 0x100 + n.rng() % 0xfffe00;
    if (!n.qps.count(q->qp.qp_num)) q->shm = createQpShm(q->qp.qp_num);
  }
  if (!q->shm) {
    delete q;
    errno = ENOSPC;
    return nullptr;
  }
  q->shm->dev = static_cast<uint32_t>(q->dev);
  n.qps[q->qp.qp_num] = q;
  return &q->qp;
}
int modifyQp(ibv_qp* qp, ibv_qp_attr* a, int mask) {
  Nic& n = nic();
  std::lock_guard<std::mutex> g(n.mu);
  auto it = n.qps.find(qp->qp_num);
  if (it == n.qps.end()) return EINVAL;
  if (mask & IBV_QP_DEST_QPN) it->second->dest = a->dest_qp_num;
  if (mask & IBV_QP_PORT) it->second->port = a->port_num;
  if (mask & IBV_QP_TIMEOUT) it->second->timeout = a->timeout;
  if (mask & IBV_QP_RETRY_CNT) it->second->retries = a->retry_cnt;
  if (mask & IBV_QP_STATE) qp->state = a->qp_state;
  pump(n);
  return 0;
}
int destroyQp(ibv_qp* qp) {
  Nic& n = nic();
  std::lock_guard<std::mutex> g(n.mu);
  auto it = n.qps.find(qp->qp_num);
  if (it == n.qps.end()) return EINVAL;
  destroyQpShm(qp->qp_num, it->second->shm);
  delete it->second;
  n.qps.erase(it);
  return 0;
}
const char* wcStatusStr(ibv_wc_status s) {
  switch (s) {
    case IBV_WC_SUCCESS:
      return "success";
    case IBV_WC_LOC_PROT_ERR:
      return "local protection error";
    case IBV_WC_WR_FLUSH_ERR:
      return "Work Request Flushed Error";
    case IBV_WC_REM_ACCESS_ERR:
      return "remote access error";
    case IBV_WC_REM_OP_ERR:
      return "remote operation error (softnic: failed on request)";
    case IBV_WC_RETRY_EXC_ERR:
      return "transport retry counter exceeded";
    case IBV_WC_REM_INV_REQ_ERR:
      return "remote invalid request error";
    case IBV_WC_LOC_QP_OP_ERR:
      return "local QP operation error";
    default:
      return "softnic error";
  }
}
int getAsyncEvent(ibv_context*, ibv_async_event*) { return -1; }
void ackAsyncEvent(ibv_async_event*) {}
const char* eventTypeStr(ibv_event_type) { return "softnic event"; }

}  // namespace

const IbvApi* api() {
  static const IbvApi table = [] {
    IbvApi a{};
    a.get_device_list = &getDeviceList;
    a.free_device_list = &freeDeviceList;
    a.get_device_name = &getDeviceName;
    a.open_device = &openDevice;
    a.close_device = &closeDevice;
    a.query_device = &queryDevice;
    a.query_port_compat = &queryPortCompat;
    a.query_gid = &queryGid;
    a.alloc_pd = &allocPd;
    a.dealloc_pd = &deallocPd;
    a.reg_mr = &regMr;
    a.reg_dmabuf_mr = nullptr;  // device memory is reached by its pointer (cudaMemcpy)
    a.dereg_mr = &deregMr;
    a.create_cq = &createCq;
    a.destroy_cq = &destroyCq;
    a.create_qp = &createQp;
    a.modify_qp = &modifyQp;
    a.destroy_qp = &destroyQp;
    a.wc_status_str = &wcStatusStr;
    a.get_async_event = &getAsyncEvent;
    a.ack_async_event = &ackAsyncEvent;
    a.event_type_str = &eventTypeStr;
    return a;
  }();
  return &table;
}

}  // namespace gdr::transport::ib::softnic

#include "transport/ib/softnic.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/log.h"
#include "core/memory_kind.h"
#include "core/params.h"
#include "transport/ib/gpu_copy.h"
#include "transport/ib/softnic_device.h"
#include "transport/ib/softnic_shm.h"

#if GDR_HAVE_CUDA
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#endif

namespace gdr::transport::ib::softnic {

namespace {

using Clock = std::chrono::steady_clock;

struct SoftCq {
  ibv_cq cq{};
  std::deque<ibv_wc> wcs;
};

struct Write {
  uint64_t wrId;
  bool signaled, withImm, fail;
  uint32_t imm;
  uint64_t raddr;
  uint32_t rkey;
  std::vector<ibv_sge> sge;
  Clock::time_point notBefore;
  Clock::time_point firstTry{};  // when it first found no peer to answer
};

struct SoftQp {
  ibv_qp qp{};
  uint32_t dest = 0;
  std::deque<uint64_t> recvs;  // posted receives' wr_ids
  std::deque<Write> sq;
  bool held = false;
  uint8_t port = 1;                   // IBV_QP_PORT
  uint8_t timeout = 14, retries = 7;  // IBV_QP_TIMEOUT, IBV_QP_RETRY_CNT
  QpShm* shm = nullptr;               // what other processes see of this QP
};

// One lock for the whole device: the endpoints of a process may be driven
// by several progress threads, and a write touches two QPs and two CQs.
struct Nic {
  std::mutex mu;
  std::map<uint32_t, SoftQp*> qps;
  std::map<uint32_t, ibv_mr*> mrs;  // by lkey and by rkey (distinct numbers)
  uint32_t nextKey = 0x1000;
  std::mt19937 rng{std::random_device{}() ^ static_cast<uint32_t>(getpid())};
  uint64_t posted = 0, failAt = 0, done = 0, bytes = 0;
  int ports = 1;
  uint32_t portsDown = 0;           // bit p: port p is down
  uint64_t writes = 0, downAt = 0;  // GDR_SOFTNIC_PORT_DOWN: port downPort at write downAt
  uint8_t downPort = 0;
  double bytesPerUs = 0;              // GDR_SOFTNIC_PORT_MBPS per port (0: no limit)
  Clock::time_point busyUntil[9]{};   // per port: when its last scheduled write is through
  ibv_device dev{};
  ibv_device* list[2] = {&dev, nullptr};
};

Nic& nic() {
  static Nic* n = [] {
    auto* x = new Nic;  // never destroyed: endpoints may outlive static destructors
    std::strncpy(x->dev.name, "softnic0", sizeof(x->dev.name) - 1);
    int64_t f = param::getInt("GDR_SOFTNIC_FAIL_WRITE");
    if (f > 0) x->failAt = static_cast<uint64_t>(f);
    x->ports = static_cast<int>(std::clamp<int64_t>(param::getInt("GDR_SOFTNIC_PORTS"), 1, 8));
    x->bytesPerUs = static_cast<double>(std::max<int64_t>(0, param::getInt("GDR_SOFTNIC_PORT_MBPS")));
    const std::string down = param::getString("GDR_SOFTNIC_PORT_DOWN");
    unsigned port = 0;
    unsigned long long at = 0;
    if (!down.empty()) {
      if (std::sscanf(down.c_str(), "%u:%llu", &port, &at) != 2 || port < 1 ||
          port > static_cast<unsigned>(x->ports) || at < 1)
        GDR_WARN(kNet,
                 "GDR_SOFTNIC_PORT_DOWN=%s is not PORT:N (a port of GDR_SOFTNIC_PORTS=%d, "
                 "N >= 1): ignored",
                 down.c_str(), x->ports);
      else
        x->downPort = static_cast<uint8_t>(port), x->downAt = at;
    }
    return x;
  }();
  return *n;
}

bool inside(const ibv_mr* mr, uint64_t addr, uint64_t len) {
  const auto base = reinterpret_cast<uintptr_t>(mr->addr);
  return addr >= base && addr + len <= base + mr->length && addr + len >= addr;
}

void complete(SoftCq* cq, uint64_t wrId, ibv_wc_status st, ibv_wc_opcode op, uint32_t qpn) {
  ibv_wc wc{};
  wc.wr_id = wrId;
  wc.status = st;
  wc.opcode = op;
  wc.qp_num = qpn;
  cq->wcs.push_back(wc);
}

// A write to a QP of another process: its MR table checks the key, the
// kernel copies (process_vm_writev), the immediate goes to the QP's inbox.
// A write whose peer QP is gone: like a NIC without ACKs, it retries for
// retry_cnt + 1 local ACK timeouts (4.096 us * 2^timeout each), then fails
// with IBV_WC_RETRY_EXC_ERR. False while it still waits.
// Completes `w` with an error and moves its QP to the error state.
bool errorOut(SoftQp& q, const Write& w, ibv_wc_status st) {
  complete(reinterpret_cast<SoftCq*>(q.qp.send_cq), w.wrId, st, IBV_WC_RDMA_WRITE, q.qp.qp_num);
  q.qp.state = IBV_QPS_ERR;
  if (q.shm) q.shm->error.store(1);
  return true;
}

bool peerGone(SoftQp& q, Write& w) {
  const auto now = Clock::now();
  if (w.firstTry == Clock::time_point{}) w.firstTry = now;
  const double us = 4.096 * static_cast<double>(1ull << q.timeout) * (q.retries + 1);
  return now - w.firstTry >= std::chrono::microseconds(static_cast<int64_t>(us));
}

bool executeRemote(Nic& n, SoftQp& q, Write& w, uint64_t total) {
  auto fail = [&](ibv_wc_status st) { return errorOut(q, w, st); };
  QpShm* rq = openQpShm(q.dest);
  if (!rq || rq->error.load() || (kill(rq->pid, 0) != 0 && errno == ESRCH))
    return peerGone(q, w) && fail(IBV_WC_RETRY_EXC_ERR);
  MrShm* rm = peerMrShm(rq->pid);
  const MrShm::Mr* mr = nullptr;
  for (uint32_t i = 0; rm && i < kMaxMrs && !mr; ++i)
    if (rm->mrs[i].rkey.load(std::memory_order_acquire) == w.rkey) mr = &rm->mrs[i];
  if (!mr || w.raddr < mr->addr || w.raddr + total > mr->addr + mr->len ||
      !(mr->access & IBV_ACCESS_REMOTE_WRITE))
    return fail(IBV_WC_REM_ACCESS_ERR);
  if (w.withImm && rq->recvPosted.load(std::memory_order_acquire) == rq->recvTaken.load())
    return false;  // no receive posted: retry later, as after an RNR NAK
  const void* src[8];
  size_t len[8];
  int k = 0;
  bool fromDevice = false;
  for (const ibv_sge& s : w.sge)
    if (s.length && k < 8) {
      src[k] = reinterpret_cast<const void*>(s.addr);
      fromDevice |= isDevice(src[k]);
      len[k++] = s.length;
    }
  try {
    if (total && mr->nalloc) {  // into the peer's GPU memory: CUDA IPC
      char* dst = deviceTarget(rq->pid, *mr, w.raddr, total);
      if (!dst) return fail(IBV_WC_REM_ACCESS_ERR);
      for (int i = 0; i < k; ++i) {
        gpuCopy(dst, src[i], len[i], "softnic0 (CUDA IPC write)");
        dst += len[i];
      }
    } else if (total) {
      std::vector<char> bounce;  // a device source: the kernel's copy reads host memory only
      if (fromDevice) {
        bounce.resize(total);
        size_t off = 0;
        for (int i = 0; i < k; ++i) {
          copyBytes(bounce.data() + off, src[i], len[i]);
          off += len[i];
        }
        src[0] = bounce.data();
        len[0] = total;
        k = 1;
      }
      if (!writeRemote(rq->pid, w.raddr, src, len, k)) {
        if (errno == ESRCH) return peerGone(q, w) && fail(IBV_WC_RETRY_EXC_ERR);
        return fail(IBV_WC_REM_ACCESS_ERR);
      }
    }
  } catch (const std::exception& e) {
    GDR_WARN(kNet, "softnic0: write on QP %u: %s", q.qp.qp_num, e.what());
    return fail(IBV_WC_REM_ACCESS_ERR);
  }
  ++n.done;
  n.bytes += total;
  if (w.withImm) {
    rq->recvTaken.fetch_add(1);
    const uint64_t t = rq->tail.load();
    rq->inbox[t % kInbox] = {w.imm, static_cast<uint32_t>(total)};
    rq->tail.store(t + 1, std::memory_order_release);
  }
  // The QP went down meanwhile (portDown): its owner may have stopped
  // taking immediates before this one, so the write counts as lost (the
  // sender resends it; a copy that did land is a duplicate the receiver
  // ignores). Paired with the fence in portDownLocked.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (rq->error.load()) return peerGone(q, w) && fail(IBV_WC_RETRY_EXC_ERR);
  if (w.signaled)
    complete(reinterpret_cast<SoftCq*>(q.qp.send_cq), w.wrId, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
             q.qp.qp_num);
  return true;
}

// Immediates other processes left in the inboxes of this CQ's QPs become
// receive completions.
void drainInboxes(Nic& n, SoftCq* c) {
  for (auto& [qpn, q] : n.qps) {
    if (!q->shm || reinterpret_cast<SoftCq*>(q->qp.recv_cq) != c) continue;
    const uint64_t tail = q->shm->tail.load(std::memory_order_acquire);
    for (; q->shm->head < tail && !q->recvs.empty(); ++q->shm->head) {
      const QpShm::Entry e = q->shm->inbox[q->shm->head % kInbox];
      ibv_wc wc{};
      wc.wr_id = q->recvs.front();
      q->recvs.pop_front();
      wc.status = IBV_WC_SUCCESS;
      wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
      wc.wc_flags = IBV_WC_WITH_IMM;
      wc.imm_data = e.imm;
      wc.byte_len = e.bytes;
      wc.qp_num = qpn;
      c->wcs.push_back(wc);
    }
  }
}

// Carries out one write; false when it must wait (no receive posted for its
// immediate: a real NIC would retry after an RNR NAK).
bool execute(Nic& n, SoftQp& q, Write& w) {
  auto fail = [&](ibv_wc_status st) { return errorOut(q, w, st); };
  if (w.fail) {
    GDR_INFO(kNet, "softnic0: write on QP %u failed on request", q.qp.qp_num);
    return fail(IBV_WC_REM_OP_ERR);
  }
  uint64_t total = 0;
  for (const ibv_sge& s : w.sge) {
    auto it = n.mrs.find(s.lkey);
    if (it == n.mrs.end() || !inside(it->second, s.addr, s.length))
      return fail(IBV_WC_LOC_PROT_ERR);
    total += s.length;
  }
  auto d = n.qps.find(q.dest);
  if (d == n.qps.end()) return executeRemote(n, q, w, total);
  if (d->second->qp.state == IBV_QPS_ERR) return peerGone(q, w) && fail(IBV_WC_RETRY_EXC_ERR);
  SoftQp& peer = *d->second;
  auto r = n.mrs.find(w.rkey);
  if (r == n.mrs.end() || r->second->rkey != w.rkey || !inside(r->second, w.raddr, total) ||
      !(static_cast<unsigned>(r->second->handle) & IBV_ACCESS_REMOTE_WRITE))
    return fail(IBV_WC_REM_ACCESS_ERR);
  if (w.withImm && peer.recvs.empty()) return false;
  char* dst = reinterpret_cast<char*>(w.raddr);
  try {
    for (const ibv_sge& s : w.sge) {
      if (s.length) copyBytes(dst, reinterpret_cast<const void*>(s.addr), s.length);
      dst += s.length;
    }
  } catch (const std::exception& e) {
    GDR_WARN(kNet, "softnic0: write on QP %u: %s", q.qp.qp_num, e.what());
    return fail(IBV_WC_REM_ACCESS_ERR);
  }
  ++n.done;
  n.bytes += total;
  if (w.withImm) {
    ibv_wc wc{};
    wc.wr_id = peer.recvs.front();
    peer.recvs.pop_front();
    wc.status = IBV_WC_SUCCESS;
    wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
    wc.wc_flags = IBV_WC_WITH_IMM;
    wc.imm_data = w.imm;
    wc.byte_len = static_cast<uint32_t>(total);
    wc.qp_num = peer.qp.qp_num;
    reinterpret_cast<SoftCq*>(peer.qp.recv_cq)->wcs.push_back(wc);
  }
  if (w.signaled)
    complete(reinterpret_cast<SoftCq*>(q.qp.send_cq), w.wrId, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
             q.qp.qp_num);
  return true;
}

// Moves every QP's queue as far as it goes. Caller holds the lock.
void pump(Nic& n) {
  const auto now = Clock::now();
  for (auto& [qpn, q] : n.qps) {
    if (q->held || q->qp.state < IBV_QPS_RTS) continue;
    while (!q->sq.empty()) {
      Write& w = q->sq.front();
      if (q->qp.state == IBV_QPS_ERR) {
        complete(reinterpret_cast<SoftCq*>(q->qp.send_cq), w.wrId, IBV_WC_WR_FLUSH_ERR,
                 IBV_WC_RDMA_WRITE, qpn);
      } else if (w.notBefore > now || !execute(n, *q, w)) {
        break;
      }
      q->sq.pop_front();
    }
  }
}

// A port going down: every QP bound to it moves to the error state (what
// other processes see of it too, so their writes to it stop being answered);
// its oldest write completes with retries exceeded, the rest of its send
// queue and its posted receives flush, as on hardware. Caller holds the lock.
void portDownLocked(Nic& n, uint8_t port) {
  if (n.portsDown & (1u << port)) return;
  n.portsDown |= 1u << port;
  int qps = 0;
  for (auto& [qpn, q] : n.qps) {
    if (q->port != port || q->qp.state == IBV_QPS_ERR) continue;
    ++qps;
    // Immediates other processes wrote before the port went down land;
    // a writer that finds the flag after its write reports it lost.
    if (q->shm) {
      q->shm->error.store(1);
      std::atomic_thread_fence(std::memory_order_seq_cst);
      drainInboxes(n, reinterpret_cast<SoftCq*>(q->qp.recv_cq));
    }
    auto* scq = reinterpret_cast<SoftCq*>(q->qp.send_cq);
    bool first = true;
    for (const Write& w : q->sq) {
      complete(scq, w.wrId, first ? IBV_WC_RETRY_EXC_ERR : IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_WRITE,
               qpn);
      first = false;
    }
    q->sq.clear();
    for (uint64_t id : q->recvs)
      complete(reinterpret_cast<SoftCq*>(q->qp.recv_cq), id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, qpn);
    q->recvs.clear();
    q->qp.state = IBV_QPS_ERR;
    if (q->shm) q->shm->error.store(1);
  }
  GDR_INFO(kNet, "softnic0: port %u down (on request): %d QP(s) in error", port, qps);
}

// --- the verbs entry points -------------------------------------------------

int postSend(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
  Nic& n = nic();
  std::lock_guard<std::mutex> g(n.mu);
  auto it = n.qps.find(qp->qp_num);
  if (it == n.qps.end()) return EINVAL;
  static const int64_t delayUs = param::getInt("GDR_SOFTNIC_DELAY_US");
  for (; wr; wr = wr->next) {
    if (n.downAt && ++n.writes == n.downAt) portDownLocked(n, n.downPort);
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
    if (w.fail) n.failAt = 0;
    w.notBefore = Clock::now() + std::chrono::microseconds(delayUs > 0 ? delayUs : 0);
    if (n.bytesPerUs > 0) {  // the port's link: writes go through it one after another
      uint64_t total = 0;
      for (const ibv_sge& s : w.sge) total += s.length;
      Clock::time_point& busy = n.busyUntil[it->second->port];
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

ibv_device** getDeviceList(int* num) {
  if (num) *num = 1;
  return nic().list;
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
  GDR_INFO(kNet, "softnic0: opened the software NIC (a test device, not an RDMA NIC)");
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
int queryPortCompat(ibv_context*, uint8_t port, _compat_ibv_port_attr* out) {
  Nic& n = nic();
  std::lock_guard<std::mutex> g(n.mu);
  if (port < 1 || port > n.ports) return EINVAL;
  // IbvApi::queryPort hands over a whole ibv_port_attr.
  auto* a = reinterpret_cast<ibv_port_attr*>(out);
  a->state = n.portsDown & (1u << port) ? IBV_PORT_DOWN : IBV_PORT_ACTIVE;
  a->max_mtu = a->active_mtu = IBV_MTU_4096;
  a->lid = port;
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

void failWrite(uint64_t k) {
  Nic& n = nic();
  std::lock_guard<std::mutex> g(n.mu);
  n.posted = 0;
  n.failAt = k;
}

void portDown(uint8_t port) {
  Nic& n = nic();
  std::lock_guard<std::mutex> g(n.mu);
  portDownLocked(n, port);
}

void holdQp(uint32_t qpn, bool hold) {
  Nic& n = nic();
  std::lock_guard<std::mutex> g(n.mu);
  auto it = n.qps.find(qpn);
  if (it != n.qps.end()) it->second->held = hold;
  if (!hold) pump(n);
}

uint64_t writesDone() {
  Nic& n = nic();
  std::lock_guard<std::mutex> g(n.mu);
  return n.done;
}

uint64_t bytesMoved() {
  Nic& n = nic();
  std::lock_guard<std::mutex> g(n.mu);
  return n.bytes;
}

}  // namespace gdr::transport::ib::softnic

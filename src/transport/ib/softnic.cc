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
#include "transport/ib/softnic_nic.h"
#include "transport/ib/softnic_shm.h"

#if GDR_HAVE_CUDA
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#endif

namespace gdr::transport::ib::softnic {

namespace {

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

// A write carried out: its completion, unless its ACKs are to be lost.
bool landed(Nic& n, SoftQp& q, const Write& w) {
  if (w.ackLost) {
    GDR_INFO(kNet, "%s: write on QP %u landed, its completion fails on request",
             n.devs[q.dev].name, q.qp.qp_num);
    return errorOut(q, w, IBV_WC_RETRY_EXC_ERR);
  }
  if (w.signaled)
    complete(reinterpret_cast<SoftCq*>(q.qp.send_cq), w.wrId, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
             q.qp.qp_num);
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
  // A key of another device of the peer's is no key on this one.
  if (!mr || mr->dev != rq->dev || w.raddr < mr->addr || w.raddr + total > mr->addr + mr->len ||
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
        gpuCopy(dst, src[i], len[i], "the software NIC (CUDA IPC write)");
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
    GDR_WARN(kNet, "%s: write on QP %u: %s", n.devs[q.dev].name, q.qp.qp_num, e.what());
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
  return landed(n, q, w);
}

}  // namespace

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

// The responder of a rejected request moves its QP to the error state: its
// posted receives flush now, its own queued writes as pump() reaches them.
void responderError(SoftQp& r) {
  for (uint64_t id : r.recvs)
    complete(reinterpret_cast<SoftCq*>(r.qp.recv_cq), id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV,
             r.qp.qp_num);
  r.recvs.clear();
  r.qp.state = IBV_QPS_ERR;
  if (r.shm) r.shm->error.store(1);
}

// Carries out one write; false when it must wait (no receive posted for its
// immediate: a real NIC would retry after an RNR NAK).
bool execute(Nic& n, SoftQp& q, Write& w) {
  auto fail = [&](ibv_wc_status st) { return errorOut(q, w, st); };
  if (w.fail) {
    GDR_INFO(kNet, "%s: write on QP %u failed on request", n.devs[q.dev].name, q.qp.qp_num);
    auto d = n.qps.find(q.dest);
    if (w.failStatus == IBV_WC_REM_INV_REQ_ERR && d != n.qps.end()) responderError(*d->second);
    return fail(w.failStatus);
  }
  uint64_t total = 0;
  for (const ibv_sge& s : w.sge) {
    auto it = n.mrs.find(s.lkey);
    if (it == n.mrs.end() || devIndex(it->second->context) != q.dev ||
        !inside(it->second, s.addr, s.length))
      return fail(IBV_WC_LOC_PROT_ERR);
    total += s.length;
  }
  auto d = n.qps.find(q.dest);
  if (d == n.qps.end()) return executeRemote(n, q, w, total);
  if (d->second->qp.state == IBV_QPS_ERR) return peerGone(q, w) && fail(IBV_WC_RETRY_EXC_ERR);
  SoftQp& peer = *d->second;
  auto r = n.mrs.find(w.rkey);
  if (r == n.mrs.end() || r->second->rkey != w.rkey || devIndex(r->second->context) != peer.dev ||
      !inside(r->second, w.raddr, total) ||
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
    GDR_WARN(kNet, "%s: write on QP %u: %s", n.devs[q.dev].name, q.qp.qp_num, e.what());
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
  return landed(n, q, w);
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
// its oldest write completes with `first` (retries exceeded; rxe, whose
// link went down, says local QP operation error), the rest of its send
// queue and its posted receives flush, as on hardware. Caller holds the lock.
void portDownLocked(Nic& n, int dev, uint8_t port, ibv_wc_status firstStatus) {
  if (n.portsDown[dev] & (1u << port)) return;
  n.portsDown[dev] |= 1u << port;
  int qps = 0;
  for (auto& [qpn, q] : n.qps) {
    if (q->dev != dev || q->port != port || q->qp.state == IBV_QPS_ERR) continue;
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
      complete(scq, w.wrId, first ? firstStatus : IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_WRITE, qpn);
      first = false;
    }
    q->sq.clear();
    for (uint64_t id : q->recvs)
      complete(reinterpret_cast<SoftCq*>(q->qp.recv_cq), id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, qpn);
    q->recvs.clear();
    q->qp.state = IBV_QPS_ERR;
    if (q->shm) q->shm->error.store(1);
  }
  GDR_INFO(kNet, "%s: port %u down (on request): %d QP(s) in error", n.devs[dev].name, port, qps);
}

Nic& nic() {
  static Nic* n = [] {
    auto* x = new Nic;  // never destroyed: endpoints may outlive static destructors
    for (int d = 0; d < kMaxDevices; ++d)
      std::snprintf(x->devs[d].name, sizeof(x->devs[d].name), "softnic%d", d);
    int64_t f = param::getInt("GDR_SOFTNIC_FAIL_WRITE");
    if (f > 0) x->failAt = static_cast<uint64_t>(f);
    int64_t l = param::getInt("GDR_SOFTNIC_LOSE_ACK");
    if (l > 0) x->ackLostAt = static_cast<uint64_t>(l);
    x->ports = static_cast<int>(std::clamp<int64_t>(param::getInt("GDR_SOFTNIC_PORTS"), 1, 8));
    x->bytesPerUs = static_cast<double>(std::max<int64_t>(0, param::getInt("GDR_SOFTNIC_PORT_MBPS")));
    const std::string down = param::getString("GDR_SOFTNIC_PORT_DOWN");
    unsigned dev = 0, port = 0;
    unsigned long long at = 0;
    if (!down.empty()) {
      const bool named = down.rfind("softnic", 0) == 0;
      const bool parsed =
          named ? std::sscanf(down.c_str(), "softnic%u:%u:%llu", &dev, &port, &at) == 3
                : std::sscanf(down.c_str(), "%u:%llu", &port, &at) == 2;
      if (!parsed || dev >= static_cast<unsigned>(kMaxDevices) || port < 1 ||
          port > static_cast<unsigned>(x->ports) || at < 1)
        GDR_WARN(kNet,
                 "GDR_SOFTNIC_PORT_DOWN=%s is not [softnicD:]PORT:N (a device of "
                 "GDR_SOFTNIC_DEVICES, a port of GDR_SOFTNIC_PORTS=%d, N >= 1): ignored",
                 down.c_str(), x->ports);
      else {
        x->downDev = static_cast<int>(dev);
        x->downPort = static_cast<uint8_t>(port);
        x->downAt = at;
      }
    }
    return x;
  }();
  return *n;
}

void failWrite(uint64_t k, ibv_wc_status status) {
  Nic& n = nic();
  std::lock_guard<std::mutex> g(n.mu);
  n.posted = 0;
  n.failAt = k;
  n.failStatus = status;
}

void loseAck(uint64_t k) {
  Nic& n = nic();
  std::lock_guard<std::mutex> g(n.mu);
  n.ackPosted = 0;
  n.ackLostAt = k;
}

void portDown(uint8_t port, int dev, ibv_wc_status first) {
  Nic& n = nic();
  std::lock_guard<std::mutex> g(n.mu);
  if (dev >= 0 && dev < kMaxDevices) portDownLocked(n, dev, port, first);
}

void portUp(uint8_t port, int dev) {
  Nic& n = nic();
  std::lock_guard<std::mutex> g(n.mu);
  if (dev >= 0 && dev < kMaxDevices) n.portsDown[dev] &= ~(1u << port);
}

int devIndex(const ibv_context* c) {
  const Nic& n = nic();
  const ptrdiff_t d = c->device - n.devs;
  return d >= 0 && d < kMaxDevices ? static_cast<int>(d) : 0;
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

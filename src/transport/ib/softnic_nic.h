// The software NIC's state, shared by its engine (softnic.cc: writes,
// completions, ports) and its verbs entry points (softnic_verbs.cc). One
// lock, Nic::mu, guards all of it.
#pragma once

#include <infiniband/verbs.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <vector>

#include "transport/ib/softnic_shm.h"

namespace gdr::transport::ib::softnic {

using Clock = std::chrono::steady_clock;

struct SoftCq {
  ibv_cq cq{};
  std::deque<ibv_wc> wcs;
};

struct Write {
  uint64_t wrId;
  bool signaled, withImm, fail;
  bool ackLost = false;      // carried out, but completes as if its ACKs were lost
  ibv_wc_status failStatus;  // when `fail`
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
  int dev = 0;                        // which of the NIC's devices (softnic<dev>) it is on
  uint8_t port = 1;                   // IBV_QP_PORT
  uint8_t timeout = 14, retries = 7;  // IBV_QP_TIMEOUT, IBV_QP_RETRY_CNT
  QpShm* shm = nullptr;               // what other processes see of this QP
};

constexpr int kMaxDevices = 4;  // GDR_SOFTNIC_DEVICES: softnic0 .. softnic3

// One lock for the whole NIC, all its devices: the endpoints of a process
// may be driven by several progress threads, and a write touches two QPs
// and two CQs. The devices share the QP and MR tables (numbers and keys are
// unique across them); a key is only good on QPs of the device that made it,
// as two HCAs' keys are.
struct Nic {
  std::mutex mu;
  std::map<uint32_t, SoftQp*> qps;
  std::map<uint32_t, ibv_mr*> mrs;  // by lkey and by rkey (distinct numbers)
  uint32_t nextKey = 0x1000;
  std::mt19937 rng{std::random_device{}() ^ static_cast<uint32_t>(getpid())};
  uint64_t posted = 0, failAt = 0, done = 0, bytes = 0;
  ibv_wc_status failStatus = IBV_WC_REM_OP_ERR;  // of the write failAt names
  uint64_t ackPosted = 0, ackLostAt = 0;         // loseAck(): counted like failAt
  int ports = 1;                         // per device
  uint32_t portsDown[kMaxDevices] = {};  // bit p: port p of that device is down
  uint64_t writes = 0, downAt = 0;  // GDR_SOFTNIC_PORT_DOWN: downDev's downPort at write downAt
  int downDev = 0;
  uint8_t downPort = 0;
  double bytesPerUs = 0;  // GDR_SOFTNIC_PORT_MBPS per port (0: no limit)
  Clock::time_point busyUntil[kMaxDevices]
                             [9]{};  // per port: when its last scheduled write is through
  ibv_device devs[kMaxDevices]{};
  ibv_device* list[kMaxDevices + 1] = {};
};

// Which device a context, PD or MR belongs to (its index, 0 = softnic0).
int devIndex(const ibv_context* c);

// The NIC of this process (made on first use, never destroyed).
Nic& nic();
// Moves every QP's queue as far as it goes. The caller holds the lock.
void pump(Nic& n);
// Immediates other processes left in the inboxes of this CQ's QPs become
// receive completions. The caller holds the lock.
void drainInboxes(Nic& n, SoftCq* c);
// A port of device `dev` going down (see softnic.cc). The caller holds the lock.
void portDownLocked(Nic& n, int dev, uint8_t port, ibv_wc_status first = IBV_WC_RETRY_EXC_ERR);

}  // namespace gdr::transport::ib::softnic

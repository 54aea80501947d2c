#include "dispatch/route.h"

#include <cstring>

#include "core/cuda.h"
#include "dispatch/group.h"
#include "paths/broadcast_from.h"
#include "paths/device.h"
#include "paths/direct/path.h"
#include "paths/host.h"
#include "paths/one_message.h"
#include "paths/p2p.h"
#include "paths/pre_mul.h"
#include "paths/staged/path.h"

namespace gdr::dispatch {

namespace {

// Host work goes after the staged device work before it (see route.h).
void beforeHostWork(Communicator& comm) {
  paths::staged::waitIdle(comm);
  paths::direct::waitIdle(comm);
}

// Inlined into runCollective: it runs on every call (a call of its own cost
// ~20 instructions per small collective, callgrind).
__attribute__((always_inline)) inline void runOnPath(Communicator& comm, const CollCall& call,
                                                     bool onDevice, gdrStream_t stream) {
  if (onDevice) {
    ScopedDevice d(comm.device());
    if (paths::direct::chosen(comm))
      paths::direct::runCollective(comm, paths::rootCopiedFirst(call, true, stream), stream);
    else
      paths::runDeviceCollective(comm, call, stream);  // copies as its path needs
  } else {
    beforeHostWork(comm);
    if (__builtin_expect(paths::isBroadcastFrom(call), 0) && comm.size() > 1) {
      const CollCall c = paths::rootCopiedFirst(call, false, stream);  // one rank: its own copy
      if (!paths::tryOneMessage(comm, c)) paths::runHostCollective(comm, c);
      return;
    }
    if (!paths::tryOneMessage(comm, call)) paths::runHostCollective(comm, call);
  }
}

// A PreMulSum: every path sums the scaled copy, which lives until the path
// has taken the call (device work: freed in stream order after it).
__attribute__((noinline)) void runPreMulSum(Communicator& comm, const CollCall& call, bool onDevice,
                                            gdrStream_t stream) {
  int op;
  std::memcpy(&op, &call.op, sizeof(op));
  const PreMul pm = comm.preMulOps().resolve(op, call.type);
  ScopedDevice d(comm.device());
  paths::PreMulInput scaled(call, pm, comm.size(), onDevice, stream);
  runOnPath(comm, scaled.call(), onDevice, stream);
}

}  // namespace

void runCollective(Communicator& comm, const CollCall& call, bool onDevice, gdrStream_t stream) {
  if (__builtin_expect(isPreMulSum(call), 0)) return runPreMulSum(comm, call, onDevice, stream);
  runOnPath(comm, call, onDevice, stream);
}

void runP2PBatch(Communicator& comm, std::vector<P2PCall>& host, std::vector<P2PCall>& device) {
  if (!device.empty()) {
    ScopedDevice d(comm.device());
    if (paths::direct::chosen(comm))
      paths::direct::runP2P(comm, device);
    else
      paths::deviceP2PBatch(comm, device);
    device.clear();
  }
  if (!host.empty()) {
    beforeHostWork(comm);
    paths::p2pRunBatch(comm, host);
    host.clear();
  }
}

void collective(Communicator& comm, const CollCall& call, bool onDevice, gdrStream_t stream) {
  if (inGroup())
    groupAddColl(comm, call, onDevice, stream);
  else
    runCollective(comm, call, onDevice, stream);
}

void p2p(Communicator& comm, const P2PCall& call, bool onDevice) {
  if (inGroup()) {
    groupAddP2P(comm, call, onDevice);
  } else if (onDevice) {
    ScopedDevice d(comm.device());
    if (paths::direct::chosen(comm))
      paths::direct::runP2P(comm, {call});
    else if (call.isSend)
      paths::deviceSend(comm, call.sendBuf, call.count, call.type, call.peer, call.stream);
    else
      paths::deviceRecv(comm, call.recvBuf, call.count, call.type, call.peer, call.stream);
  } else {
    beforeHostWork(comm);
    if (call.isSend)
      paths::p2pSend(comm, call.sendBuf, call.count, call.type, call.peer);
    else
      paths::p2pRecv(comm, call.recvBuf, call.count, call.type, call.peer);
  }
}

}  // namespace gdr::dispatch

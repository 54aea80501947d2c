#include "dispatch/group.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "core/cuda.h"
#include "core/error.h"
#include "core/lib_thread.h"
#include "core/log.h"
#include "dispatch/route.h"
#include "paths/device.h"

namespace gdr::dispatch {

namespace {

// One queued call. A collective keeps its own copy of all-to-all-v's arrays.
struct GroupOp {
  bool isColl = false;
  bool onDevice = false;
  CollCall call{coll::CollKind::Barrier};
  gdrStream_t stream = nullptr;
  std::vector<size_t> vee[4];  // send counts, send displs, recv counts, recv displs
  P2PCall p2p;
};

// One communicator's share of a group.
struct Share {
  CommRef comm;           // held until the group has run (or the communicator is destroyed)
  BootstrapFactory init;  // set for a pending init
  std::vector<GroupOp> ops;
};

struct GroupState {
  std::vector<Share> shares;  // in order of first appearance
  gdrResult_t initError = gdrSuccess;
  std::string initErrorText;
};
thread_local GroupState tGroup;
// The nesting depth, apart from tGroup: every call outside a group asks it,
// and a thread_local with a constructor is behind an initialisation check.
__thread int tGroupDepth = 0;

Share& shareOf(Communicator* comm) {
  for (Share& s : tGroup.shares)
    if (s.comm.get() == comm) return s;
  tGroup.shares.push_back(Share{CommRef(comm), nullptr, {}});
  return tGroup.shares.back();
}

// Points a deferred all-to-all-v at its own copies of the count arrays
// (done when it runs: the op may have moved since it was queued).
const CollCall& callOf(GroupOp& op) {
  if (op.call.kind == coll::CollKind::AllToAllv) {
    const size_t** ptr[4] = {&op.call.sendCounts, &op.call.sendDispls, &op.call.recvCounts,
                             &op.call.recvDispls};
    for (int k = 0; k < 4; ++k) *ptr[k] = op.vee[k].empty() ? nullptr : op.vee[k].data();
  }
  return op.call;
}

// A share's calls in order, each through the router (so host work waits for
// the staged device work before it, as outside a group). The send/recv
// between two collectives form one batch.
void runOps(Communicator& comm, std::vector<GroupOp>& ops) {
  std::vector<P2PCall> host, dev;
  for (GroupOp& op : ops) {
    if (!op.isColl) {
      (op.onDevice ? dev : host).push_back(op.p2p);
      continue;
    }
    runP2PBatch(comm, host, dev);
    comm.throwIfFailed();
    runCollective(comm, callOf(op), op.onDevice, op.stream);
  }
  runP2PBatch(comm, host, dev);
}

struct Outcome {
  gdrResult_t code = gdrSuccess;
  std::string text;
};

// A share: the pending init (if any), then the queued calls in order.
// Errors are caught here, recorded on the communicator, and returned.
Outcome runShare(Share& s) {
  Outcome o;
  try {
    if (s.init) {
      try {
        s.comm->start(s.init());
      } catch (...) {
        const ErrorReport r = reportCurrentException();
        s.comm->failStart(r.code, r.text);
        throw;
      }
    }
    runOps(*s.comm, s.ops);
    return o;
  } catch (...) {
    const ErrorReport r = reportCurrentException();
    o.code = r.code;
    o.text = r.text;
  }
  s.comm->setLastError("gdrGroupEnd: " + o.text);
  return o;
}

// Device work that only enqueues kernels (cuda_ipc ready on every share):
// worker threads would buy nothing.
bool allAsyncDevice(const std::vector<Share>& shares) {
  for (const Share& s : shares) {
    if (s.init || !paths::deviceOpsAsync(*s.comm)) return false;
    for (const GroupOp& op : s.ops)
      if (!op.onDevice) return false;
  }
  return true;
}

std::vector<Outcome> runShares(std::vector<Share>& shares) {
  std::vector<Outcome> out(shares.size());
  if ((shares.size() == 1 && !shares[0].init) || allAsyncDevice(shares)) {
    for (size_t i = 0; i < shares.size(); ++i) out[i] = runShare(shares[i]);
    return out;
  }
  std::vector<std::thread> workers;
  workers.reserve(shares.size());
  for (size_t i = 0; i < shares.size(); ++i)
    workers.push_back(libThread("group", [&, i] {
      Share& s = shares[i];
      log::setContext(s.comm->rank(), s.comm->device());
      try {
        setCudaDevice(s.comm->device());
      } catch (const Error& e) {
        if (s.init) s.comm->failStart(e.code(), e.what());
        out[i] = Outcome{e.code(), e.what()};
        return;
      }
      out[i] = runShare(s);
    }));
  for (auto& w : workers) w.join();
  return out;
}

}  // namespace

void groupStart() { ++tGroupDepth; }

bool inGroup() { return tGroupDepth > 0; }

void groupEnd() {
  if (tGroupDepth == 0) throw InvalidUsage("gdrGroupEnd without a matching gdrGroupStart");
  if (--tGroupDepth > 0) return;
  std::vector<Share> shares;
  shares.swap(tGroup.shares);
  const gdrResult_t initError = tGroup.initError;
  const std::string initText = tGroup.initErrorText;
  tGroup.initError = gdrSuccess;
  tGroup.initErrorText.clear();

  if (initError != gdrSuccess) {
    // The missing rank would never arrive: fail the pending inits now.
    const std::string why =
        "not created: another gdrCommInitRank in the same group failed: " + initText;
    for (Share& s : shares)
      if (s.init) s.comm->failStart(initError, why);
    shares.erase(
        std::remove_if(shares.begin(), shares.end(), [](const Share& s) { return bool(s.init); }),
        shares.end());
  }
  std::vector<Outcome> out = runShares(shares);
  if (initError != gdrSuccess)
    throw Error(initError, "a gdrCommInitRank inside the group failed: " + initText);
  // The first error is returned (and logged by the API layer); the others
  // are logged here, each once.
  size_t first = out.size();
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].code == gdrSuccess) continue;
    if (first == out.size())
      first = i;
    else
      GDR_WARN(kColl, "gdrGroupEnd: rank %d: %s", shares[i].comm->rank(), out[i].text.c_str());
  }
  if (first < out.size())
    throw Error(out[first].code,
                strprintf("rank %d: %s", shares[first].comm->rank(), out[first].text.c_str()));
}

void groupForget(Communicator* comm) {
  auto& sh = tGroup.shares;
  sh.erase(
      std::remove_if(sh.begin(), sh.end(), [&](const Share& s) { return s.comm.get() == comm; }),
      sh.end());
}

void groupAddInit(Communicator* comm, BootstrapFactory make) {
  shareOf(comm).init = std::move(make);
}

bool groupOwnsInit(const Communicator* comm) {
  for (const Share& s : tGroup.shares)
    if (s.comm.get() == comm) return bool(s.init);
  return false;
}

void groupNoteInitError(gdrResult_t code, const std::string& text) {
  if (tGroup.initError != gdrSuccess) return;
  tGroup.initError = code;
  tGroup.initErrorText = text;
}

void groupAddColl(Communicator& comm, const CollCall& call, bool onDevice, gdrStream_t stream) {
  Share& s = shareOf(&comm);
  s.ops.emplace_back();
  GroupOp& op = s.ops.back();
  op.isColl = true;
  op.onDevice = onDevice;
  op.call = call;
  op.stream = stream;
  if (call.kind == coll::CollKind::AllToAllv) {
    const size_t n = static_cast<size_t>(comm.size());
    const size_t* src[4] = {call.sendCounts, call.sendDispls, call.recvCounts, call.recvDispls};
    for (int k = 0; k < 4; ++k)
      if (src[k]) op.vee[k].assign(src[k], src[k] + n);
  }
}

void groupAddP2P(Communicator& comm, const P2PCall& req, bool onDevice) {
  Share& s = shareOf(&comm);
  s.ops.emplace_back();
  s.ops.back().onDevice = onDevice;
  s.ops.back().p2p = req;
}

}  // namespace gdr::dispatch

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

// One queued call or step. A collective keeps its own copy of all-to-all-v's
// arrays.
struct GroupOp {
  enum Kind : uint8_t { P2P, Coll, Step } kind = P2P;
  bool onDevice = false;
  CollCall call{coll::CollKind::Barrier};
  gdrStream_t stream = nullptr;
  std::vector<size_t> vee[4];  // send counts, send displs, recv counts, recv displs
  P2PCall p2p;
  std::function<void()> step;
};

// One communicator's share of a group, or a deferred member (no
// communicator yet: `wait`, then `replays` in a group of its thread's own).
struct Share {
  const void* key = nullptr;  // comm.get(), or the deferred member's key
  CommRef comm;               // held until the group has run (or the communicator is destroyed)
  BootstrapFactory init;      // set for a pending init
  std::vector<GroupOp> ops;
  std::function<void()> wait;
  std::vector<std::function<void()>> replays;
};

struct GroupState {
  std::vector<Share> shares;  // in order of first appearance
  GroupOrder order = GroupOrder::InOrder;
  gdrResult_t initError = gdrSuccess;
  std::string initErrorText;
};
thread_local GroupState tGroup;
// The nesting depth, apart from tGroup: every call outside a group asks it,
// and a thread_local with a constructor is behind an initialisation check.
__thread int tGroupDepth = 0;

Share* findShare(const void* key) {
  for (Share& s : tGroup.shares)
    if (s.key == key) return &s;
  return nullptr;
}

Share& shareOf(Communicator* comm) {
  if (Share* s = findShare(comm)) return *s;
  tGroup.shares.emplace_back();
  tGroup.shares.back().key = comm;
  tGroup.shares.back().comm = CommRef(comm);
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

// A share's calls in the group's order, each through the router (so host
// work waits for the staged device work before it, as outside a group).
// InOrder: the send/recv between two collectives (or steps) form one batch;
// CollectivesFirst: all of them form one batch after the collectives.
void runOps(Communicator& comm, std::vector<GroupOp>& ops, GroupOrder order) {
  std::vector<P2PCall> host, dev;
  for (GroupOp& op : ops) {
    if (op.kind == GroupOp::P2P) {
      (op.onDevice ? dev : host).push_back(op.p2p);
      continue;
    }
    if (order == GroupOrder::InOrder) runP2PBatch(comm, host, dev);
    comm.throwIfFailed();
    if (op.kind == GroupOp::Coll)
      runCollective(comm, callOf(op), op.onDevice, op.stream);
    else
      op.step();
  }
  runP2PBatch(comm, host, dev);
}

// A deferred member's calls, replayed once its communicator exists inside a
// group of this thread's own, which then runs them (on this thread: they
// are one communicator's). A replay that throws drops that group.
void replayDeferred(Share& s, GroupOrder order) {
  s.wait();
  if (s.replays.empty()) return;
  groupStart(order);
  try {
    for (auto& r : s.replays) r();
  } catch (...) {
    groupDiscard();
    throw;
  }
  groupEnd();
}

struct Outcome {
  gdrResult_t code = gdrSuccess;
  std::string text;
};

// A share: the pending init (if any), then the queued calls in order.
// Errors are caught here, recorded on the communicator, and returned.
Outcome runShare(Share& s, GroupOrder order) {
  Outcome o;
  try {
    if (!s.comm.get()) {
      replayDeferred(s, order);
      return o;
    }
    if (s.init) {
      try {
        s.comm->start(s.init());
      } catch (...) {
        const ErrorReport r = reportCurrentException();
        s.comm->failStart(r.code, r.text);
        throw;
      }
    }
    runOps(*s.comm, s.ops, order);
    return o;
  } catch (...) {
    const ErrorReport r = reportCurrentException();
    o.code = r.code;
    o.text = r.text;
  }
  if (s.comm.get()) s.comm->setLastError("gdrGroupEnd: " + o.text);
  return o;
}

// Device work that only enqueues kernels (cuda_ipc ready on every share):
// worker threads would buy nothing.
bool allAsyncDevice(const std::vector<Share>& shares) {
  for (const Share& s : shares) {
    if (s.init || !s.comm.get() || !paths::deviceOpsAsync(*s.comm)) return false;
    for (const GroupOp& op : s.ops)
      if (!op.onDevice || op.kind == GroupOp::Step) return false;
  }
  return true;
}

std::vector<Outcome> runShares(std::vector<Share>& shares, GroupOrder order) {
  std::vector<Outcome> out(shares.size());
  if ((shares.size() == 1 && !shares[0].init) || allAsyncDevice(shares)) {
    for (size_t i = 0; i < shares.size(); ++i) out[i] = runShare(shares[i], order);
    return out;
  }
  std::vector<std::thread> workers;
  workers.reserve(shares.size());
  for (size_t i = 0; i < shares.size(); ++i)
    workers.push_back(libThread("group", [&, i, order] {
      Share& s = shares[i];
      if (!s.comm.get()) {  // its replays set the context once the communicator exists
        out[i] = runShare(s, order);
        return;
      }
      log::setContext(s.comm->rank(), s.comm->device());
      try {
        setCudaDevice(s.comm->device());
      } catch (const Error& e) {
        if (s.init) s.comm->failStart(e.code(), e.what());
        out[i] = Outcome{e.code(), e.what()};
        return;
      }
      out[i] = runShare(s, order);
    }));
  for (auto& w : workers) w.join();
  return out;
}

}  // namespace

void groupStart(GroupOrder order) {
  if (tGroupDepth++ == 0) tGroup.order = order;
}

bool inGroup() { return tGroupDepth > 0; }

void groupEnd() {
  if (tGroupDepth == 0) throw InvalidUsage("gdrGroupEnd without a matching gdrGroupStart");
  if (--tGroupDepth > 0) return;
  std::vector<Share> shares;
  shares.swap(tGroup.shares);
  const GroupOrder order = tGroup.order;
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
  std::vector<Outcome> out = runShares(shares, order);
  if (initError != gdrSuccess)
    throw Error(initError, "a gdrCommInitRank inside the group failed: " + initText);
  // The first error is returned (and logged by the API layer); the others
  // are logged here, each once.
  // A deferred member's text names its rank already (its own group's).
  auto text = [&](size_t i) {
    return shares[i].comm.get()
               ? strprintf("rank %d: %s", shares[i].comm->rank(), out[i].text.c_str())
               : out[i].text;
  };
  size_t first = out.size();
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].code == gdrSuccess) continue;
    if (first == out.size())
      first = i;
    else
      GDR_WARN(kColl, "gdrGroupEnd: %s", text(i).c_str());
  }
  if (first < out.size()) throw Error(out[first].code, text(first));
}

void groupDiscard() {
  if (tGroupDepth == 0 || --tGroupDepth > 0) return;
  std::vector<Share> shares;
  shares.swap(tGroup.shares);
  tGroup.initError = gdrSuccess;
  tGroup.initErrorText.clear();
  for (Share& s : shares)
    if (s.init)
      s.comm->failStart(gdrInvalidUsage, "not created: its group was ended without running");
}

void groupForget(const void* key) {
  auto& sh = tGroup.shares;
  sh.erase(std::remove_if(sh.begin(), sh.end(), [&](const Share& s) { return s.key == key; }),
           sh.end());
}

void groupAddInit(Communicator* comm, BootstrapFactory make) {
  shareOf(comm).init = std::move(make);
}

bool groupOwnsInit(const Communicator* comm) {
  const Share* s = findShare(comm);
  return s && s->init;
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
  op.kind = GroupOp::Coll;
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

void groupAddStep(Communicator& comm, std::function<void()> step) {
  Share& s = shareOf(&comm);
  s.ops.emplace_back();
  s.ops.back().kind = GroupOp::Step;
  s.ops.back().step = std::move(step);
}

void groupAddDeferred(const void* key, std::function<void()> wait, std::function<void()> replay) {
  Share* s = findShare(key);
  if (!s) {
    tGroup.shares.emplace_back();
    s = &tGroup.shares.back();
    s->key = key;
    s->wait = std::move(wait);
  }
  if (replay) s->replays.push_back(std::move(replay));
}

bool groupDefers(const void* key) {
  const Share* s = findShare(key);
  return s && !s->comm.get();
}

}  // namespace gdr::dispatch

#include "compat/nccl/nccl_group.h"

#include <thread>
#include <vector>

#include "compat/nccl/nccl_sim.h"
#include "core/lib_thread.h"
#include "core/log.h"

#if GDR_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace gdr::nccl {

namespace {

struct Call {
  Comm* comm;
  bool p2p;
  std::function<ncclResult_t()> run;
};

struct GroupState {
  int depth = 0;
  std::vector<Call> calls;
  std::vector<Comm*> inits;
};

thread_local GroupState tGroup;

struct Outcome {
  ncclResult_t code = ncclSuccess;
  std::string text;
};

void keep(Outcome& o, ncclResult_t r) {
  if (r == ncclSuccess || r == ncclInProgress || o.code != ncclSuccess) return;
  o.code = r;
  o.text = threadLastError();
}

// One communicator's share of the group, on the calling thread.
Outcome runQueue(Comm* comm, const std::vector<const Call*>& calls) {
  Outcome o;
  log::setContext(comm->rank, comm->cudaDev);
#if GDR_HAVE_CUDA
  if (comm->cudaDev >= 0) cudaSetDevice(comm->cudaDev);
#endif
  for (const Call* c : calls)
    if (!c->p2p) keep(o, c->run());
  bool anyP2p = false;
  for (const Call* c : calls) anyP2p |= c->p2p;
  if (!anyP2p) return o;
  if (gdrGroupStart() != gdrSuccess) {
    keep(o, recordError("ncclGroupEnd", comm, ncclInternalError, gdrGetLastError(nullptr), true));
    return o;
  }
  for (const Call* c : calls)
    if (c->p2p) keep(o, c->run());
  gdrResult_t r = gdrGroupEnd();
  if (r != gdrSuccess) keep(o, recordError("ncclGroupEnd", comm, fromGdr(r), gdrGetLastError(comm->gdr), true));
  return o;
}

}  // namespace

bool groupActive() { return tGroup.depth > 0; }

void groupStart() { ++tGroup.depth; }

void groupDiscard() {
  if (tGroup.depth == 0 || --tGroup.depth > 0) return;
  tGroup.calls.clear();
  groupClearSim();
  tGroup.inits.clear();  // each finishes on its own thread; using the communicator waits for it
}

void groupNoteInit(Comm* comm) { tGroup.inits.push_back(comm); }

void groupDefer(Comm* comm, bool p2p, std::function<ncclResult_t()> call) {
  tGroup.calls.push_back(Call{comm, p2p, std::move(call)});
}

ncclResult_t groupEnd() {
  if (tGroup.depth == 0) throw InvalidUsage("ncclGroupEnd without ncclGroupStart");
  if (--tGroup.depth > 0) return ncclSuccess;
  std::vector<Call> calls = std::move(tGroup.calls);
  std::vector<Comm*> inits = std::move(tGroup.inits);
  tGroup.calls.clear();
  tGroup.inits.clear();
  groupClearSim();

  std::vector<Comm*> order;  // communicators in order of first appearance
  std::vector<std::vector<const Call*>> queues;
  for (const Call& c : calls) {
    size_t i = 0;
    while (i < order.size() && order[i] != c.comm) ++i;
    if (i == order.size()) {
      order.push_back(c.comm);
      queues.emplace_back();
    }
    queues[i].push_back(&c);
  }
  std::vector<Outcome> outcomes(order.size());
  if (order.size() == 1) {
    outcomes[0] = runQueue(order[0], queues[0]);
  } else {
    std::vector<std::thread> workers;
    for (size_t i = 0; i < order.size(); ++i)
      workers.push_back(libThread("nccl-group", [&, i] { outcomes[i] = runQueue(order[i], queues[i]); }));
    for (auto& w : workers) w.join();
  }

  Outcome all;
  bool inProgress = false;
  for (Comm* c : inits) {
    if (!c->blocking) {
      inProgress |= c->initState.load() == ncclInProgress;
      continue;
    }
    {
      std::lock_guard<std::mutex> lk(c->threadMu);
      if (c->initThread.joinable()) c->initThread.join();
    }
    const int st = c->initState.load();
    if (st != ncclSuccess && all.code == ncclSuccess) {
      std::lock_guard<std::mutex> lk(c->mu);
      all.code = static_cast<ncclResult_t>(st);
      all.text = c->lastError;
    }
  }
  for (const Outcome& o : outcomes)
    if (o.code != ncclSuccess && all.code == ncclSuccess) all = o;
  if (all.code != ncclSuccess) {
    setThreadLastError(all.text);
    return all.code;
  }
  return inProgress ? ncclInProgress : ncclSuccess;
}

}  // namespace gdr::nccl

#include "collectives/executor.h"

#include <sys/socket.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <thread>
#include <vector>

#include "collectives/short_schedules.h"
#include "core/error.h"
#include "core/log.h"

namespace gdr::coll {

namespace {

const char* stepName(StepKind k) {
  switch (k) {
    case StepKind::Send: return "send";
    case StepKind::Recv: return "recv";
    case StepKind::RecvReduce: return "recv-reduce";
    case StepKind::Copy: return "copy";
    case StepKind::Reduce: return "reduce";
  }
  return "?";
}

}  // namespace

std::string waitText(const std::string& what, int peer, const transport::OpSig& sig, const Step* st,
                     size_t idx, size_t nsteps) {
  std::string s = strprintf("waiting %s", what.c_str());
  if (peer >= 0) s += strprintf(" from/to rank %d", peer);
  s += strprintf(" in %s", transport::describe(sig).c_str());
  if (st)
    s += strprintf(", step %zu of %zu (%s, chunk %d)", idx + 1, nsteps, stepName(st->kind),
                   st->chunk);
  else if (nsteps)
    s += strprintf(", after step %zu of %zu", nsteps, nsteps);  // the last sends draining
  return s;
}

namespace {

using detail::singleCopyFromOf;

struct InFlight {
  transport::SendOp op;
  const char* begin;
  const char* end;
  int peer;
};

class Runner {
 public:
  Runner(Links& c, const Schedule& s, const HostBuffers& b, transport::ReduceFn fn,
         const transport::OpSig& sig, const int* peerOf)
      : comm_(c),
        sched_(s),
        bufs_(b),
        fn_(fn),
        sig_(sig),
        singleCopyFrom_(singleCopyFromOf(c, sig)),
        sharedCopy_(traitsOf(static_cast<CollKind>(sig.kind)).sharedCopy),
        peerOf_(peerOf),
        sends_(sendPool()) {
    // Posted SendOps must not move: reserve room for every send up front
    // (the pool keeps its capacity, so small calls allocate nothing).
    sends_.clear();
    sends_.reserve(s.steps.size());
  }

  void run() {
    const FaultSpec& fault = comm_.fault();
    const size_t faultAt =
        fault.armedFor(comm_.rank(), sig_.seq) ? faultStep(fault) : sched_.steps.size();
    for (stepIdx_ = 0; stepIdx_ < sched_.steps.size(); ++stepIdx_) {
      const Step& st = sched_.steps[stepIdx_];
      comm_.stepAt(stepIdx_, local(st) ? -1 : peer(st), static_cast<uint8_t>(st.kind));
      if (stepIdx_ == faultAt) inject(fault, st);
      switch (st.kind) {
        case StepKind::Send: send(st); break;
        case StepKind::Recv: recv(st, false); break;
        case StepKind::RecvReduce: recv(st, true); break;
        case StepKind::Copy: {
          const char* src = ptr(st.src);
          char* dst = wptr(st.dst);
          if (src != dst && st.dst.count) {
            waitSendsOver(dst, bytes(st.dst));
            std::memmove(dst, src, bytes(st.dst));
          }
          break;
        }
        case StepKind::Reduce: {
          char* dst = wptr(st.dst);
          if (st.dst.count) {
            waitSendsOver(dst, bytes(st.dst));
            fn_(dst, dst, ptr(st.src), st.dst.count);
          }
          break;
        }
      }
      reap();
    }
    comm_.stepAt(sched_.steps.size(), allSent() ? -1 : sends_[firstLive_].peer, 0xff);
    comm_.progressUntil([&] { return reap(), allSent(); },
                        [&] { return describeWait("for sends to complete", allSent() ? -1 : sends_[firstLive_].peer); });
  }

 private:
  size_t bytes(const Region& r) const { return r.count * bufs_.elemBytes; }
  const char* ptr(const Region& r) const {
    const char* base = r.buf == BufId::Input ? bufs_.input : r.buf == BufId::Output ? bufs_.output : bufs_.scratch;
    if (!base && r.count) throw InternalError("schedule touches a buffer this rank does not have");
    return base + r.offset * bufs_.elemBytes;
  }
  char* wptr(const Region& r) const {
    if (r.buf == BufId::Input && r.count) throw InternalError("schedule writes the input buffer");
    return const_cast<char*>(ptr(r));
  }

  // GDR_FAULT (core/fault.h). first/middle/last count the steps that move
  // a message, where a failure is felt by the peers.
  size_t faultStep(const FaultSpec& f) const {
    if (f.step > 0) return static_cast<size_t>(f.step - 1);
    std::vector<size_t> moving;
    for (size_t i = 0; i < sched_.steps.size(); ++i)
      if (sched_.steps[i].kind == StepKind::Send || sched_.steps[i].kind == StepKind::Recv ||
          sched_.steps[i].kind == StepKind::RecvReduce)
        moving.push_back(i);
    return moving.empty() ? sched_.steps.size() : moving[f.stepIndex(moving.size())];
  }

  static bool local(const Step& st) {
    return st.kind == StepKind::Copy || st.kind == StepKind::Reduce;
  }

  void inject(const FaultSpec& f, const Step& st) {
    const int to = local(st) ? -1 : peer(st);
    GDR_WARN(kColl, "GDR_FAULT: %s at %s, step %zu of %zu", faultKindName(f.kind), transport::describe(sig_).c_str(),
             stepIdx_ + 1, sched_.steps.size());
    switch (f.kind) {
      case FaultKind::Kill:
        raise(SIGKILL);
        break;
      case FaultKind::Stall:
        std::this_thread::sleep_for(std::chrono::milliseconds(comm_.timeoutMs() * 5 / 2));
        break;
      case FaultKind::Close: {
        const int fd = to >= 0 ? comm_.endpoint(to)->pollFd() : -1;
        if (fd >= 0) shutdown(fd, SHUT_RDWR);
        throw RemoteError(strprintf("GDR_FAULT closed the connection to rank %d at step %zu of %zu in %s", to,
                                    stepIdx_ + 1, sched_.steps.size(), transport::describe(sig_).c_str()));
      }
      case FaultKind::Corrupt:
        corruptNext_ = true;
        break;
      case FaultKind::None:
        break;
    }
  }

  // A damaged signature for the next message this rank sends or expects.
  transport::OpSig sigForNextMessage() {
    transport::OpSig s = sig_;
    if (corruptNext_) s.seq ^= uint64_t(1) << 40;
    corruptNext_ = false;
    return s;
  }

  void send(const Step& st) {
    sends_.emplace_back();
    InFlight& f = sends_.back();
    f.op.data = ptr(st.src);
    f.op.bytes = bytes(st.src);
    f.op.sig = sigForNextMessage();
    f.op.singleCopyFrom = singleCopyFrom_;
    f.begin = static_cast<const char*>(f.op.data);
    f.end = f.begin + f.op.bytes;
    f.peer = peer(st);
    comm_.endpoint(f.peer)->postSend(&f.op);
  }

  void recv(const Step& st, bool reduce) {
    char* dst = wptr(st.dst);
    waitSendsOver(dst, bytes(st.dst));
    transport::RecvOp op;
    op.dst = dst;
    op.bytes = bytes(st.dst);
    op.sig = sigForNextMessage();
    op.singleCopyFrom = singleCopyFrom_;
    op.shareCopy = sharedCopy_;
    op.elemBytes = bufs_.elemBytes;
    if (reduce) {
      op.reduceSrc = ptr(st.src);
      op.fn = fn_;
    }
    const int from = peer(st);
    comm_.endpoint(from)->postRecv(&op);
    comm_.progressUntil([&] { return op.complete; },
                        [&] { return describeWait(strprintf("to receive %zu bytes", op.bytes), from); });
  }

  // Waits for in-flight sends that read [p, p+n).
  void waitSendsOver(const char* p, size_t n) {
    if (!n) return;
    for (size_t i = firstLive_; i < sends_.size(); ++i) {
      InFlight& f = sends_[i];
      if (f.op.complete || f.end <= p || f.begin >= p + n) continue;
      comm_.progressUntil([&] { return f.op.complete; },
                          [&] { return describeWait("for a send to complete", f.peer); });
    }
  }

  // Sends complete in order per peer but not across peers; finished ones
  // stay in the vector (it never reallocates) and `firstLive_` skips them.
  void reap() {
    while (firstLive_ < sends_.size() && sends_[firstLive_].op.complete) ++firstLive_;
  }
  bool allSent() const { return firstLive_ == sends_.size(); }

  std::string describeWait(const std::string& what, int peer) const {
    const Step* st = stepIdx_ < sched_.steps.size() ? &sched_.steps[stepIdx_] : nullptr;
    return waitText(what, peer, sig_, st, stepIdx_, sched_.steps.size());
  }

  Links& comm_;
  const Schedule& sched_;
  const HostBuffers& bufs_;
  transport::ReduceFn fn_;
  transport::OpSig sig_;
  size_t singleCopyFrom_;
  bool sharedCopy_;
  // One pool per thread: execute() never nests.
  static std::vector<InFlight>& sendPool() {
    thread_local std::vector<InFlight> pool;
    return pool;
  }

  int peer(const Step& st) const { return peerOf_ ? peerOf_[st.peer] : st.peer; }

  const int* peerOf_;
  std::vector<InFlight>& sends_;
  size_t firstLive_ = 0;
  size_t stepIdx_ = 0;
  bool corruptNext_ = false;
};

}  // namespace

void execute(Links& comm, const Schedule& sched, const HostBuffers& bufs, transport::ReduceFn fn,
             const transport::OpSig& sig, const int* peerOf) {
  // A GDR_FAULT armed for this call takes the runner, where its hook is.
  const FaultSpec& f = comm.fault();
  const bool faultHere = f.armedFor(comm.rank(), sig.seq);
  comm.opBegan(sig, sched.steps.size());
  try {
    if (faultHere || (!detail::runSingleMessage(comm, sched, bufs, fn, sig, peerOf) &&
                      !detail::runShort(comm, sched, bufs, fn, sig, peerOf)))
      Runner(comm, sched, bufs, fn, sig, peerOf).run();
  } catch (...) {
    comm.opEnded(false);
    throw;
  }
  comm.opEnded(true);
}

}  // namespace gdr::coll

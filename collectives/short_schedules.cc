#include "collectives/short_schedules.h"

#include <cstring>
#include <new>

#include "core/error.h"

namespace gdr::coll {

namespace detail {

// A schedule that is one message and nothing else (a leaf of a broadcast
// or reduce, the root of either at two ranks): posted and waited for here,
// without the runner's send pool and overlap bookkeeping, which cost more
// than the message itself at a few bytes. The same step under the same
// rules (a send completes before the call returns). runShort below covers
// this case too, but its resolving pass cost the leaves of an np 4 8-byte
// broadcast 1038 -> 1116 instructions per call (callgrind), so the one
// message keeps its own path.
bool runSingleMessage(Links& comm, const Schedule& sched, const HostBuffers& bufs,
                      transport::ReduceFn fn, const transport::OpSig& sig, const int* peerOf) {
  if (sched.steps.size() != 1) return false;
  const Step& st = sched.steps[0];
  if (st.kind != StepKind::Send && st.kind != StepKind::Recv && st.kind != StepKind::RecvReduce)
    return false;
  auto base = [&](BufId b) -> const char* {
    return b == BufId::Input ? bufs.input : b == BufId::Output ? bufs.output : bufs.scratch;
  };
  const Region& r = st.kind == StepKind::Send ? st.src : st.dst;
  // The runner's checks (a missing buffer, a write to Input) stay with it.
  if (!base(r.buf) || (st.kind != StepKind::Send && r.buf == BufId::Input)) return false;
  const int peer = peerOf ? peerOf[st.peer] : st.peer;
  transport::Endpoint* ep = comm.endpoint(peer);
  const size_t bytes = r.count * bufs.elemBytes;
  comm.stepAt(0, peer, static_cast<uint8_t>(st.kind));
  auto describe = [&] {
    return waitText(st.kind == StepKind::Send ? "for a send to complete"
                                              : strprintf("to receive %zu bytes", bytes),
                    peer, sig, &st, 0, 1);
  };
  if (st.kind == StepKind::Send) {
    transport::SendOp op;
    op.data = base(r.buf) + r.offset * bufs.elemBytes;
    op.bytes = bytes;
    op.sig = sig;
    op.singleCopyFrom = singleCopyFromOf(comm, sig);
    if (ep->sendNow(op)) return true;  // the back end's immediate path
    ep->postSend(&op);
    comm.progressUntil([&] { return op.complete; }, describe);
    return true;
  }
  transport::RecvOp op;
  op.dst = const_cast<char*>(base(r.buf)) + r.offset * bufs.elemBytes;
  op.bytes = bytes;
  op.sig = sig;
  op.singleCopyFrom = singleCopyFromOf(comm, sig);
  op.shareCopy = traitsOf(static_cast<CollKind>(sig.kind)).sharedCopy;  // as the runner's receives
  op.elemBytes = bufs.elemBytes;
  if (st.kind == StepKind::RecvReduce) {
    const char* src = base(st.src.buf);
    if (!src) return false;
    op.reduceSrc = src + st.src.offset * bufs.elemBytes;
    op.fn = fn;
  }
  if (ep->recvNow(op)) return true;  // it has arrived, and matches
  ep->postRecv(&op);
  comm.progressUntil([&] { return op.complete; }, describe);
  return true;
}

// A short schedule (a few message steps, and local copies only after the
// last of them): the root or a forwarding rank of a small broadcast or
// reduce, the exchange of two ranks (all-reduce, reduce-scatter; in place,
// the copy back from scratch). It runs here without the runner, whose send
// pool and bookkeeping cost more than such a call's messages: each send
// goes out at post where the back end takes it whole, each receive is
// matched at once or waited for, in the schedule's order. The runner's
// rules hold: a receive that would write what an earlier send still reads
// makes the schedule the runner's (checked before anything moves), copies
// wait for the sends, and the sends complete before the call returns.
constexpr size_t kShortSteps = 8;

}  // namespace detail

bool runsWithoutRunner(const Schedule& s) {
  const size_t n = s.steps.size();
  if (n == 0 || n > detail::kShortSteps) return false;
  bool copies = false;
  for (const Step& st : s.steps) {
    if (st.kind == StepKind::Reduce) return false;
    if (st.kind == StepKind::Copy) {
      if (n == 1) return false;
      copies = true;
    } else if (copies) {
      return false;
    }
  }
  return true;
}

namespace detail {

bool runShort(Links& comm, const Schedule& sched, const HostBuffers& bufs, transport::ReduceFn fn,
              const transport::OpSig& sig, const int* peerOf) {
  const size_t n = sched.steps.size();
  if (n < 2 || n > kShortSteps) return false;
  auto base = [&](BufId b) -> char* {
    return const_cast<char*>(b == BufId::Input ? bufs.input : b == BufId::Output ? bufs.output : bufs.scratch);
  };
  const size_t eb = bufs.elemBytes;
  // Every step's memory, resolved first: anything the runner must order or
  // reject stays with it.
  struct Resolved {
    const char* src;  // a send's data, a receive-reduce's other operand, a copy's source
    char* dst;        // a receive's or a copy's destination
    size_t bytes;
    int peer;  // -1 for a copy
  } at[kShortSteps];  // filled per kind below (no initialisers: this path counts stores)
  bool copies = false;
  for (size_t i = 0; i < n; ++i) {
    const Step& st = sched.steps[i];
    Resolved& r = at[i];
    switch (st.kind) {
      case StepKind::Send:
        r.src = base(st.src.buf);
        r.bytes = st.src.count * eb;
        if (copies || !r.src) return false;
        r.src += st.src.offset * eb;
        r.peer = peerOf ? peerOf[st.peer] : st.peer;
        break;
      case StepKind::Recv:
      case StepKind::RecvReduce:
        r.dst = base(st.dst.buf);
        r.bytes = st.dst.count * eb;
        if (copies || !r.dst || st.dst.buf == BufId::Input) return false;
        r.dst += st.dst.offset * eb;
        if (st.kind == StepKind::RecvReduce) {
          r.src = base(st.src.buf);
          if (!r.src) return false;
          r.src += st.src.offset * eb;
        }
        for (size_t j = 0; j < i; ++j)
          if (sched.steps[j].kind == StepKind::Send && r.dst < at[j].src + at[j].bytes &&
              at[j].src < r.dst + r.bytes)
            return false;
        r.peer = peerOf ? peerOf[st.peer] : st.peer;
        break;
      case StepKind::Copy:
        copies = true;
        r.peer = -1;
        r.bytes = st.dst.count * eb;
        if (!r.bytes) break;
        r.src = base(st.src.buf);
        r.dst = base(st.dst.buf);
        if (!r.src || !r.dst || st.dst.buf == BufId::Input) return false;
        r.src += st.src.offset * eb;
        r.dst += st.dst.offset * eb;
        break;
      case StepKind::Reduce:
        return false;
    }
  }
  const size_t singleCopyFrom = singleCopyFromOf(comm, sig);
  // Constructed as they are used: a call of two sends writes two.
  union SendSlot {
    SendSlot() {}
    transport::SendOp op;
  } slots[kShortSteps];
  auto sends = [&](size_t k) -> transport::SendOp& { return slots[k].op; };
  int sendPeer[kShortSteps];
  size_t nSends = 0;
  bool pending = false;  // a send the back end has not completed yet
  auto drainSends = [&] {
    if (!pending) return;
    size_t first = 0;
    auto done = [&] {
      while (first < nSends && sends(first).complete) ++first;
      return first == nSends;
    };
    pending = false;
    if (done()) return;
    comm.stepAt(n, sendPeer[first], 0xff);
    comm.progressUntil(done, [&] {
      return waitText("for sends to complete", first < nSends ? sendPeer[first] : -1, sig, nullptr, n, n);
    });
  };
  for (size_t i = 0; i < n; ++i) {
    const Step& st = sched.steps[i];
    const Resolved& r = at[i];
    comm.stepAt(i, r.peer, static_cast<uint8_t>(st.kind));
    if (st.kind == StepKind::Send) {
      sendPeer[nSends] = r.peer;
      transport::SendOp& op = *new (&slots[nSends++].op) transport::SendOp();
      op.data = r.src;
      op.bytes = r.bytes;
      op.sig = sig;
      op.singleCopyFrom = singleCopyFrom;
      transport::Endpoint* ep = comm.endpoint(r.peer);
      if (!ep->sendNow(op)) {
        ep->postSend(&op);
        pending = true;
      }
    } else if (st.kind == StepKind::Copy) {
      drainSends();
      if (r.bytes && r.src != r.dst) std::memmove(r.dst, r.src, r.bytes);
    } else {
      transport::RecvOp op;
      op.dst = r.dst;
      op.bytes = r.bytes;
      op.sig = sig;
      op.singleCopyFrom = singleCopyFrom;
      op.shareCopy = traitsOf(static_cast<CollKind>(sig.kind)).sharedCopy;
      op.elemBytes = eb;
      if (st.kind == StepKind::RecvReduce) {
        op.reduceSrc = r.src;
        op.fn = fn;
      }
      transport::Endpoint* ep = comm.endpoint(r.peer);
      if (!ep->recvNow(op)) {
        ep->postRecv(&op);
        comm.progressUntil([&] { return op.complete; }, [&] {
          return waitText(strprintf("to receive %zu bytes", r.bytes), r.peer, sig, &st, i, n);
        });
      }
    }
  }
  drainSends();
  return true;
}

}  // namespace detail
}  // namespace gdr::coll

#include "paths/one_message.h"

#include "collectives/executor.h"
#include "collectives/reduce_host.h"
#include "collectives/schedule.h"
#include "core/error.h"
#include "core/op_sig.h"

namespace gdr::paths {

namespace {

// What the general path would run as one message and nothing else: two
// ranks, a broadcast or a reduce (not avg, which divides after), a count,
// the signature check of level 0 or 1 (level 2 agrees first), no forced
// algorithm or tuning table (they may split it), no chunking that would,
// no fault armed for it (its hook is in the schedule runner), and the
// selector's binomial tree, one message at two ranks (a large reduce takes
// the ring, two half messages, and must not meet a whole one here).
bool covered(const Communicator& comm, const CollCall& call, size_t bytes, uint64_t seq) {
  const CommConfig& cfg = comm.config();
  if (!(comm.size() == 2 && (call.kind == CollKind::Broadcast || call.kind == CollKind::Reduce) &&
        call.count > 0 && !(call.kind == CollKind::Reduce && call.op == gdrAvg) && cfg.checkMismatch <= 1 &&
        cfg.algo.empty() && cfg.tuningFile.empty() &&
        (cfg.chunkBytes <= 0 || bytes <= static_cast<size_t>(cfg.chunkBytes)) &&
        !cfg.fault.armedFor(comm.rank(), seq)))
    return false;
  return coll::builtInAlgo(call.kind, 2, bytes) == coll::Algo::Binomial;  // no GDR_ALGO, no table: built in
}

}  // namespace

bool tryOneMessage(Communicator& comm, const CollCall& call) {
  const size_t eb = typeSize(call.type);
  const size_t bytes = call.count * eb;
  const uint64_t seq = comm.collectivesNumbered() + 1;  // taken only if done here
  if (!covered(comm, call, bytes, seq)) return false;
  const int me = comm.rank(), peer = 1 - me;
  transport::Endpoint* ep = comm.endpoint(peer);
  if (!ep) return false;
  const OpSig sig = sigOf(call, seq);
  const size_t singleCopyFrom = singleCopyFromOf(call.kind, comm.ownCores());
  const bool bcast = call.kind == CollKind::Broadcast;
  if (bcast == (me == call.root)) {  // the sending side: a broadcast's root, a reduce's leaf
    transport::SendOp op;
    op.data = bcast ? call.recvbuf : call.sendbuf;
    op.bytes = bytes;
    op.sig = sig;
    op.singleCopyFrom = singleCopyFrom;
    if (!ep->sendNow(op)) return false;
    comm.nextSeq();
    comm.opAtOnce(sig);
    return true;
  }
  transport::RecvOp op;
  op.dst = call.recvbuf;
  op.bytes = bytes;
  op.sig = sig;
  op.singleCopyFrom = singleCopyFrom;
  op.shareCopy = traitsOf(call.kind).sharedCopy;
  op.elemBytes = eb;
  if (!bcast) {
    op.reduceSrc = call.inPlace ? call.recvbuf : call.sendbuf;
    op.fn = coll::hostReduceFn(call.type, call.op);
  }
  comm.nextSeq();
  if (ep->recvNow(op)) {
    comm.opAtOnce(sig);
    return true;
  }
  // Not here yet: wait for it here, as the general path's one-step
  // schedule would (the same message, the same wait, the same words when
  // it times out), without its buffers, schedule lookup and runner.
  const coll::Step step{bcast ? coll::StepKind::Recv : coll::StepKind::RecvReduce, peer, {}, {}, 0};
  comm.opBegan(sig, 1);
  try {
    comm.stepAt(0, peer, static_cast<uint8_t>(step.kind));
    ep->postRecv(&op);
    comm.progressUntil([&] { return op.complete; }, [&] {
      return coll::waitText(strprintf("to receive %zu bytes", bytes), peer, sig, &step, 0, 1);
    });
  } catch (...) {
    comm.opEnded(false);
    throw;
  }
  comm.opEnded(true);
  return true;
}

}  // namespace gdr::paths

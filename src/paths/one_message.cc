#include "paths/one_message.h"

#include "collectives/reduce_host.h"
#include "core/op_sig.h"

namespace gdr::paths {

namespace {

// What the general path would run as one message and nothing else: two
// ranks, a broadcast or a reduce (not avg, which divides after), a count,
// the signature check of level 0 or 1 (level 2 agrees first), no forced
// algorithm or tuning table (they may split it), no chunking that would,
// and no fault armed for it (its hook is in the schedule runner).
bool covered(const Communicator& comm, const CollCall& call, size_t bytes, uint64_t seq) {
  const CommConfig& cfg = comm.config();
  return comm.size() == 2 && (call.kind == CollKind::Broadcast || call.kind == CollKind::Reduce) &&
         call.count > 0 && !(call.kind == CollKind::Reduce && call.op == gdrAvg) && cfg.checkMismatch <= 1 &&
         cfg.algo.empty() && cfg.tuningFile.empty() &&
         (cfg.chunkBytes <= 0 || bytes <= static_cast<size_t>(cfg.chunkBytes)) &&
         !cfg.fault.armedFor(comm.rank(), seq);
}

}  // namespace

bool tryOneMessage(Communicator& comm, const CollCall& call) {
  const size_t eb = typeSize(call.type);
  const size_t bytes = call.count * eb;
  const uint64_t seq = comm.collectivesNumbered() + 1;  // taken only if done here
  if (!covered(comm, call, bytes, seq)) return false;
  const int me = comm.rank();
  transport::Endpoint* ep = comm.endpoint(1 - me);
  if (!ep) return false;
  const OpSig sig = sigOf(call, seq);
  const size_t singleCopyFrom = traitsOf(call.kind).singleCopyFrom;
  auto send = [&](const void* data) {
    transport::SendOp op;
    op.data = data;
    op.bytes = bytes;
    op.sig = sig;
    op.singleCopyFrom = singleCopyFrom;
    return ep->sendNow(op);
  };
  auto recv = [&](void* dst, const void* reduceSrc, transport::ReduceFn fn) {
    transport::RecvOp op;
    op.dst = dst;
    op.bytes = bytes;
    op.sig = sig;
    op.singleCopyFrom = singleCopyFrom;
    op.shareCopy = traitsOf(call.kind).sharedCopy;
    op.elemBytes = eb;
    op.reduceSrc = reduceSrc;
    op.fn = fn;
    return ep->recvNow(op);
  };
  const bool bcast = call.kind == CollKind::Broadcast;
  bool done;
  if (me == call.root)
    done = bcast ? send(call.recvbuf)
                 : recv(call.recvbuf, call.inPlace ? call.recvbuf : call.sendbuf,
                        coll::hostReduceFn(call.type, call.op));
  else
    done = bcast ? recv(call.recvbuf, nullptr, nullptr) : send(call.sendbuf);
  if (!done) return false;
  comm.nextSeq();
  comm.opAtOnce(sig);
  return true;
}

}  // namespace gdr::paths

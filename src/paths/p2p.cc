#include "paths/p2p.h"

#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "collectives/schedule.h"
#include "comm/status_report.h"
#include "core/datatype.h"
#include "core/error.h"

namespace gdr::paths {

namespace {

struct P2POp {
  Communicator* comm;
  bool isSend;
  const void* sendBuf;
  void* recvBuf;
  size_t bytes;
  int peer;
  transport::OpSig sig;
};

transport::OpSig p2pSig(size_t count, gdrDataType_t type, bool preSealed = false) {
  transport::OpSig s;
  s.kind = transport::kP2PKind;
  s.dtype = static_cast<uint8_t>(type);
  s.count = count;
  if (preSealed) s.flags |= transport::kSigPreSealed;
  return s;
}

// Messages to oneself: a FIFO per communicator (its selfMessages slot),
// filled by sends before the receives of the same batch take from it.
struct SelfQueue final : PathState {
  std::mutex mu;
  std::deque<std::vector<char>> q;
};

SelfQueue& selfQueue(Communicator& c) {
  return c.selfMessages().get<SelfQueue>([] { return std::make_unique<SelfQueue>(); });
}

void runSelf(std::vector<P2POp>& ops) {
  bool any = false;
  for (auto& o : ops) any |= o.peer == o.comm->rank();
  if (!any) return;
  for (auto& o : ops)
    if (o.isSend && o.peer == o.comm->rank()) {
      SelfQueue& sq = selfQueue(*o.comm);
      std::lock_guard<std::mutex> g(sq.mu);
      sq.q.emplace_back(static_cast<const char*>(o.sendBuf),
                        static_cast<const char*>(o.sendBuf) + o.bytes);
    }
  for (auto& o : ops) {
    if (o.isSend || o.peer != o.comm->rank()) continue;
    SelfQueue& sq = selfQueue(*o.comm);
    std::lock_guard<std::mutex> g(sq.mu);
    auto& q = sq.q;
    if (q.empty()) throw InvalidUsage("receive from this rank itself without a matching send before it");
    if (q.front().size() != o.bytes)
      throw InvalidUsage(strprintf("send to self of %zu bytes does not match the receive of %zu bytes",
                                   q.front().size(), o.bytes));
    if (o.bytes) std::memcpy(o.recvBuf, q.front().data(), o.bytes);
    q.pop_front();
  }
}

// The batch on the communicator's status board while it runs: a lone send
// or receive as itself, more as a batch whose steps are its waits.
class OnBoard {
 public:
  OnBoard(const std::vector<P2POp>& ops, size_t waits) : board_(ops.front().comm->status()) {
    const P2POp& o = ops.front();
    if (ops.size() == 1) {
      board_.begin(o.sig, waits, o.isSend ? status::P2P::Send : status::P2P::Recv, o.peer);
      return;
    }
    // A batch's count: its elements when they share a type, else its bytes.
    transport::OpSig sig = o.sig;
    sig.count = 0;
    size_t bytes = 0;
    for (const P2POp& x : ops) {
      sig.count += x.sig.count;
      bytes += x.bytes;
      if (x.sig.dtype != sig.dtype) sig.dtype = static_cast<uint8_t>(gdrUint8);
    }
    if (sig.dtype == static_cast<uint8_t>(gdrUint8)) sig.count = bytes;
    board_.begin(sig, waits, status::P2P::Batch, -1);
  }
  ~OnBoard() { board_.end(ok); }
  OnBoard(const OnBoard&) = delete;
  OnBoard& operator=(const OnBoard&) = delete;
  void waitAt(size_t idx, const P2POp& o) noexcept {
    board_.step(idx, o.peer,
                static_cast<uint8_t>(o.isSend ? coll::StepKind::Send : coll::StepKind::Recv));
  }
  bool ok = false;

 private:
  status::StatusBoard& board_;
};

void runBatch(std::vector<P2POp>& ops) {
  if (ops.empty()) return;
  size_t remote = 0;
  for (const auto& o : ops) remote += o.peer != o.comm->rank();
  OnBoard board(ops, remote);
  runSelf(ops);
  // Post everything, then wait per communicator.
  std::deque<transport::SendOp> sends;
  std::deque<transport::RecvOp> recvs;
  struct Wait {
    const P2POp* op;
    const bool* done;
  };
  std::vector<Wait> waits;
  for (auto& o : ops) {
    if (o.peer == o.comm->rank()) continue;
    if (o.isSend) {
      sends.emplace_back();
      auto& s = sends.back();
      s.data = o.sendBuf;
      s.bytes = o.bytes;
      s.sig = o.sig;
      o.comm->endpoint(o.peer)->postSend(&s);
      waits.push_back({&o, &s.complete});
    } else {
      recvs.emplace_back();
      auto& r = recvs.back();
      r.dst = o.recvBuf;
      r.bytes = o.bytes;
      r.sig = o.sig;
      o.comm->endpoint(o.peer)->postRecv(&r);
      waits.push_back({&o, &r.complete});
    }
  }
  for (size_t i = 0; i < waits.size(); ++i) {
    const Wait& w = waits[i];
    const P2POp* o = w.op;
    board.waitAt(i, *o);
    o->comm->progressUntil(
        [&] { return *w.done; },
        [&] {
          return strprintf("to %s %zu bytes %s rank %d (%s)", o->isSend ? "send" : "receive", o->bytes,
                           o->isSend ? "to" : "from", o->peer, transport::describe(o->sig).c_str());
        });
  }
  board.ok = true;
}

void runOne(const P2POp& op) {
  std::vector<P2POp> one{op};
  runBatch(one);
}

}  // namespace

void p2pSend(Communicator& comm, const void* buf, size_t count, gdrDataType_t type, int peer) {
  runOne({&comm, true, buf, nullptr, count * gdr::typeSize(type), peer, p2pSig(count, type)});
}

void p2pRecv(Communicator& comm, void* buf, size_t count, gdrDataType_t type, int peer) {
  runOne({&comm, false, nullptr, buf, count * gdr::typeSize(type), peer, p2pSig(count, type)});
}

void p2pRunBatch(Communicator& comm, const std::vector<P2PCall>& reqs) {
  std::vector<P2POp> ops;
  ops.reserve(reqs.size());
  for (const P2PCall& r : reqs)
    ops.push_back({&comm, r.isSend, r.sendBuf, r.recvBuf, r.count * gdr::typeSize(r.type), r.peer,
                   p2pSig(r.count, r.type, r.preSealed)});
  runBatch(ops);
}

}  // namespace gdr::paths

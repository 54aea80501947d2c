#include "paths/staged/path.h"

#include "core/error.h"

#if GDR_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "core/cuda.h"
#include "paths/p2p.h"
#include "paths/staged/context.h"
#endif

namespace gdr::paths::staged {

#if GDR_HAVE_CUDA

namespace {

cudaStreamCaptureStatus captureOf(cudaStream_t s) {
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  checkCuda(cudaStreamIsCapturing(s, &cs), "cudaStreamIsCapturing (staged path)");
  return cs;
}

}  // namespace

void runCollective(Communicator& comm, const CollCall& call, void* stream) {
  StagedContext& ctx = contextFor(comm);
  const auto s = static_cast<cudaStream_t>(stream);
  const cudaStreamCaptureStatus cs = captureOf(s);
  staged::SealSpec seal;
  if (staged::sealable(call.kind) && call.count > 0)
    if (GpuSealer* sealer = ctx.sealerFor(cs)) {
      seal.on = true;
      seal.seq = sealer->nextCollectiveSeq();
    }
  std::shared_ptr<Plan> plan = staged::planCollective(
      call, comm.rank(), comm.size(), ctx.segBytes(),
      [&comm](const CollCall& h) { runHostCollective(comm, h); }, seal);
  OnBoard board{status::deviceSig(static_cast<uint8_t>(call.kind), call.type, call.op, call.count,
                                  call.root)};
  ctx.enqueue(std::move(plan), s, cs, board);
}

void runP2P(Communicator& comm, std::vector<P2PItem> items, void* stream) {
  StagedContext& ctx = contextFor(comm);
  const auto s = static_cast<cudaStream_t>(stream);
  const cudaStreamCaptureStatus cs = captureOf(s);
  OnBoard board;
  {
    size_t bytes = 0;
    for (const auto& it : items) bytes += it.bytes;
    board.sig = status::deviceSig(transport::kP2PKind, gdrUint8, 0, bytes, 0);
    if (items.size() == 1) {
      board.p2p = items[0].isSend ? status::P2P::Send : status::P2P::Recv;
      board.peer = items[0].peer;
    } else {
      board.p2p = status::P2P::Batch;
    }
  }
  GpuSealer* sealer = ctx.sealerFor(cs);
  if (sealer)
    for (auto& it : items)
      it.sealSeq = it.isSend ? sealer->nextSendSeq(it.peer) : sealer->nextRecvSeq(it.peer);
  std::shared_ptr<Plan> plan = staged::planP2P(
      std::move(items), ctx.segBytes(),
      [&comm](const std::vector<staged::HostMsg>& msgs) {
        std::vector<P2PCall> reqs(msgs.size());
        for (size_t i = 0; i < msgs.size(); ++i) {
          reqs[i].isSend = msgs[i].isSend;
          reqs[i].sendBuf = msgs[i].host;
          reqs[i].recvBuf = msgs[i].host;
          reqs[i].count = msgs[i].bytes;
          reqs[i].type = gdrUint8;
          reqs[i].peer = msgs[i].peer;
          reqs[i].preSealed = msgs[i].preSealed;
        }
        p2pRunBatch(comm, reqs);
      },
      comm.rank(), sealer != nullptr);
  ctx.enqueue(std::move(plan), s, cs, board);
}

void waitIdle(Communicator& comm) {
  if (StagedContext* ctx = comm.stagedPath().find<StagedContext>()) ctx->engine().waitIdle();
}

#else  // no CUDA: no device buffers reach this path

void runCollective(Communicator&, const CollCall&, void*) {
  throw NotSupported("this build of gdrcoll has no CUDA support");
}
void runP2P(Communicator&, std::vector<P2PItem>, void*) {
  throw NotSupported("this build of gdrcoll has no CUDA support");
}
void waitIdle(Communicator&) {}

#endif

}  // namespace gdr::paths::staged

// Queuing one staged operation: on the ring of the progress thread's jobs
// (ticket, flag-word values and stream order agreeing), or under CUDA-graph
// capture as a host function that pushes its job at every replay.
#include "paths/staged/context.h"

#if GDR_HAVE_CUDA
#include "core/cuda.h"
#include "core/error.h"

namespace gdr::paths::staged {

void CUDART_CB Captured::push(void* p) {
  auto* c = static_cast<Captured*>(p);
  // The previous replay's stream operations are all behind this point.
  c->ctx->store(c->ready, 0);
  c->ctx->store(c->result, 0);
  progress::Job j;
  j.what = c->plan->what();
  StagedContext* ctx = c->ctx;
  std::shared_ptr<Plan> plan = c->plan;
  std::shared_ptr<SlotSet> slots = c->slots;
  const size_t ready = c->ready, result = c->result;
  // The release must not run over the next replay's reset: only after a
  // job that did not finish (both run on the progress thread, in order).
  auto finished = std::make_shared<bool>(false);
  j.run = [=](const Deadline& d) {
    ctx->hostRun(*plan, *slots, ready, result, 0, d);
    *finished = true;
  };
  j.release = [=] {
    if (!*finished) ctx->store(result, static_cast<uint32_t>(plan->segments()));
  };
  ctx->engine().push(std::move(j));
}

void StagedContext::enqueue(std::shared_ptr<Plan> plan, cudaStream_t s, cudaStreamCaptureStatus cs,
                            const OnBoard& board) {
  if (cs == cudaStreamCaptureStatusInvalidated)
    throw InvalidUsage("the stream's CUDA graph capture was invalidated by an earlier error");
  std::shared_ptr<SlotSet> slots = slotsFor(plan->slotBytes());
  GpuSealer* sealer = plan->sealed() ? sealer_.get() : nullptr;
  if (plan->sealed() && !sealer)
    throw Error(gdrInternalError, "a sealed staged plan without a sealer");
  const size_t nseg = plan->segments();
  if (nseg >= (1u << 30))
    throw InvalidArgument(
        strprintf("%s needs too many segments (%zu)", plan->what().c_str(), nseg));
  // A failure half way leaves stream operations that wait for words nobody
  // will write unless the job releases them: fail the communicator, so the
  // job (queued first) fails fast and its release frees the stream.
  auto failing = [&](auto&& body) {
    try {
      body();
    } catch (const Error& e) {
      comm_.fail(e.code(), plan->what() + ": " + e.what());
      throw;
    }
  };
  if (cs == cudaStreamCaptureStatusActive) {
    auto cap = std::make_shared<Captured>();
    {
      std::lock_guard<std::mutex> g(mu_);
      if (nextCaptureWord_ + 2 > nwords_)
        throw NotSupported(strprintf(
            "no flag word left for another captured device operation (%zu in use)", kCaptureWords));
      cap->ready = nextCaptureWord_++;
      cap->result = nextCaptureWord_++;
      cap->ctx = this;
      cap->plan = plan;
      cap->slots = slots;
      captured_.push_back(cap);
    }
    checkCuda(cudaLaunchHostFunc(s, &Captured::push, cap.get()),
              "cudaLaunchHostFunc (staged path)");
    issue(*plan, *slots, nullptr, nullptr, cap->ready, cap->result, 0, s);
    return;
  }
  // Ticket order, value order, job order and stream order agree.
  std::lock_guard<std::mutex> g(enqueueMu_);
  // One operation at a time across streams: the slots are shared.
  if (anyOp_ && s != lastStream_)
    checkCuda(cudaStreamWaitEvent(s, lastOp_, 0), "cudaStreamWaitEvent (staged path)");
  const progress::Ticket t = engine_->reserve();
  const uint32_t base = base_;
  base_ += static_cast<uint32_t>(nseg) + 1;
  const size_t ready = 2 * t.slot, result = 2 * t.slot + 1;
  // The values the stream may wait for end at base + nseg + 1 (the check of
  // a sealed operation's opens); a failed job releases them all.
  const uint32_t last = base + static_cast<uint32_t>(nseg) + 1;
  std::shared_ptr<staged::OpenLog> log = sealer ? std::make_shared<staged::OpenLog>() : nullptr;
  engine_->store(t.startWord(),
                 t.seq);  // the job starts at once: it waits for the ready word itself
  auto finished = std::make_shared<bool>(false);
  // In the order ring jobs end (each release counts one).
  comm_.status().device().launched(board.sig, board.p2p, board.peer);
  engine_->submit(
      t, plan->what(),
      [this, plan, slots, ready, result, base, finished, log](const Deadline& d) {
        hostRun(*plan, *slots, ready, result, base, d, log.get());
        *finished = true;
      },
      [this, result, last, finished, log] {
        __atomic_fetch_add(&boardWords_.done, 1u, __ATOMIC_RELEASE);
        if (*finished) return;
        if (log) sealer_->release(*log);
        store(result, last);
      });
  failing([&] {
    issue(*plan, *slots, sealer, log.get(), ready, result, base, s);
    checkCuda(cudaEventRecord(lastOp_, s), "cudaEventRecord (staged path)");
  });
  lastStream_ = s;
  anyOp_ = true;
}

}  // namespace gdr::paths::staged

#endif

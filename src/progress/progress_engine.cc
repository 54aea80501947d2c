#include "progress/progress_engine.h"

#include <exception>
#include <utility>

#include "core/error.h"
#include "core/lib_thread.h"
#include "core/log.h"

namespace gdr::progress {

Engine::Engine(EngineConfig cfg, uint32_t* words, size_t nwords)
    : cfg_(std::move(cfg)), words_(words), nwords_(nwords), nextFreeWord_(2 * cfg_.ringSlots) {
  if (cfg_.ringSlots == 0 || nwords_ < 2 * cfg_.ringSlots)
    throw InternalError("progress engine: fewer flag words than ring slots need");
  if (cfg_.timeoutMs <= 0) throw InvalidArgument("progress engine: the timeout must be positive");
  thread_ = libThread("progress", [this] { loop(); });
}

Engine::~Engine() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

uint32_t Engine::load(size_t i) const { return __atomic_load_n(&words_[i], __ATOMIC_ACQUIRE); }
void Engine::store(size_t i, uint32_t v) { __atomic_store_n(&words_[i], v, __ATOMIC_RELEASE); }

Ticket Engine::reserve() {
  std::unique_lock<std::mutex> g(mu_);
  if (reserved_ - finishedRing_ >= cfg_.ringSlots) {
    const bool ok = doneCv_.wait_for(g, std::chrono::milliseconds(cfg_.timeoutMs),
                                     [&] { return reserved_ - finishedRing_ < cfg_.ringSlots; });
    if (!ok)
      throw TimeoutError(strprintf("timed out after %lld ms waiting for one of %zu queued device operations to "
                                   "finish (GDR_TIMEOUT_MS)",
                                   static_cast<long long>(cfg_.timeoutMs), cfg_.ringSlots));
  }
  Ticket t;
  t.seq = nextSeq_++;
  if (nextSeq_ == 0) nextSeq_ = 1;  // 0 is the words' initial value
  t.slot = reserved_++ % cfg_.ringSlots;
  return t;
}

void Engine::submit(const Ticket& t, std::string what, std::function<void(const Deadline&)> run,
                    std::function<void()> release) {
  Job j;
  j.what = std::move(what);
  j.run = std::move(run);
  j.release = std::move(release);
  j.gateWord = static_cast<int64_t>(t.startWord());
  j.gateValue = t.seq;
  j.doneWord = static_cast<int64_t>(t.doneWord());
  j.doneValue = t.seq;
  push(std::move(j));
}

void Engine::push(Job job) {
  {
    std::lock_guard<std::mutex> g(mu_);
    queue_.push_back(std::move(job));
    ++submitted_;
  }
  cv_.notify_one();
}

size_t Engine::allocWord() {
  std::lock_guard<std::mutex> g(mu_);
  if (nextFreeWord_ >= nwords_)
    throw NotSupported(strprintf("no flag word left for another captured device operation (%zu in use)",
                                 nwords_ - 2 * cfg_.ringSlots));
  return nextFreeWord_++;
}

bool Engine::idle() const {
  std::lock_guard<std::mutex> g(mu_);
  return finished_ == submitted_;
}

void Engine::waitIdle() {
  std::unique_lock<std::mutex> g(mu_);
  const uint64_t target = submitted_;
  const bool ok = doneCv_.wait_for(g, std::chrono::milliseconds(cfg_.timeoutMs), [&] { return finished_ >= target; });
  if (!ok)
    throw TimeoutError(strprintf("timed out after %lld ms waiting for queued device operations to finish before a "
                                 "host operation (GDR_TIMEOUT_MS)",
                                 static_cast<long long>(cfg_.timeoutMs)));
}

void Engine::loop() {
  if (cfg_.onThreadStart) {
    try {
      cfg_.onThreadStart();
    } catch (const std::exception& e) {
      GDR_WARN(kColl, "progress thread set-up: %s", e.what());
    }
  }
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> g(mu_);
      cv_.wait(g, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop_ and nothing left
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    runOne(job);
    {
      std::lock_guard<std::mutex> g(mu_);
      ++finished_;
      if (job.gateWord >= 0 && static_cast<size_t>(job.gateWord) < 2 * cfg_.ringSlots) ++finishedRing_;
    }
    doneCv_.notify_all();
  }
}

void Engine::runOne(Job& job) {
  auto failWith = [&](gdrResult_t code, const std::string& text) {
    if (!failed_) {
      failed_ = true;
      if (cfg_.onError) cfg_.onError(code, text);
    }
  };
  if (!failed_ && cfg_.asyncError) {
    gdrResult_t code = cfg_.asyncError();
    if (code != gdrSuccess) failWith(code, "the communicator failed earlier");
  }
  if (!failed_) {
    try {
      const Deadline gateBy = Deadline::in(cfg_.timeoutMs);
      if (job.gateWord >= 0) {
        const size_t w = static_cast<size_t>(job.gateWord);
        const uint32_t want = job.gateValue;
        // Wrap-safe "reached": the stream writes increasing sequence numbers.
        pollUntil([&] { return static_cast<int32_t>(load(w) - want) >= 0; }, gateBy,
                  [&] { return "for the stream to reach " + job.what + " (work queued before it never finished)"; },
                  cfg_.asyncError);
      }
      if (job.run) job.run(Deadline::in(cfg_.timeoutMs));
    } catch (const Error& e) {
      failWith(e.code(), job.what + ": " + e.what());
    } catch (const std::exception& e) {
      failWith(gdrInternalError, job.what + ": " + e.what());
    }
  }
  // Released whatever happened: a failed job must not leave its stream
  // waiting (the results are undefined and the error state says so).
  if (job.release) job.release();
  if (job.doneWord >= 0) store(static_cast<size_t>(job.doneWord), job.doneValue);
}

}  // namespace gdr::progress

// The progress thread of one communicator (DESIGN.md, "Device operations
// over the network"): a FIFO of jobs that one thread runs in order.
//
// A job stands for one stream-ordered operation. Its caller's stream carries
// two stream memory operations around it on 32-bit words the host can read:
// a start word the stream writes when it reaches the operation (the job's
// gate) and a done word the stream waits on. The thread waits for the gate,
// runs the job, then writes the done word, releasing the stream. Every wait
// has a deadline (GDR_TIMEOUT_MS); a job that fails or times out puts the
// owner in its error state (onError) and still writes its done word, as does
// every job after it, so a stream never waits forever.
//
// The engine knows nothing of CUDA: the words are plain host memory here
// (host-mapped memory in the library, a vector in the tests) and a job is a
// function.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "progress/poll_wait.h"

namespace gdr::progress {

struct EngineConfig {
  int64_t timeoutMs = 300000;
  // Ring of start/done word pairs for ordinary jobs (words [0, 2*ringSlots)).
  size_t ringSlots = 256;
  // First failure: (code, text). Called once, on the progress thread.
  std::function<void(gdrResult_t, const std::string&)> onError;
  // Non-success when the owner failed elsewhere: jobs then fail fast.
  std::function<gdrResult_t()> asyncError;
  // Called on the progress thread before it runs anything (binding, device).
  std::function<void()> onThreadStart;
};

struct Job {
  std::string what;  // for timeouts and logs: "all-reduce of 4096 B"
  // Runs the operation; throws gdr::Error on failure. Waits inside use the
  // deadline it is given.
  std::function<void(const Deadline&)> run;
  // Gate: run once words[gateWord] reaches gateValue (gateWord < 0: at once).
  int64_t gateWord = -1;
  uint32_t gateValue = 0;
  // Release: words[doneWord] = doneValue after the job, success or not.
  int64_t doneWord = -1;
  uint32_t doneValue = 0;
  // Also called after the job, success, failure or skipped (the owner failed
  // earlier): frees whatever else the job's stream waits on. Must not throw.
  std::function<void()> release;
};

// A ring slot handed out by reserve(): the stream writes `seq` to
// startWord() and waits for doneWord() >= seq.
struct Ticket {
  uint32_t seq = 0;
  size_t slot = 0;
  size_t startWord() const { return 2 * slot; }
  size_t doneWord() const { return 2 * slot + 1; }
};

class Engine {
 public:
  // `words` (nwords of them, nwords >= 2 * ringSlots) outlive the engine;
  // words past the ring are handed out by allocWord().
  Engine(EngineConfig cfg, uint32_t* words, size_t nwords);
  // Runs what is queued (each job under its own deadline), then stops.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // The next ring slot and sequence number, in call order. Waits (with the
  // deadline) only when ringSlots jobs are still unreleased.
  Ticket reserve();
  // A ring job: gated on the ticket's start word, released on its done word.
  void submit(const Ticket& t, std::string what, std::function<void(const Deadline&)> run,
              std::function<void()> release = nullptr);
  // Any job (e.g. one pushed by a CUDA host function on graph replay).
  void push(Job job);
  // A word past the ring for the caller's own use (captured operations).
  // Throws NotSupported when none is left.
  size_t allocWord();

  // Blocks until every job submitted so far has run (deadline: the timeout;
  // throws TimeoutError). For host operations that must follow device ones.
  void waitIdle();
  bool idle() const;

  // Host view of word i (for tests and for the stream-side fakes).
  uint32_t load(size_t i) const;
  void store(size_t i, uint32_t v);

 private:
  void loop();
  void runOne(Job& job);

  EngineConfig cfg_;
  uint32_t* words_;
  size_t nwords_;
  size_t nextFreeWord_;

  mutable std::mutex mu_;
  std::condition_variable cv_;      // the thread waits for jobs
  std::condition_variable doneCv_;  // waitIdle / reserve wait for progress
  std::deque<Job> queue_;
  uint64_t submitted_ = 0, finished_ = 0;
  uint32_t nextSeq_ = 1;
  uint64_t reserved_ = 0;  // tickets handed out (reserve waits on reserved_ - finishedRing_)
  uint64_t finishedRing_ = 0;
  bool stop_ = false;
  bool failed_ = false;  // only the thread reads/writes it
  std::thread thread_;
};

}  // namespace gdr::progress

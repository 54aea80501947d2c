// Worker threads for AES-GCM on large socket transfers, shared by every
// encrypted connection of the process (GDR_ENCRYPT_THREADS of them, started
// on first use). A connection hands each 64 KiB record to the pool with the
// counter it took in stream order, keeps sending or receiving the records
// before it, and picks the result up when its flag is set: sealing record
// k+1 overlaps the transfer of record k, and with several workers several
// records are sealed or opened at once. A waiting caller runs a queued job
// itself (runOne) rather than spin, so no thread idles while work is queued.
// A child forked while the pool runs keeps the pool without its workers (no
// lock held across the fork): its callers then run every job themselves.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gdr::security {

class CryptoPool {
 public:
  // The process's pool; null when GDR_ENCRYPT_THREADS is 0 (crypto inline).
  static CryptoPool* get();
  explicit CryptoPool(int workers);
  ~CryptoPool();
  CryptoPool(const CryptoPool&) = delete;
  CryptoPool& operator=(const CryptoPool&) = delete;

  // `job` must not throw; it reports its outcome through state it owns.
  void submit(std::function<void()> job);
  // Runs one queued job on this thread; false if the queue was empty.
  bool runOne();

 private:
  void work();
  static void forkPrepare();
  static void forkParent();
  static void forkChild();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  std::vector<std::thread> threads_;
  bool stop_ = false;
};

}  // namespace gdr::security

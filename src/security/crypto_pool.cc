#include "security/crypto_pool.h"

#include <pthread.h>

#include <algorithm>
#include <new>

#include "core/lib_thread.h"
#include "core/params.h"
#include "core/thread_affinity.h"

namespace gdr::security {

namespace {
CryptoPool* gPool = nullptr;
}

CryptoPool* CryptoPool::get() {
  static CryptoPool* pool = []() -> CryptoPool* {
    int64_t n = param::getInt("GDR_ENCRYPT_THREADS");
    if (n < 0) n = std::min<int64_t>(4, std::max(1u, std::thread::hardware_concurrency() / 2));
    if (n == 0) return nullptr;
    // Never destroyed: connections may outlive static destruction order.
    gPool = new CryptoPool(static_cast<int>(std::min<int64_t>(n, 64)));
    pthread_atfork(forkPrepare, forkParent, forkChild);
    return gPool;
  }();
  return pool;
}

void CryptoPool::forkPrepare() { gPool->mu_.lock(); }
void CryptoPool::forkParent() { gPool->mu_.unlock(); }
void CryptoPool::forkChild() {
  gPool->mu_.unlock();
  // The workers do not exist here; forget them without joining.
  new (&gPool->threads_) std::vector<std::thread>();
}

CryptoPool::CryptoPool(int workers) {
  for (int i = 0; i < workers; ++i)
    threads_.push_back(libThread("crypto", [this] {
      widenHelperAffinity("GDR_ENCRYPT worker");
      work();
    }));
}

CryptoPool::~CryptoPool() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void CryptoPool::submit(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> g(mu_);
    queue_.push_back(std::move(job));
  }
  cv_.notify_one();
}

bool CryptoPool::runOne() {
  std::function<void()> job;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (queue_.empty()) return false;
    job = std::move(queue_.front());
    queue_.pop_front();
  }
  job();
  return true;
}

void CryptoPool::work() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> g(mu_);
      cv_.wait(g, [&] { return stop_ || !queue_.empty(); });
      if (stop_ && queue_.empty()) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job();
  }
}

}  // namespace gdr::security

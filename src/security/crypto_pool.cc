#include "security/crypto_pool.h"

#include <algorithm>

#include "core/params.h"

namespace gdr::security {

CryptoPool* CryptoPool::get() {
  static CryptoPool* pool = []() -> CryptoPool* {
    int64_t n = param::getInt("GDR_ENCRYPT_THREADS");
    if (n < 0) n = std::min<int64_t>(4, std::max(1u, std::thread::hardware_concurrency() / 2));
    // Never destroyed: connections may outlive static destruction order.
    return n > 0 ? new CryptoPool(static_cast<int>(std::min<int64_t>(n, 64))) : nullptr;
  }();
  return pool;
}

CryptoPool::CryptoPool(int workers) {
  for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
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

// State a path (host, point-to-point, cuda_ipc, staged) keeps per
// communicator. The communicator owns one PathSlot per path as a member, so
// the state goes with it, in member order; the path makes its state on first
// use. Nothing else keeps tables keyed by a communicator.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

namespace gdr {

class PathState {
 public:
  virtual ~PathState() = default;
};

class PathSlot {
 public:
  PathSlot() = default;
  PathSlot(const PathSlot&) = delete;
  PathSlot& operator=(const PathSlot&) = delete;
  ~PathSlot() { reset(); }

  // The state, made by make() (returning std::unique_ptr<T>) on first use.
  // A throwing make() leaves the slot empty. T derives from PathState.
  template <typename T, typename Make>
  T& get(Make&& make) {
    if (PathState* p = ptr_.load(std::memory_order_acquire)) return static_cast<T&>(*p);
    std::lock_guard<std::mutex> g(mu_);
    if (!owned_) {
      owned_ = make();
      ptr_.store(owned_.get(), std::memory_order_release);
    }
    return static_cast<T&>(*owned_);
  }

  // The state if it was made, else null: one atomic load, so per-call
  // questions ("is there staged work to wait for?") cost nothing when the
  // path was never used. A state is made by the thread that uses the path,
  // so state this thread must see is visible to it here.
  template <typename T>
  T* find() const {
    return static_cast<T*>(ptr_.load(std::memory_order_acquire));
  }

  // Frees the state now (its destructor may still use the communicator).
  void reset() noexcept {
    ptr_.store(nullptr, std::memory_order_release);
    owned_.reset();
  }

 private:
  std::mutex mu_;
  std::unique_ptr<PathState> owned_;
  std::atomic<PathState*> ptr_{nullptr};
};

}  // namespace gdr

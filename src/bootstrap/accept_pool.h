// Accepting authenticated connections without letting one connection delay
// another. A thread accepts on the listening socket and runs each
// connection's handshake on a thread of its own, under the handshake's own
// per-connection deadline (GDR_AUTH_TIMEOUT_MS); the owner takes the
// connections whose handshake passed, in the order they pass. So an idle or
// slow connection to the port (a scanner, an attacker without the key) costs
// one thread until its deadline, never a rank's init.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/lib_thread.h"
#include "core/log.h"
#include "core/net.h"

namespace gdr::boot {

template <typename T>
class AcceptPool {
 public:
  // Runs on a pool thread; throws gdr::Error to refuse the connection (the
  // pool logs the refusal once, with the remote address, and closes it).
  using Handshake = std::function<T(int fd)>;

  AcceptPool(int listenFd, Handshake handshake, std::string what)
      : listenFd_(listenFd), handshake_(std::move(handshake)), what_(std::move(what)) {
    if (pipe2(stop_, O_CLOEXEC) != 0) throw SystemError("pipe for the accept thread", errno);
    acceptor_ = libThread("accept", [this] { acceptLoop(); });
  }

  ~AcceptPool() {
    if (write(stop_[1], "x", 1) < 0) {
      // The pipe cannot be full; nothing else to do in a destructor.
    }
    acceptor_.join();
    {
      // Handshakes still running are cut short: their reads fail at once.
      std::lock_guard<std::mutex> g(mu_);
      for (int fd : running_) shutdown(fd, SHUT_RDWR);
    }
    for (Worker& w : workers_) w.thread.join();
    for (auto& d : done_) close(d.first);
    close(stop_[0]);
    close(stop_[1]);
  }
  AcceptPool(const AcceptPool&) = delete;
  AcceptPool& operator=(const AcceptPool&) = delete;

  // The next connection whose handshake passed: its socket (now the
  // caller's) and what the handshake returned. Throws TimeoutError at the
  // deadline.
  std::pair<int, T> next(net::Clock::time_point deadline) {
    std::unique_lock<std::mutex> g(mu_);
    if (!cv_.wait_until(g, deadline, [&] { return !done_.empty() || acceptError_.size(); }))
      throw TimeoutError("timed out waiting to accept " + what_);
    if (done_.empty()) throw SystemError(acceptError_, acceptErrno_);
    std::pair<int, T> out = std::move(done_.front());
    done_.pop_front();
    return out;
  }

 private:
  // More handshakes than this at once wait in the listen backlog.
  static constexpr size_t kMaxRunning = 64;

  struct Worker {
    std::thread thread;
    bool finished = false;
  };

  void acceptLoop() {
    for (;;) {
      reapFinished();
      {
        std::unique_lock<std::mutex> g(mu_);
        cv_.wait_for(g, std::chrono::milliseconds(100),
                     [&] { return running_.size() < kMaxRunning; });
        if (running_.size() >= kMaxRunning) continue;
      }
      pollfd p[2] = {{listenFd_, POLLIN, 0}, {stop_[0], POLLIN, 0}};
      int r = poll(p, 2, 100);
      if (r < 0 && errno != EINTR) return fail("poll while accepting " + what_, errno);
      if (p[1].revents) return;
      if (r <= 0 || !(p[0].revents & POLLIN)) continue;
      int fd = accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED) continue;
        return fail("accept of " + what_, errno);
      }
      net::setNoDelay(fd);
      std::lock_guard<std::mutex> g(mu_);
      running_.push_back(fd);
      workers_.emplace_back();
      Worker& w = workers_.back();
      w.thread = libThread("handshake", [this, fd, &w] { serve(fd, w); });
    }
  }

  void serve(int fd, Worker& w) {
    try {
      T value = handshake_(fd);
      std::lock_guard<std::mutex> g(mu_);
      forget(fd);
      done_.emplace_back(fd, std::move(value));
      w.finished = true;
      cv_.notify_all();
      return;
    } catch (const Error& e) {
      GDR_WARN(kBoot, "refused a connection from %s: %s", net::peerName(fd).c_str(), e.what());
    } catch (const std::exception& e) {
      GDR_WARN(kBoot, "refused a connection from %s: %s", net::peerName(fd).c_str(), e.what());
    }
    std::lock_guard<std::mutex> g(mu_);
    forget(fd);
    close(fd);
    w.finished = true;
    cv_.notify_all();
  }

  // Under mu_.
  void forget(int fd) { running_.erase(std::find(running_.begin(), running_.end(), fd)); }

  void reapFinished() {
    std::list<Worker> finished;
    {
      std::lock_guard<std::mutex> g(mu_);
      for (auto it = workers_.begin(); it != workers_.end();) {
        auto cur = it++;
        if (cur->finished) finished.splice(finished.end(), workers_, cur);
      }
    }
    for (Worker& w : finished) w.thread.join();
  }

  void fail(const std::string& what, int err) {
    std::lock_guard<std::mutex> g(mu_);
    acceptError_ = what;
    acceptErrno_ = err;
    cv_.notify_all();
  }

  const int listenFd_;
  Handshake handshake_;
  const std::string what_;
  int stop_[2] = {-1, -1};
  std::thread acceptor_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int> running_;            // sockets whose handshake runs now
  std::list<Worker> workers_;           // a list: a worker refers to its own node
  std::deque<std::pair<int, T>> done_;  // passed, not yet taken
  std::string acceptError_;
  int acceptErrno_ = 0;
};

}  // namespace gdr::boot

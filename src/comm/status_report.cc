#include "comm/status_report.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <thread>
#include <vector>

#include "core/datatype.h"
#include "collectives/schedule.h"
#include "core/error.h"
#include "core/lib_thread.h"
#include "core/log.h"
#include "core/params.h"

namespace gdr::status {

namespace {

constexpr uint8_t kSendsKind = 0xff;  // the wait on sends after the last step

const char* stepKindName(uint8_t k) {
  switch (k) {
    case static_cast<uint8_t>(coll::StepKind::Send):
      return "send";
    case static_cast<uint8_t>(coll::StepKind::Recv):
      return "recv";
    case static_cast<uint8_t>(coll::StepKind::RecvReduce):
      return "recv-reduce";
    case static_cast<uint8_t>(coll::StepKind::Copy):
      return "copy";
    case static_cast<uint8_t>(coll::StepKind::Reduce):
      return "reduce";
    case kSendsKind:
      return "sends";
  }
  return "?";
}

bool isReduction(uint8_t kind) {
  auto k = static_cast<coll::CollKind>(kind);
  return k == coll::CollKind::AllReduce || k == coll::CollKind::Reduce ||
         k == coll::CollKind::ReduceScatter;
}

const char* collOf(const transport::OpSig& sig, P2P p2p) {
  switch (p2p) {
    case P2P::Send:
      return "send";
    case P2P::Recv:
      return "recv";
    case P2P::Batch:
      return "p2p-batch";
    case P2P::None:
      break;
  }
  return sig.kind == transport::kP2PKind ? "sendrecv"
                                         : coll::collName(static_cast<coll::CollKind>(sig.kind));
}
// A lone send's or receive's peer, for the history (in flight, the step has it).
bool hasPeer(const OpRecord& o) { return o.p2p == P2P::Send || o.p2p == P2P::Recv; }
const char* typeOf(const transport::OpSig& s) {
  return s.dtype < gdrNumTypes ? gdr::typeName(static_cast<gdrDataType_t>(s.dtype)) : "?";
}
const char* opOf(const transport::OpSig& s) {
  static const char* kOps[] = {"sum", "prod", "max", "min", "avg"};
  return isReduction(s.kind) && s.op < 5 ? kOps[s.op] : "-";
}
double ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

// The process's reporting machinery: the boards, the wake-up pipe, the
// writer thread (which alone owns the socket). Never destroyed: the thread
// may outlive static destructors.
struct Reporter {
  std::mutex mu;
  std::vector<StatusBoard*> boards;
  pid_t pid = 0;  // the process that started the thread (a fork starts another)
  int pipeR = -1, pipeW = -1;
  // GDR_STATUS_DIR, read on the program's thread before the writer starts
  // and fixed after: the writer thread never calls getenv, which a
  // program's setenv on another thread may free under it (glibc moves
  // environ when it grows).
  std::string dir;
};
Reporter& reporter() {
  static Reporter* r = new Reporter;
  return *r;
}
std::atomic<int> gSignalFd{-1};

void onSignal(int) {
  const int saved = errno;
  const int fd = gSignalFd.load(std::memory_order_relaxed);
  if (fd >= 0) {
    ssize_t n = write(fd, "u", 1);
    (void)n;
  }
  errno = saved;
}

std::string dirFromEnv() {
  std::string d = param::getString("GDR_STATUS_DIR");
  return d.empty() ? "/tmp" : d;
}
// The writer's directory once this process has one (written before the
// thread starts, never after); the environment's before.
std::string dir() {
  const Reporter& r = reporter();
  return r.pid == getpid() ? r.dir : dirFromEnv();
}
std::string socketPath() {
  return strprintf("%s/gdr-status-%d.sock", dir().c_str(), (int)getpid());
}
std::string hostName() {
  char host[64] = {0};
  gethostname(host, sizeof(host) - 1);
  for (char* c = host; *c; ++c)
    if (*c == '/' || *c == ' ' || *c == '"' || *c == '\\') *c = '_';
  return host;
}
std::string filePath(const char* ext) {
  const std::string host = hostName();
  return strprintf("%s/gdr-status-%s-%d.%s", dir().c_str(), host.c_str(), (int)getpid(), ext);
}

std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) o += c;
  }
  return o;
}

std::string header(const char* reason) {
  const auto wall = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
  return strprintf("gdr-status 1 host=%s pid=%d reason=%s time_ms=%lld\n", hostName().c_str(),
                   (int)getpid(), reason, (long long)wall);
}

std::string renderJson(const char* reason) {
  Reporter& r = reporter();
  const int64_t now = nowNs();
  std::string out = strprintf("{\"host\":\"%s\",\"pid\":%d,\"reason\":\"%s\",\"comms\":[",
                              escape(hostName()).c_str(), (int)getpid(), escape(reason).c_str());
  std::lock_guard<std::mutex> g(r.mu);
  for (size_t i = 0; i < r.boards.size(); ++i) out += (i ? "," : "") + r.boards[i]->json(now);
  return out + "]}\n";
}

void writeFile(const std::string& path, const std::string& body) {
  const std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    GDR_WARN(kInit, "cannot write the status report %s: %s", tmp.c_str(), std::strerror(errno));
    return;
  }
  size_t off = 0;
  while (off < body.size()) {
    ssize_t n = write(fd, body.data() + off, body.size() - off);
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  close(fd);
  if (off != body.size() || rename(tmp.c_str(), path.c_str()) != 0) unlink(tmp.c_str());
}

std::string writeReports(const char* reason) {
  std::string text = renderText(reason);
  writeFile(filePath("txt"), text);
  writeFile(filePath("json"), renderJson(reason));
  return text;
}

// The socket exists while the process has a communicator.
int openSocket() {
  const std::string path = socketPath();
  sockaddr_un a{};
  if (path.size() >= sizeof(a.sun_path)) return -1;
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  unlink(path.c_str());
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 || listen(fd, 8) != 0) {
    GDR_INFO(kInit, "no status socket at %s: %s", path.c_str(), std::strerror(errno));
    close(fd);
    return -1;
  }
  return fd;
}

void answer(int listenFd) {
  int c = accept4(listenFd, nullptr, nullptr, SOCK_CLOEXEC);
  if (c < 0) return;
  timeval tv{1, 0};
  setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  const std::string text = writeReports("request");
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = send(c, text.data() + off, text.size() - off, MSG_NOSIGNAL);
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  close(c);
}

void writerLoop(int pipeR) {
  int sock = -1;
  for (;;) {
    pollfd p[2] = {{pipeR, POLLIN, 0}, {sock, POLLIN, 0}};
    if (poll(p, sock >= 0 ? 2 : 1, -1) < 0 && errno != EINTR) return;
    if (p[0].revents & POLLIN) {
      char buf[64];
      ssize_t n = read(pipeR, buf, sizeof(buf));
      bool report = false;
      for (ssize_t i = 0; i < n; ++i) report |= buf[i] == 'u';
      if (report) {
        writeReports("SIGUSR1");
        GDR_WARN(kInit, "SIGUSR1: status report written to %s", filePath("txt").c_str());
      }
      // Registrations changed: the socket follows whether boards exist
      // (made anew: unregisterBoard may have unlinked its name already).
      bool any;
      {
        std::lock_guard<std::mutex> g(reporter().mu);
        any = !reporter().boards.empty();
      }
      if (sock >= 0) close(sock);
      sock = -1;
      if (any)
        sock = openSocket();
      else
        unlink(socketPath().c_str());
    }
    if (sock >= 0 && (p[1].revents & POLLIN)) answer(sock);
  }
}

// A fork while the writer thread holds the lock would leave the child's
// copy locked forever: the lock is taken across fork.
void lockForFork() { reporter().mu.lock(); }
void unlockAfterFork() { reporter().mu.unlock(); }

// Under r.mu, in a process without a writer thread yet.
void startWriter(Reporter& r) {
  static bool forkSafe = false;  // pthread_atfork handlers stay registered in children
  if (!forkSafe) {
    pthread_atfork(lockForFork, unlockAfterFork, unlockAfterFork);
    forkSafe = true;
  }
  if (r.pipeR >= 0) {  // the parent's, inherited through fork
    close(r.pipeR);
    close(r.pipeW);
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
    throw SystemError("pipe for the status reporter", errno);
  r.pipeR = fds[0];
  r.pipeW = fds[1];
  r.dir = dirFromEnv();
  r.pid = getpid();
  gSignalFd.store(r.pipeW);
  // SIGUSR1 only if the program has not taken it (its default ends the process).
  struct sigaction old {};
  if (sigaction(SIGUSR1, nullptr, &old) == 0 && old.sa_handler == SIG_DFL &&
      !(old.sa_flags & SA_SIGINFO)) {
    struct sigaction sa {};
    sa.sa_handler = onSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, nullptr);
  }
  libThread("status", [fd = r.pipeR] { writerLoop(fd); }).detach();
}

void poke(Reporter& r, char c) {
  if (r.pipeW >= 0) {
    ssize_t n = write(r.pipeW, &c, 1);
    (void)n;
  }
}

}  // namespace

std::string fieldsText(const transport::OpSig& sig, P2P p2p) {
  return strprintf("seq=%llu coll=%s dtype=%s op=%s count=%llu", (unsigned long long)sig.seq,
                   collOf(sig, p2p), typeOf(sig), opOf(sig), (unsigned long long)sig.count);
}

std::string fieldsJson(const transport::OpSig& sig, P2P p2p) {
  return strprintf("\"seq\":%llu,\"coll\":\"%s\",\"dtype\":\"%s\",\"op\":\"%s\",\"count\":%llu",
                   (unsigned long long)sig.seq, collOf(sig, p2p), typeOf(sig), opOf(sig),
                   (unsigned long long)sig.count);
}

int64_t nowNs() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool enabled() {
  static const bool on = param::getInt("GDR_STATUS") != 0;
  return on;
}

void StatusBoard::identify(int rank, int size, const std::string& commId) {
  std::lock_guard<std::mutex> g(mu_);
  rank_ = rank;
  size_ = size;
  commId_ = commId;
  on_ = enabled();
}

// Per call: a coarse clock (a few ns, ms resolution), enough for a report
// of what is stuck and for how long.
int64_t coarseNowNs() noexcept {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

// A seqlock's reader copies plain data while the writer may write it: racy
// in C++'s memory model (as every seqlock over plain data), harmless here
// (the copy is retried). ThreadSanitizer builds take the lock on both sides
// instead, so that the soak checks everything else.
#if defined(__SANITIZE_THREAD__)
#define GDR_BOARD_WRITER_LOCK std::lock_guard<std::mutex> writerLock(mu_)
#else
#define GDR_BOARD_WRITER_LOCK (void)0
#endif

// The writer's side of the seqlock: odd while it writes; it stores s + 2 when done.
uint64_t StatusBoard::openWrite() noexcept {
  const uint64_t s = seq_.load(std::memory_order_relaxed);
  seq_.store(s + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  return s;
}

void StatusBoard::begin(const transport::OpSig& sig, size_t steps, P2P p2p, int peer) noexcept {
  if (!on_) return;
  GDR_BOARD_WRITER_LOCK;
  const uint64_t s = openWrite();
  OpRecord& cur = st_.done[st_.nDone % kHistory];
  cur.sig = sig;
  if (p2p != P2P::None) cur.sig.seq = ++p2pSeq_;
  cur.steps = static_cast<uint32_t>(steps);
  cur.p2p = p2p;
  cur.peer = peer;
  cur.startNs = coarseNowNs();
  st_.inFlight = true;
  step(0, -1, 0);
  waitEnded();
  seq_.store(s + 2, std::memory_order_release);
}

DeviceOps& StatusBoard::device() {
  if (DeviceOps* d = device_.load(std::memory_order_acquire)) return *d;
  std::lock_guard<std::mutex> g(mu_);
  if (!device_.load(std::memory_order_relaxed))
    device_.store(new DeviceOps, std::memory_order_release);
  return *device_.load(std::memory_order_relaxed);
}

void StatusBoard::waitBegan() noexcept { waitSinceNs_.store(nowNs(), std::memory_order_relaxed); }

void StatusBoard::end(bool ok) noexcept {
  GDR_BOARD_WRITER_LOCK;
  if (!st_.inFlight) return;
  const uint64_t s = openWrite();
  OpRecord& cur = st_.done[st_.nDone % kHistory];
  cur.endNs = coarseNowNs();
  cur.ok = ok;
  ++st_.nDone;
  st_.inFlight = false;
  seq_.store(s + 2, std::memory_order_release);
}

void StatusBoard::atOnce(const transport::OpSig& sig) noexcept {
  if (!on_) return;
  GDR_BOARD_WRITER_LOCK;
  const uint64_t s = openWrite();
  OpRecord& cur = st_.done[st_.nDone % kHistory];
  cur.sig = sig;
  cur.steps = 1;
  cur.p2p = P2P::None;
  cur.peer = -1;
  cur.startNs = cur.endNs = 0;  // done at once: its time is 0, and the clock costs a call
  cur.ok = true;
  ++st_.nDone;
  seq_.store(s + 2, std::memory_order_release);
}

StatusBoard::State StatusBoard::snapshot() const noexcept {
  State copy;
  for (int attempt = 0; attempt < 10000; ++attempt) {
    const uint64_t a = seq_.load(std::memory_order_acquire);
    if (a & 1) continue;
    copy = st_;
    std::atomic_thread_fence(std::memory_order_acquire);
    if (seq_.load(std::memory_order_relaxed) == a) break;
  }
  return copy;  // a writer stuck mid-update (never expected) leaves the last copy
}

std::string StatusBoard::text(int64_t now) const {
  std::lock_guard<std::mutex> g(mu_);
  const State st = snapshot();
  std::string out = strprintf("comm id=%s rank=%d size=%d\n", commId_.c_str(), rank_, size_);
  auto fields = [](const OpRecord& o) { return fieldsText(o.sig, o.p2p); };
  if (st.inFlight) {
    const uint8_t kind = kind_.load(std::memory_order_relaxed);
    const int64_t since = waitSinceNs_.load(std::memory_order_relaxed);
    out +=
        strprintf("inflight %s step=%u steps=%u kind=%s peer=%d elapsed_ms=%.1f waiting_ms=%.1f\n",
                  fields(st.current()).c_str(), step_.load(std::memory_order_relaxed) + 1, st.current().steps,
                  stepKindName(kind), peer_.load(std::memory_order_relaxed), ms(now - st.current().startNs),
                  since ? ms(now - since) : -1.0);
  } else {
    out += "idle\n";
  }
  for (uint64_t i = 0; i < st.completedShown(); ++i) {
    const OpRecord& o = st.done[(st.nDone - 1 - i) % kHistory];
    const std::string peer = hasPeer(o) ? strprintf(" peer=%d", o.peer) : "";
    out += strprintf("done %s%s ms=%.3f result=%s\n", fields(o).c_str(), peer.c_str(),
                     ms(o.endNs - o.startNs), o.ok ? "ok" : "failed");
  }
  const DeviceOps* d = device_.load(std::memory_order_acquire);
  return d ? out + d->text(now) : out;
}

std::string StatusBoard::json(int64_t now) const {
  std::lock_guard<std::mutex> g(mu_);
  const State st = snapshot();
  auto fields = [](const OpRecord& o) { return fieldsJson(o.sig, o.p2p); };
  std::string out =
      strprintf("{\"id\":\"%s\",\"rank\":%d,\"size\":%d,\"in_flight\":", escape(commId_).c_str(),
                rank_, size_);
  if (st.inFlight) {
    const int64_t since = waitSinceNs_.load(std::memory_order_relaxed);
    out += strprintf(
        "{%s,\"step\":%u,\"steps\":%u,\"kind\":\"%s\",\"peer\":%d,\"elapsed_ms\":%.1f,\"waiting_"
        "ms\":%.1f}",
        fields(st.current()).c_str(), step_.load(std::memory_order_relaxed) + 1, st.current().steps,
        stepKindName(kind_.load(std::memory_order_relaxed)), peer_.load(std::memory_order_relaxed),
        ms(now - st.current().startNs), since ? ms(now - since) : -1.0);
  } else {
    out += "null";
  }
  out += ",\"completed\":[";
  for (uint64_t i = 0; i < st.completedShown(); ++i) {
    const OpRecord& o = st.done[(st.nDone - 1 - i) % kHistory];
    const std::string peer = hasPeer(o) ? strprintf(",\"peer\":%d", o.peer) : "";
    out += strprintf("%s{%s%s,\"ms\":%.3f,\"ok\":%s}", i ? "," : "", fields(o).c_str(),
                     peer.c_str(), ms(o.endNs - o.startNs), o.ok ? "true" : "false");
  }
  const DeviceOps* d = device_.load(std::memory_order_acquire);
  return out + "]" + (d ? d->json(now) : "") + "}";
}

void registerBoard(StatusBoard* b) {
  if (!enabled()) return;
  Reporter& r = reporter();
  std::lock_guard<std::mutex> g(r.mu);
  if (r.pid != getpid()) {
    r.boards.clear();  // the parent's, if this process was forked
    startWriter(r);
  }
  r.boards.push_back(b);
  poke(r, 'r');
}

void unregisterBoard(StatusBoard* b) {
  if (!enabled()) return;
  Reporter& r = reporter();
  std::lock_guard<std::mutex> g(r.mu);
  if (r.pid != getpid()) return;
  for (size_t i = 0; i < r.boards.size(); ++i)
    if (r.boards[i] == b) {
      r.boards.erase(r.boards.begin() + static_cast<long>(i));
      // The name goes now: the process may exit before the writer runs.
      if (r.boards.empty()) unlink(socketPath().c_str());
      poke(r, 'r');
      return;
    }
}

std::string renderText(const char* reason) {
  Reporter& r = reporter();
  const int64_t now = nowNs();
  std::string out = header(reason);
  std::lock_guard<std::mutex> g(r.mu);
  for (auto* b : r.boards) out += b->text(now);
  return out + "end\n";
}

void reportNow(const char* reason) noexcept {
  if (!enabled()) return;
  try {
    writeReports(reason);
    GDR_INFO(kInit, "status report written to %s", filePath("txt").c_str());
  } catch (...) {
  }
}

}  // namespace gdr::status

#include "support/multiproc.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <cstdlib>
#include <thread>

namespace gdrtest {

namespace {
int gChildRank = -1;
int gChildFailures = 0;
}  // namespace

int& childFailures() { return gChildFailures; }
int childRank() { return gChildRank; }

std::vector<RankExit> runRanks(int nranks, const RankFn& fn, const Env& env, int timeoutSec,
                               const std::function<void(int rank)>& preInit,
                               const std::function<void(const gdrUniqueId&)>& onId) {
  for (auto& kv : env) setenv(kv.first.c_str(), kv.second.c_str(), 1);
  std::vector<RankExit> exits(nranks);
  std::fflush(stdout);
  std::fflush(stderr);
  // Fork before gdrGetUniqueId starts its rendezvous thread: forking a
  // process with other threads running can leave a child stuck on a lock
  // (seen under AddressSanitizer). The id reaches the children by pipe.
  std::vector<pid_t> pids(nranks, -1);
  std::vector<int> pipes(nranks, -1);
  for (int r = 0; r < nranks; ++r) {
    int fds[2];
    if (pipe(fds) != 0) return exits;
    pid_t pid = fork();
    if (pid == 0) {
      close(fds[1]);
      gChildRank = r;
      gdrUniqueId id;
      size_t got = 0;
      while (got < sizeof(id)) {
        ssize_t n = read(fds[0], reinterpret_cast<char*>(&id) + got, sizeof(id) - got);
        if (n <= 0) _exit(89);
        got += static_cast<size_t>(n);
      }
      if (preInit) preInit(r);
      gdrComm_t comm = nullptr;
      gdrResult_t rc = gdrCommInitRank(&comm, nranks, id, r);
      if (rc != gdrSuccess) {
        std::fprintf(stderr, "[rank %d] gdrCommInitRank: %s\n", r, gdrGetLastError(nullptr));
        _exit(90);
      }
      // An exception must end the child here: escaping into gtest, the child
      // would go on to run (and fork) the rest of the suite.
      int result = 92;
      try {
        result = fn(r, nranks, comm);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "[rank %d] exception: %s\n", r, e.what());
      } catch (...) {
        std::fprintf(stderr, "[rank %d] unknown exception\n", r);
      }
      if (gChildFailures) result = result ? result : 91;
      gdrCommDestroy(comm);
      std::fflush(stdout);
      std::fflush(stderr);
      _exit(result);
    }
    close(fds[0]);
    pids[r] = pid;
    pipes[r] = fds[1];
  }
  gdrUniqueId id;
  bool haveId = gdrGetUniqueId(&id) == gdrSuccess;
  if (!haveId) std::fprintf(stderr, "gdrGetUniqueId failed: %s\n", gdrGetLastError(nullptr));
  if (haveId && onId) onId(id);
  for (int r = 0; r < nranks; ++r) {
    if (haveId && write(pipes[r], &id, sizeof(id)) != static_cast<ssize_t>(sizeof(id)))
      std::fprintf(stderr, "could not hand the unique id to rank %d\n", r);
    close(pipes[r]);
  }
  for (auto& kv : env) unsetenv(kv.first.c_str());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSec);
  int left = nranks;
  while (left > 0) {
    for (int r = 0; r < nranks; ++r) {
      if (pids[r] < 0) continue;
      int status = 0;
      pid_t w = waitpid(pids[r], &status, WNOHANG);
      if (w == pids[r]) {
        exits[r].code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        exits[r].signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        pids[r] = -1;
        --left;
      }
    }
    if (left && std::chrono::steady_clock::now() > deadline) {
      for (int r = 0; r < nranks; ++r)
        if (pids[r] > 0) {
          kill(pids[r], SIGKILL);
          waitpid(pids[r], nullptr, 0);
          exits[r].timedOut = true;
          exits[r].signal = SIGKILL;
          pids[r] = -1;
          --left;
        }
    }
    if (left) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return exits;
}

bool allOk(const std::vector<RankExit>& exits, std::string* why) {
  bool ok = true;
  for (size_t r = 0; r < exits.size(); ++r) {
    if (exits[r].code == 0) continue;
    ok = false;
    char buf[128];
    std::snprintf(buf, sizeof(buf), "rank %zu: exit %d signal %d%s; ", r, exits[r].code, exits[r].signal,
                  exits[r].timedOut ? " (hung: killed by the watchdog)" : "");
    *why += buf;
  }
  return ok;
}

}  // namespace gdrtest

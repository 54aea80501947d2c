// gdrCommInitFromEnv: which bootstrap each launcher's environment selects
// (pure logic over a fake environment), and a real rendezvous at
// GDR_COMM_ID with forked ranks, rank 0 serving it.
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "bootstrap/env_select.h"
#include "core/error.h"
#include "gdrcoll.h"

namespace {

using gdr::boot::chooseBootstrap;
using gdr::boot::EnvChoice;
using gdr::boot::Launcher;

using Env = std::map<std::string, std::string>;

EnvChoice choose(const Env& env, const std::string& forced = "auto") {
  return chooseBootstrap(
      [&](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      forced);
}

const Env kTorch = {{"MASTER_ADDR", "10.0.0.7"},
                    {"MASTER_PORT", "29500"},
                    {"RANK", "3"},
                    {"WORLD_SIZE", "8"},
                    {"LOCAL_RANK", "1"}};
const Env kSlurm = {{"SLURM_PROCID", "5"},
                    {"SLURM_NTASKS", "6"},
                    {"SLURM_LOCALID", "2"},
                    {"GDR_COMM_ID", "node1:4000"}};

Env merged(Env a, const Env& b) {
  for (const auto& kv : b) a[kv.first] = kv.second;
  return a;
}

TEST(BootstrapEnv, PmixComesFirst) {
  Env e =
      merged(merged(kTorch, kSlurm), {{"PMIX_RANK", "0"}, {"PMIX_NAMESPACE", "slurm.pmix.7.0"}});
  EnvChoice c = choose(e);
  EXPECT_EQ(c.launcher, Launcher::Pmix);
  EXPECT_NE(c.why.find("PMIX_NAMESPACE=slurm.pmix.7.0"), std::string::npos) << c.why;
  // PMIX_RANK alone (no namespace) is not a PMIx server.
  e.erase("PMIX_NAMESPACE");
  EXPECT_EQ(choose(e).launcher, Launcher::Torchrun);
}

// torchrun started by srun --mpi=pmix: its workers inherit the agent's PMIx
// rank, so they must follow torchrun's RANK.
TEST(BootstrapEnv, TorchrunWorkersUnderPmixFollowTorchrun) {
  Env e = merged(
      kTorch,
      {{"PMIX_RANK", "0"}, {"PMIX_NAMESPACE", "slurm.pmix.7.0"}, {"TORCHELASTIC_RUN_ID", "j1"}});
  EnvChoice c = choose(e);
  EXPECT_EQ(c.launcher, Launcher::Torchrun);
  EXPECT_EQ(c.rank, 3);
  EXPECT_NE(c.why.find("torchrun worker"), std::string::npos) << c.why;
  EXPECT_EQ(choose(e, "pmix").launcher, Launcher::Pmix);  // forcing still works
}

TEST(BootstrapEnv, TorchrunTakesTheNextPortAfterItsStore) {
  EnvChoice c = choose(merged(kTorch, {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}}));
  EXPECT_EQ(c.launcher, Launcher::Torchrun);
  EXPECT_EQ(c.rank, 3);
  EXPECT_EQ(c.size, 8);
  EXPECT_EQ(c.localRank, 1);
  EXPECT_EQ(c.address, "10.0.0.7:29501");
  EXPECT_NE(c.why.find("MASTER_PORT+1"), std::string::npos) << c.why;
  // GDR_COMM_ID overrides the address.
  EXPECT_EQ(choose(merged(kTorch, {{"GDR_COMM_ID", "10.0.0.9:7000"}})).address, "10.0.0.9:7000");
  // An IPv6 master keeps its brackets.
  EXPECT_EQ(choose(merged(kTorch, {{"MASTER_ADDR", "fd00::1"}})).address, "[fd00::1]:29501");
}

TEST(BootstrapEnv, SlurmNeedsGdrCommId) {
  EnvChoice c = choose(kSlurm);
  EXPECT_EQ(c.launcher, Launcher::Slurm);
  EXPECT_EQ(c.rank, 5);
  EXPECT_EQ(c.size, 6);
  EXPECT_EQ(c.localRank, 2);
  EXPECT_EQ(c.address, "node1:4000");
  Env noId = kSlurm;
  noId.erase("GDR_COMM_ID");
  try {
    choose(noId);
    FAIL() << "Slurm without GDR_COMM_ID was accepted";
  } catch (const gdr::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("srun --mpi=pmix"), std::string::npos) << e.what();
  }
}

TEST(BootstrapEnv, CommIdWithRankAndWorldSize) {
  EnvChoice c = choose({{"GDR_COMM_ID", "[::1]:5000"}, {"RANK", "0"}, {"WORLD_SIZE", "1"}});
  EXPECT_EQ(c.launcher, Launcher::CommId);
  EXPECT_EQ(c.address, "[::1]:5000");
  EXPECT_EQ(c.localRank, -1);
  EXPECT_THROW(choose({{"GDR_COMM_ID", "host:5000"}, {"RANK", "0"}}), gdr::InvalidArgument);
}

TEST(BootstrapEnv, NothingOrMalformedSaysWhat) {
  try {
    choose({});
    FAIL();
  } catch (const gdr::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("torchrun"), std::string::npos) << e.what();
  }
  EXPECT_THROW(choose(merged(kTorch, {{"RANK", "8"}})), gdr::InvalidArgument);  // rank >= size
  EXPECT_THROW(choose(merged(kTorch, {{"RANK", "-1"}})), gdr::InvalidArgument);
  EXPECT_THROW(choose(merged(kTorch, {{"WORLD_SIZE", "4x"}})), gdr::InvalidArgument);
  EXPECT_THROW(choose(merged(kTorch, {{"MASTER_PORT", "65535"}})),
               gdr::InvalidArgument);  // no next port
  EXPECT_THROW(choose(merged(kSlurm, {{"GDR_COMM_ID", "node1"}})), gdr::InvalidArgument);
  EXPECT_THROW(choose(merged(kSlurm, {{"GDR_COMM_ID", "node1:99999"}})), gdr::InvalidArgument);
  EXPECT_THROW(choose(merged(kSlurm, {{"GDR_COMM_ID", "a:b:1"}})), gdr::InvalidArgument);
}

TEST(BootstrapEnv, ForcedChoiceSkipsTheSearch) {
  Env all = merged(merged(kTorch, kSlurm), {{"PMIX_RANK", "0"}, {"PMIX_NAMESPACE", "ns"}});
  EXPECT_EQ(choose(all, "slurm").launcher, Launcher::Slurm);
  EXPECT_EQ(choose(all, "torchrun").launcher, Launcher::Torchrun);
  EXPECT_EQ(choose(all, "comm_id").launcher, Launcher::CommId);
  EXPECT_EQ(choose(all, "pmix").launcher, Launcher::Pmix);
  EXPECT_THROW(choose(kTorch, "pmix"), gdr::InvalidArgument);
  EXPECT_THROW(choose(all, "mpi"), gdr::InvalidArgument);
}

// A fresh port each run, so parallel runs on one machine do not collide.
// It lies below Linux's ephemeral range (32768 up), which the kernel hands
// to outgoing connections (another test's, or this one's own ranks'), and it
// is free when chosen: a random pick in 20000-40000 once landed on a port in
// use and failed CI.
int freePort() {
  std::mt19937 g(std::random_device{}());
  for (int tries = 0; tries < 100; ++tries) {
    const int port = 20000 + static_cast<int>(g() % 12000);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    if (fd >= 0) close(fd);
    if (ok) return port;
  }
  return 20000 + static_cast<int>(g() % 12000);
}

std::string writeKey() {
  char path[] = "/tmp/gdr-envkey-XXXXXX";
  int fd = mkstemp(path);
  std::mt19937 g(std::random_device{}());
  std::string key(32, '\0');
  for (char& c : key) c = static_cast<char>(g());
  if (fd < 0 || write(fd, key.data(), key.size()) != static_cast<ssize_t>(key.size())) return "";
  fchmod(fd, 0600);
  close(fd);
  return path;
}

// Forks `n` ranks with `env` plus RANK; each makes its communicator from the
// environment, checks an all-reduce, and exits with 0 on success. Returns
// the exit codes (-1: killed by the watchdog or a signal).
std::vector<int> runEnvRanks(int n, const Env& env, int timeoutSec = 60) {
  std::vector<pid_t> pids;
  for (int r = 0; r < n; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      for (const auto& kv : env) setenv(kv.first.c_str(), kv.second.c_str(), 1);
      setenv("RANK", std::to_string(r).c_str(), 1);
      gdrComm_t comm = nullptr;
      if (gdrCommInitFromEnv(&comm) != gdrSuccess) {
        std::fprintf(stderr, "[rank %d] gdrCommInitFromEnv: %s\n", r, gdrGetLastError(nullptr));
        _exit(10);
      }
      int rank = -1, size = -1;
      gdrCommRank(comm, &rank);
      gdrCommSize(comm, &size);
      if (rank != r || size != n) _exit(11);
      std::vector<double> in(4099), out(4099, -1.0);
      for (size_t i = 0; i < in.size(); ++i) in[i] = r * 10000.0 + i;
      int bad = gdrAllReduce(in.data(), out.data(), in.size(), gdrFloat64, gdrSum, comm, nullptr) !=
                gdrSuccess;
      for (size_t i = 0; i < out.size(); ++i)
        bad |= out[i] != 10000.0 * n * (n - 1) / 2 + n * static_cast<double>(i);
      gdrCommDestroy(comm);
      _exit(bad ? 12 : 0);
    }
    pids.push_back(pid);
  }
  std::vector<int> codes(n, -1);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSec);
  for (int left = n; left > 0;) {
    for (int r = 0; r < n; ++r) {
      if (pids[r] <= 0) continue;
      int st = 0;
      if (waitpid(pids[r], &st, WNOHANG) == pids[r]) {
        codes[r] = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        pids[r] = 0;
        --left;
      }
    }
    if (left && std::chrono::steady_clock::now() > deadline) {
      for (pid_t p : pids)
        if (p > 0) kill(p, SIGKILL), waitpid(p, nullptr, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return codes;
}

TEST(BootstrapEnv, CommIdRendezvousWithForkedRanks) {
  const std::string key = writeKey();
  ASSERT_FALSE(key.empty());
  for (int n : {1, 3, 4}) {
    Env env = {{"GDR_COMM_ID", "127.0.0.1:" + std::to_string(freePort())},
               {"WORLD_SIZE", std::to_string(n)},
               {"GDR_AUTH_KEY_FILE", key},
               {"GDR_BOOTSTRAP", "auto"},
               {"GDR_TIMEOUT_MS", "30000"}};
    auto codes = runEnvRanks(n, env);
    for (int r = 0; r < n; ++r) EXPECT_EQ(codes[r], 0) << "n " << n << " rank " << r;
  }
  unlink(key.c_str());
}

TEST(BootstrapEnv, TorchrunStyleRendezvous) {
  const std::string key = writeKey();
  ASSERT_FALSE(key.empty());
  Env env = {{"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", std::to_string(freePort())},
             {"WORLD_SIZE", "3"},          {"GDR_AUTH_KEY_FILE", key},
             {"GDR_TIMEOUT_MS", "30000"},  {"GDR_TRANSPORT", "socket"}};
  auto codes = runEnvRanks(3, env);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(codes[r], 0) << "rank " << r;
  unlink(key.c_str());
}

// An id at an address (what NCCL_COMM_ID makes ncclGetUniqueId return)
// starts no service; rank 0 serves it inside gdrCommInitRank. The id carries
// a fresh random key, so no key file is needed.
TEST(BootstrapEnv, UniqueIdAtAnAddressIsServedByRankZero) {
  const std::string at = "127.0.0.1:" + std::to_string(freePort());
  gdrUniqueId id;
  gdr::boot::addressUniqueId(at, false, 0, &id);
  const int n = 3;
  std::vector<pid_t> pids;
  for (int r = 0; r < n; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      setenv("GDR_TIMEOUT_MS", "20000", 1);
      if (r > 0) usleep(100000 * r);  // the others start first: rank 0 serving late must still work
      gdrComm_t comm = nullptr;
      if (gdrCommInitRank(&comm, n, id, n - 1 - r) != gdrSuccess) _exit(30);
      int v = 1, sum = 0;
      int bad =
          gdrAllReduce(&v, &sum, 1, gdrInt32, gdrSum, comm, nullptr) != gdrSuccess || sum != n;
      gdrCommDestroy(comm);
      _exit(bad ? 31 : 0);
    }
    pids.push_back(pid);
  }
  for (pid_t p : pids) {
    int st = 0;
    waitpid(p, &st, 0);  // each child ends within its GDR_TIMEOUT_MS
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "status " << st;
  }
}

// Without a key file nothing can hand the ranks a secret: every rank fails
// at once with a clear error instead of joining an unauthenticated job.
TEST(BootstrapEnv, RendezvousFromTheEnvironmentNeedsAKey) {
  Env env = {{"GDR_COMM_ID", "127.0.0.1:" + std::to_string(freePort())},
             {"WORLD_SIZE", "2"},
             {"GDR_AUTH_KEY_FILE", ""},
             {"GDR_TIMEOUT_MS", "5000"}};
  auto codes = runEnvRanks(2, env, 20);
  EXPECT_EQ(codes[0], 10);
  EXPECT_EQ(codes[1], 10);
}

// Ranks holding different keys never join each other: rank 1's connection
// is refused and it times out.
TEST(BootstrapEnv, RanksWithAnotherKeyAreRefused) {
  const std::string a = writeKey(), b = writeKey();
  const int port = freePort();
  std::vector<pid_t> pids;
  for (int r = 0; r < 2; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      setenv("GDR_COMM_ID", ("127.0.0.1:" + std::to_string(port)).c_str(), 1);
      setenv("WORLD_SIZE", "2", 1);
      setenv("RANK", std::to_string(r).c_str(), 1);
      setenv("GDR_AUTH_KEY_FILE", (r ? b : a).c_str(), 1);
      setenv("GDR_TIMEOUT_MS", "3000", 1);
      setenv("GDR_AUTH_TIMEOUT_MS", "1000", 1);
      gdrComm_t comm = nullptr;
      _exit(gdrCommInitFromEnv(&comm) == gdrSuccess ? 0 : 20);
    }
    pids.push_back(pid);
  }
  for (pid_t p : pids) {
    int st = 0;
    waitpid(p, &st, 0);  // both end within GDR_TIMEOUT_MS
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 20);
  }
  unlink(a.c_str());
  unlink(b.c_str());
}

}  // namespace

#include "bootstrap/env_select.h"

#include <cerrno>
#include <cstdlib>

#include "core/error.h"

namespace gdr::boot {

namespace {

bool has(const EnvLookup& env, const char* name) {
  const char* v = env(name);
  return v && *v;
}

// A non-negative int, or InvalidArgument naming the variable.
int intVar(const EnvLookup& env, const char* name) {
  const char* v = env(name);
  if (!v || !*v) throw InvalidArgument(strprintf("%s is not set", name));
  errno = 0;
  char* end = nullptr;
  long x = std::strtol(v, &end, 10);
  if (errno || *end || x < 0 || x > (1L << 30))
    throw InvalidArgument(strprintf("%s=%s is not a rank or count", name, v));
  return static_cast<int>(x);
}

int optionalInt(const EnvLookup& env, const char* name) {
  return has(env, name) ? intVar(env, name) : -1;
}

// The launcher's rank, size and local rank, checked against each other.
EnvChoice ranked(Launcher l, const EnvLookup& env, const char* rankVar, const char* sizeVar,
                 const char* localVar) {
  EnvChoice c;
  c.launcher = l;
  c.rank = intVar(env, rankVar);
  c.size = intVar(env, sizeVar);
  c.localRank = optionalInt(env, localVar);
  if (c.size < 1) throw InvalidArgument(strprintf("%s must be at least 1", sizeVar));
  if (c.rank >= c.size)
    throw InvalidArgument(strprintf("%s=%d is not below %s=%d", rankVar, c.rank, sizeVar, c.size));
  return c;
}

std::string checkedAddress(const std::string& hostPort, const char* from) {
  std::string host;
  int port = 0;
  if (!splitHostPort(hostPort, &host, &port))
    throw InvalidArgument(strprintf("%s=%s is not host:port", from, hostPort.c_str()));
  return hostPort;
}

EnvChoice pmix(const EnvLookup& env) {
  EnvChoice c;
  c.launcher = Launcher::Pmix;
  c.why =
      strprintf("PMIX_RANK=%s and PMIX_NAMESPACE=%s are set (a PMIx server launched this process)",
                env("PMIX_RANK"), env("PMIX_NAMESPACE"));
  return c;
}

EnvChoice torchrun(const EnvLookup& env) {
  EnvChoice c = ranked(Launcher::Torchrun, env, "RANK", "WORLD_SIZE", "LOCAL_RANK");
  if (has(env, "GDR_COMM_ID")) {
    c.address = checkedAddress(env("GDR_COMM_ID"), "GDR_COMM_ID");
    c.why = strprintf(
        "MASTER_ADDR, MASTER_PORT, RANK=%d, WORLD_SIZE=%d are set; rendezvous at GDR_COMM_ID=%s",
        c.rank, c.size, c.address.c_str());
    return c;
  }
  // torchrun's own store listens on MASTER_PORT; ours takes the next port.
  const int port = intVar(env, "MASTER_PORT");
  if (port < 1 || port >= 65535)
    throw InvalidArgument(strprintf("MASTER_PORT=%d is not a usable port", port));
  std::string host = env("MASTER_ADDR");
  c.address = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
              std::to_string(port + 1);
  c.address = checkedAddress(c.address, "MASTER_ADDR:MASTER_PORT+1");
  c.why = strprintf(
      "MASTER_ADDR, MASTER_PORT, RANK=%d, WORLD_SIZE=%d are set (torchrun); rendezvous at "
      "MASTER_ADDR:MASTER_PORT+1 = %s",
      c.rank, c.size, c.address.c_str());
  return c;
}

EnvChoice slurm(const EnvLookup& env) {
  EnvChoice c = ranked(Launcher::Slurm, env, "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID");
  if (!has(env, "GDR_COMM_ID"))
    throw InvalidArgument(
        "launched by Slurm without PMIx: set GDR_COMM_ID=host:port (rank 0's host) for the "
        "rendezvous, or run srun --mpi=pmix");
  c.address = checkedAddress(env("GDR_COMM_ID"), "GDR_COMM_ID");
  c.why = strprintf(
      "SLURM_PROCID=%d and SLURM_NTASKS=%d are set, no PMIx; rendezvous at GDR_COMM_ID=%s", c.rank,
      c.size, c.address.c_str());
  return c;
}

EnvChoice commId(const EnvLookup& env) {
  const std::string at = env("GDR_COMM_ID") ? env("GDR_COMM_ID") : "";
  EnvChoice c = ranked(Launcher::CommId, env, "RANK", "WORLD_SIZE", "LOCAL_RANK");
  c.address = checkedAddress(at, "GDR_COMM_ID");
  c.why =
      strprintf("GDR_COMM_ID=%s with RANK=%d and WORLD_SIZE=%d", c.address.c_str(), c.rank, c.size);
  return c;
}

bool looksPmix(const EnvLookup& env) { return has(env, "PMIX_RANK") && has(env, "PMIX_NAMESPACE"); }
bool looksTorchrun(const EnvLookup& env) {
  return has(env, "MASTER_ADDR") && has(env, "MASTER_PORT") && has(env, "RANK") &&
         has(env, "WORLD_SIZE");
}
bool looksSlurm(const EnvLookup& env) {
  return has(env, "SLURM_PROCID") && has(env, "SLURM_NTASKS");
}

}  // namespace

const char* launcherName(Launcher l) {
  switch (l) {
    case Launcher::Pmix:
      return "pmix";
    case Launcher::Torchrun:
      return "torchrun";
    case Launcher::Slurm:
      return "slurm";
    case Launcher::CommId:
      return "comm_id";
  }
  return "?";
}

bool splitHostPort(const std::string& s, std::string* host, int* port) {
  size_t colon;
  if (!s.empty() && s[0] == '[') {
    size_t close = s.find(']');
    if (close == std::string::npos || close + 1 >= s.size() || s[close + 1] != ':') return false;
    *host = s.substr(1, close - 1);
    colon = close + 1;
  } else {
    colon = s.rfind(':');
    if (colon == std::string::npos || s.find(':') != colon) return false;
    *host = s.substr(0, colon);
  }
  const std::string p = s.substr(colon + 1);
  if (host->empty() || p.empty() || p.size() > 5 ||
      p.find_first_not_of("0123456789") != std::string::npos)
    return false;
  *port = std::atoi(p.c_str());
  return *port > 0 && *port < 65536;
}

EnvChoice chooseBootstrap(const EnvLookup& env, const std::string& forced) {
  if (forced == "pmix") {
    if (!looksPmix(env))
      throw InvalidArgument("GDR_BOOTSTRAP=pmix but PMIX_RANK/PMIX_NAMESPACE are not set");
    EnvChoice c = pmix(env);
    c.why = "GDR_BOOTSTRAP=pmix; " + c.why;
    return c;
  }
  if (forced == "torchrun") return torchrun(env);
  if (forced == "slurm") return slurm(env);
  if (forced == "comm_id") return commId(env);
  if (forced != "auto" && !forced.empty())
    throw InvalidArgument(strprintf(
        "GDR_BOOTSTRAP=%s is not one of auto, pmix, torchrun, slurm, comm_id", forced.c_str()));
  // torchrun's workers inherit the PMIx variables of the agent that srun
  // started, so PMIx would give every worker of a node the agent's rank;
  // torchrun marks its workers with TORCHELASTIC_RUN_ID.
  const bool torchWorker = looksTorchrun(env) && has(env, "TORCHELASTIC_RUN_ID");
  if (looksPmix(env) && !torchWorker) return pmix(env);
  if (looksTorchrun(env)) {
    EnvChoice c = torchrun(env);
    if (looksPmix(env)) c.why += " (a torchrun worker: PMIx's rank is its agent's, not its own)";
    return c;
  }
  if (looksSlurm(env)) return slurm(env);
  if (has(env, "GDR_COMM_ID")) return commId(env);
  throw InvalidArgument(
      "no launcher found in the environment: expected PMIX_RANK/PMIX_NAMESPACE (mpirun, srun "
      "--mpi=pmix), "
      "MASTER_ADDR/MASTER_PORT/RANK/WORLD_SIZE (torchrun), SLURM_PROCID/SLURM_NTASKS with "
      "GDR_COMM_ID, or "
      "GDR_COMM_ID with RANK and WORLD_SIZE");
}

}  // namespace gdr::boot

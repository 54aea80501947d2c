// Which bootstrap a program launched without MPI uses, read from the
// launcher's environment. Pure logic over a lookup function, so tests can
// hand it any environment; the choice carries the reason, for the log.
#pragma once

#include <functional>
#include <string>

namespace gdr::boot {

enum class Launcher { Pmix, Torchrun, Slurm, CommId };

const char* launcherName(Launcher l);

struct EnvChoice {
  Launcher launcher = Launcher::CommId;
  std::string why;  // which variables decided it
  int rank = -1;    // -1 where the bootstrap learns it (PMIx)
  int size = -1;
  int localRank = -1;   // -1: the launcher does not say
  std::string address;  // host:port of the TCP rendezvous (not PMIx)
};

using EnvLookup = std::function<const char*(const char*)>;

// In order: PMIx (PMIX_RANK and PMIX_NAMESPACE), torchrun (MASTER_ADDR,
// MASTER_PORT, RANK, WORLD_SIZE; LOCAL_RANK), Slurm (SLURM_PROCID,
// SLURM_NTASKS and GDR_COMM_ID; SLURM_LOCALID), GDR_COMM_ID with RANK and
// WORLD_SIZE. A torchrun worker (TORCHELASTIC_RUN_ID) under a PMIx launch
// takes torchrun's variables: the PMIx ones it inherited are its agent's.
// `forced` ("auto", or one of pmix, torchrun, slurm, comm_id:
// GDR_BOOTSTRAP) skips the search. Throws InvalidArgument saying what is
// missing when nothing fits, or a variable is malformed.
EnvChoice chooseBootstrap(const EnvLookup& env, const std::string& forced);

// "host:port" or "[v6addr]:port" split; false if malformed.
bool splitHostPort(const std::string& s, std::string* host, int* port);

}  // namespace gdr::boot

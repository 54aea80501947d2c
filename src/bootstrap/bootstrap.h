// The bootstrap: how ranks find each other at set-up. A tiny interface
// (rank, size, local rank, allgather of bytes, barrier) with three adapters:
// the caller's own (gdrBootstrap_t, which gdrcoll_mpi.h fills from MPI, so
// the library itself never links MPI), PMIx (the launcher's key-value store,
// libpmix loaded at run time) and TCP (a rendezvous at a unique id's address,
// or at a host:port from the environment). It carries connection info and
// nothing after set-up.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "core/net.h"
#include "gdrcoll.h"
#include "security/job_secret.h"

namespace gdr::boot {

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual const char* name() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // This rank's index among the job's ranks on its host, where the launcher
  // says; -1 where it does not (the communicator finds co-located ranks by
  // host identity either way).
  virtual int localRank() const { return -1; }
  // `data` holds size() pieces of `bytesPerRank`; this rank's piece is at
  // rank() * bytesPerRank on entry, and every piece is filled on return.
  virtual void allgather(void* data, size_t bytesPerRank) = 0;
  virtual void barrier() = 0;
  // The job's secret and id (security/job_secret.h), the same on every rank:
  // every TCP connection between ranks authenticates with it.
  virtual const security::JobSecret& jobSecret() const = 0;
  // The communicator is connected: nothing calls allgather or barrier again.
  virtual void setUpDone() {}
};

// The caller's bootstrap: its callbacks are used until setUpDone().
std::unique_ptr<Bootstrap> makeExternalBootstrap(const gdrBootstrap_t& ops);

// TCP adapter. createUniqueId starts the rendezvous service (a thread in this
// process that lives until every rank has checked in, or the deadline).
void createUniqueId(gdrUniqueId* id);
std::unique_ptr<Bootstrap> makeTcpBootstrap(const gdrUniqueId& id, int rank, int nranks,
                                            int localRank = -1);

// A unique id whose rendezvous is at `hostPort` and is served by rank 0
// inside gdrCommInitRank (no service starts here): the launchers'
// environments, and NCCL_COMM_ID in the NCCL-compatible library.
// With `fromEnvironment` every rank builds the same id on its own: the key
// must come from GDR_AUTH_KEY_FILE and the job id is derived from it, the
// address and `nranks`; otherwise the key and job id are random, and the id
// must reach the ranks out of band like any other.
void addressUniqueId(const std::string& hostPort, bool fromEnvironment, int nranks,
                     gdrUniqueId* id);

// PMIx adapter (bootstrap/pmix_api.h): the job as the PMIx server sees it.
std::unique_ptr<Bootstrap> makePmixBootstrap();

// The bootstrap the launcher's environment names (bootstrap/env_select.h,
// GDR_BOOTSTRAP), logged with the reason.
std::unique_ptr<Bootstrap> makeEnvBootstrap();
// Where the id's rendezvous service listens (for tests that probe the port).
net::Addr rendezvousAddress(const gdrUniqueId& id);

}  // namespace gdr::boot

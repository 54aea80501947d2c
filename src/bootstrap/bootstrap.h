// The bootstrap: how ranks find each other at set-up. A tiny interface
// (rank, size, allgather of bytes, barrier) with two adapters: the caller's
// own (gdrBootstrap_t, which gdrcoll_mpi.h fills from MPI) and TCP (a
// unique-id rendezvous). It carries connection info and nothing after set-up.
#pragma once

#include <cstddef>
#include <memory>

#include "gdrcoll.h"
#include "security/job_secret.h"

namespace gdr::boot {

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual const char* name() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
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
std::unique_ptr<Bootstrap> makeTcpBootstrap(const gdrUniqueId& id, int rank, int nranks);

}  // namespace gdr::boot

// The shared-memory back end of one communicator: this rank's segment (an
// inbox per rank of its host, written by those ranks), the mapped segments
// of the peers it claims, and an endpoint per such peer. The communicator
// only says which peers are on this host and passes the exchange between
// create() and claim(); the segment's layout and header are the back end's.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "transport/shm/shm_segment.h"
#include "transport/transport.h"

namespace gdr::transport::shm {

class ShmBackend {
 public:
  // Creates and fills this rank's segment for the ranks `hostRanks` of its
  // host (sorted, this rank included), named after the job. Returns the
  // address of the word a peer reads to find out whether single-copy works;
  // the peers learn it through the caller's exchange.
  uint64_t create(uint64_t job, int rank, std::vector<int> hostRanks, size_t nSlots,
                  size_t slotBytes);

  struct Peer {
    int rank;
    pid_t pid;
    uint64_t cmaProbeAddr;  // what the peer's create() returned
  };
  // After the exchange: maps each peer's segment and makes its endpoint in
  // eps[peer.rank].
  void claim(const std::vector<Peer>& peers, std::vector<std::unique_ptr<Endpoint>>& eps);

  // Removes this rank's segment name (once every rank has mapped every
  // segment), so nothing is left in /dev/shm even if a rank dies later.
  void unlinkOwn() { own_.unlink(); }

 private:
  uint32_t indexOf(int rank) const;

  uint64_t job_ = 0;
  int rank_ = 0;
  std::vector<int> hostRanks_;
  Mapping own_;
  std::vector<Mapping> peers_;
};

}  // namespace gdr::transport::shm

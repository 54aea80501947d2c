#include "transport/shm/shm_backend.h"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>

#include "core/error.h"
#include "core/params.h"
#include "transport/shm/shm_endpoint.h"
#include "transport/shm/shm_layout.h"

namespace gdr::transport::shm {

namespace {

constexpr uint64_t kCmaProbeValue = 0x434d415f4f4b2121ull;  // "CMA_OK!!"

bool cmaWorks(pid_t pid, uint64_t addr) {
  uint64_t v = 0;
  iovec local = {&v, sizeof(v)};
  iovec remote = {reinterpret_cast<void*>(addr), sizeof(v)};
  return process_vm_readv(pid, &local, 1, &remote, 1, 0) == sizeof(v) && v == kCmaProbeValue;
}

std::string segmentName(uint64_t job, int rank) {
  return strprintf("/gdrcoll-%016llx-%d", (unsigned long long)job, rank);
}

}  // namespace

uint32_t ShmBackend::indexOf(int rank) const {
  return static_cast<uint32_t>(std::lower_bound(hostRanks_.begin(), hostRanks_.end(), rank) -
                               hostRanks_.begin());
}

uint64_t ShmBackend::create(uint64_t job, int rank, std::vector<int> hostRanks, size_t nSlots,
                            size_t slotBytes) {
  job_ = job;
  rank_ = rank;
  hostRanks_ = std::move(hostRanks);
  own_ =
      Mapping::create(segmentName(job, rank), segmentBytes(hostRanks_.size(), nSlots, slotBytes));
  auto* h = reinterpret_cast<SegHeader*>(own_.data());
  h->magic = kSegMagic;
  h->pid = getpid();
  h->rank = rank;
  h->nInbox = static_cast<uint32_t>(hostRanks_.size());
  h->nSlots = static_cast<uint32_t>(nSlots);
  h->slotBytes = slotBytes;
  h->cmaProbe = kCmaProbeValue;
  return reinterpret_cast<uintptr_t>(&h->cmaProbe);
}

void ShmBackend::claim(const std::vector<Peer>& peers,
                       std::vector<std::unique_ptr<Endpoint>>& eps) {
  // Every segment exists: each rank created its own before the exchange.
  const bool allowCma = param::getBool("GDR_SHM_CMA");
  const int64_t cmaThreshold = param::getInt("GDR_SHM_CMA_THRESHOLD");
  const bool shareCopy = param::getBool("GDR_SHM_CMA_SHARE");
  const bool prefetchNext = param::getBool("GDR_SHM_PREFETCHW");
  SegView mine{own_.data()};
  peers_.reserve(peers.size());
  for (const Peer& p : peers) {
    peers_.push_back(Mapping::open(segmentName(job_, p.rank)));
    SegView theirs{peers_.back().data()};
    if (theirs.hdr()->magic != kSegMagic || theirs.hdr()->rank != p.rank)
      throw InternalError(
          strprintf("shared memory segment of rank %d is not what it should be", p.rank));
    ShmEndpointConfig c;
    c.myRank = rank_;
    c.peerRank = p.rank;
    c.peerPid = p.pid;
    c.mine = mine;
    c.inFromPeer = indexOf(p.rank);
    c.theirs = theirs;
    c.outToPeer = indexOf(rank_);
    c.cmaThreshold = cmaThreshold;
    c.shareCopy = shareCopy;
    c.prefetchNext = prefetchNext;
    // Single-copy needs ptrace-level access to the peer (same user and a
    // permissive Yama scope, or CAP_SYS_PTRACE): try it once.
    c.cma = allowCma && cmaWorks(p.pid, p.cmaProbeAddr);
    eps[p.rank] = std::make_unique<ShmEndpoint>(c);
  }
}

}  // namespace gdr::transport::shm

// TCP bootstrap. gdrGetUniqueId starts a rendezvous service (a thread) on a
// listening socket whose address, with a random job nonce, is the unique id.
// Every rank connects to it with its own listening address; once all have
// checked in, the service hands each the table of addresses and exits. Ranks
// then form a ring (connect to the next, accept from the previous) and run
// allgather around it.
#include <unistd.h>

#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "core/error.h"
#include "core/log.h"
#include "core/net.h"

namespace gdr::boot {

namespace {

constexpr uint64_t kIdMagic = 0x6764725f69643031ull;  // "gdr_id01"

struct IdBlob {
  uint64_t magic;
  uint64_t nonce;
  net::PackedAddr root;
};
static_assert(sizeof(IdBlob) <= GDR_UNIQUE_ID_BYTES, "unique id too small");

struct Hello {
  uint64_t magic;
  uint64_t nonce;
  int32_t rank;
  int32_t nranks;
  net::PackedAddr addr;
};

uint64_t randomNonce() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

// The rendezvous service: collects every rank's address, then sends the table.
void rendezvous(int listenFd, uint64_t nonce) {
  std::vector<int> fds;
  std::vector<net::PackedAddr> table;
  int nranks = -1, joined = 0;
  auto deadline = net::deadlineFromNow();
  try {
    while (nranks < 0 || joined < nranks) {
      int fd = net::acceptOne(listenFd, deadline, "ranks at the rendezvous");
      Hello h{};
      try {
        net::recvAll(fd, &h, sizeof(h), net::Clock::now() + std::chrono::seconds(10), "a joining rank");
      } catch (const Error& e) {
        GDR_WARN(kBoot, "rendezvous: dropped a connection: %s", e.what());
        close(fd);
        continue;
      }
      bool ok = h.magic == kIdMagic && h.nonce == nonce && h.nranks > 0 &&
                (nranks < 0 || h.nranks == nranks) && h.rank >= 0 && h.rank < h.nranks;
      if (ok && nranks < 0) {
        nranks = h.nranks;
        fds.assign(nranks, -1);
        table.resize(nranks);
      }
      if (!ok || fds[h.rank] >= 0) {
        GDR_WARN(kBoot, "rendezvous: refused a connection (wrong job, rank %d of %d, or duplicate)", h.rank,
                 h.nranks);
        close(fd);
        continue;
      }
      fds[h.rank] = fd;
      table[h.rank] = h.addr;
      ++joined;
    }
    for (int r = 0; r < nranks; ++r)
      net::sendAll(fds[r], table.data(), table.size() * sizeof(net::PackedAddr), deadline,
                   strprintf("rank %d", r));
  } catch (const Error& e) {
    GDR_WARN(kBoot, "rendezvous service gave up: %s", e.what());
  }
  for (int fd : fds)
    if (fd >= 0) close(fd);
  close(listenFd);
}

class TcpBootstrap final : public Bootstrap {
 public:
  TcpBootstrap(const gdrUniqueId& id, int rank, int nranks) : rank_(rank), size_(nranks) {
    IdBlob blob;
    std::memcpy(&blob, id.internal, sizeof(blob));
    if (blob.magic != kIdMagic) throw InvalidArgument("the unique id is not one made by gdrGetUniqueId");
    nonce_ = blob.nonce;
    auto deadline = net::deadlineFromNow();
    net::Addr mine;
    int listenFd = net::listenOn(net::localAddr(), &mine);
    try {
      int rootFd = net::connectTo(net::unpack(blob.root), deadline, "the rendezvous service");
      Hello h{kIdMagic, nonce_, rank, nranks, net::pack(mine)};
      std::vector<net::PackedAddr> table(nranks);
      try {
        net::sendAll(rootFd, &h, sizeof(h), deadline, "the rendezvous service");
        net::recvAll(rootFd, table.data(), table.size() * sizeof(net::PackedAddr), deadline,
                     "the rendezvous service (are all ranks started?)");
      } catch (...) {
        close(rootFd);
        throw;
      }
      close(rootFd);
      if (nranks > 1) formRing(listenFd, table, deadline);
    } catch (...) {
      close(listenFd);
      throw;
    }
    close(listenFd);
  }
  ~TcpBootstrap() override {
    if (next_ >= 0) close(next_);
    if (prev_ >= 0) close(prev_);
  }
  const char* name() const override { return "tcp"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void allgather(void* data, size_t bytesPerRank) override {
    char* base = static_cast<char*>(data);
    auto deadline = net::deadlineFromNow();
    for (int s = 0; s < size_ - 1; ++s) {
      int sendPiece = (rank_ - s + size_) % size_;
      int recvPiece = (rank_ - s - 1 + size_) % size_;
      net::exchange(next_, base + sendPiece * bytesPerRank, prev_, base + recvPiece * bytesPerRank,
                    bytesPerRank, deadline, "bootstrap ring neighbours");
    }
  }
  void barrier() override {
    std::vector<char> dummy(size_);
    allgather(dummy.data(), 1);
  }

 private:
  void formRing(int listenFd, const std::vector<net::PackedAddr>& table, net::Clock::time_point deadline) {
    int nextRank = (rank_ + 1) % size_, prevRank = (rank_ - 1 + size_) % size_;
    next_ = net::connectTo(net::unpack(table[nextRank]), deadline, strprintf("rank %d", nextRank));
    Hello h{kIdMagic, nonce_, rank_, size_, {}};
    net::sendAll(next_, &h, sizeof(h), deadline, strprintf("rank %d", nextRank));
    for (;;) {
      int fd = net::acceptOne(listenFd, deadline, strprintf("rank %d", prevRank));
      Hello in{};
      try {
        net::recvAll(fd, &in, sizeof(in), deadline, strprintf("rank %d", prevRank));
      } catch (const Error&) {
        close(fd);
        continue;
      }
      if (in.magic == kIdMagic && in.nonce == nonce_ && in.rank == prevRank) {
        prev_ = fd;
        return;
      }
      GDR_WARN(kBoot, "bootstrap: refused a connection claiming rank %d", in.rank);
      close(fd);
    }
  }

  int rank_, size_;
  uint64_t nonce_ = 0;
  int next_ = -1, prev_ = -1;
};

}  // namespace

void createUniqueId(gdrUniqueId* id) {
  std::memset(id, 0, sizeof(*id));
  net::Addr bound;
  int fd = net::listenOn(net::localAddr(), &bound, 1024);
  IdBlob blob{kIdMagic, randomNonce(), net::pack(bound)};
  std::memcpy(id->internal, &blob, sizeof(blob));
  GDR_INFO(kBoot, "rendezvous service listening on %s", bound.str().c_str());
  std::thread(rendezvous, fd, blob.nonce).detach();
}

std::unique_ptr<Bootstrap> makeTcpBootstrap(const gdrUniqueId& id, int rank, int nranks) {
  return std::make_unique<TcpBootstrap>(id, rank, nranks);
}

}  // namespace gdr::boot

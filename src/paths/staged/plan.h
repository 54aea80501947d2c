// How the staged path (device buffers over a host transport) cuts one
// operation into segments that the progress thread pipelines: segment k's
// device->host copies, its host collective (or sends/receives) on pinned
// buffers, and its host->device copies. Copies of one segment overlap the
// network part of its neighbours.
//
// Every rank cuts alike (the segment size, GDR_STAGED_CHUNK_BYTES, must be
// the same on all ranks), so segment k is one host collective everywhere:
// - all-reduce, reduce, broadcast: element ranges of the buffer;
// - all-gather, reduce-scatter, all-to-all: the same element range of every
//   rank's block (strided copies), so each segment is the collective on a
//   smaller count;
// - all-to-all-v and barrier: one segment;
// - send/receive: rounds; round k carries chunk k of every operation of the
//   batch, as one host group, so any pattern of sends and receives completes.
// Pure data: no CUDA, no transport; the tests check the cuts cover the
// buffers exactly.
//
// Sealed plans (GDR_ENCRYPT=1, data-movement only: broadcast, all-gather,
// all-to-all, send/receive): each row a copy moves is sealed by the GPU on
// its way out and opened after it lands (paths/staged/seal.h). On the host
// every row is followed by its 16-byte tag, and the host part moves rows and
// tags as bytes, marked pre-sealed so transports do not encrypt them again.
// Reductions cannot be sealed end to end (the host adds the data), so they
// are never sealed here: the transports encrypt them on the CPU.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/call.h"
#include "paths/staged/nonce.h"

namespace gdr::paths::staged {

// Which nonce and key row r of a sealed copy uses: `first` with its dest
// advanced by r * destStep (unless it is every rank), under the key of rank
// origin + r * originStep.
struct RowSeal {
  bool on = false;
  SealId first;
  int origin = 0, originStep = 0, destStep = 0;
  SealId id(size_t r) const {
    SealId s = first;
    if (s.dest != kSealAllRanks) s.dest += static_cast<int>(r) * destStep;
    return s;
  }
  int originOf(size_t r) const { return origin + static_cast<int>(r) * originStep; }
};

// `rows` rows of `width` bytes between device memory (`dev`, rows `devPitch`
// apart) and a slot buffer (in or out) at `hostOff`, rows `hostPitch` apart.
// A sealed row's tag follows it on the host (hostPitch >= width + 16).
struct Copy2D {
  char* dev = nullptr;
  size_t devPitch = 0;
  bool hostIn = true;  // the slot's in buffer (else its out buffer)
  size_t hostOff = 0;
  size_t hostPitch = 0;
  size_t width = 0;
  size_t rows = 1;
  RowSeal seal;
  size_t bytes() const { return width * rows; }
};

struct Segment {
  std::vector<Copy2D> toHost;    // before the host part
  std::vector<Copy2D> toDevice;  // after it
  // The host part on the slot's buffers (in, out).
  std::function<void(char* in, char* out)> host;
};

class Plan {
 public:
  virtual ~Plan() = default;
  virtual size_t segments() const = 0;
  virtual Segment segment(size_t k) const = 0;
  // Bytes each of a slot's two buffers must hold.
  virtual size_t slotBytes() const = 0;
  virtual std::string what() const = 0;
  // Whether copies carry sealed rows (then some have seal.on).
  virtual bool sealed() const { return false; }
};

// Whether a collective of this kind can be sealed end to end by the GPU.
bool sealable(CollKind kind);
struct SealSpec {
  bool on = false;
  uint32_t seq = 0;  // the communicator's sealed-collective sequence number
};

// Runs one segment's host collective (host buffers, blocking).
using HostCollFn = std::function<void(const CollCall&)>;

// `call` holds device pointers; counts/displacements of all-to-all-v are
// copied, so the caller's arrays may go. `segBytes` > 0.
// `seal.on` is honoured only where sealable(call.kind) and count > 0.
std::unique_ptr<Plan> planCollective(const CollCall& call, int rank, int nranks, size_t segBytes, HostCollFn run,
                                     SealSpec seal = {});

struct P2PItem {
  bool isSend = true;
  char* buf = nullptr;  // device memory
  size_t bytes = 0;
  int peer = 0;
  uint32_t sealSeq = 0;  // sealed plans: the message's number between its two ranks
};
// A round's host messages, posted together (one host group).
struct HostMsg {
  bool isSend;
  char* host;
  size_t bytes;
  int peer;
  bool preSealed = false;
};
using HostGroupFn = std::function<void(const std::vector<HostMsg>&)>;
// `rank` is this rank (the origin of sealed sends).
std::unique_ptr<Plan> planP2P(std::vector<P2PItem> items, size_t chunkBytes, HostGroupFn run, int rank = 0,
                              bool seal = false);

}  // namespace gdr::paths::staged

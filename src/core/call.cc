#include "core/call.h"

#include "core/op_sig.h"

namespace gdr {

namespace {

// singleCopyFrom: where a back end can move a message with one copy (shm:
// the receiver reads the sender's buffer, and the sender's send completes
// only once it has been read), from what size it should. Measured on the
// 2-core machine against the FIFO path (bench/results/host-2core.md,
// session 4):
// - all-gather, all-to-all(v), reduce-scatter: every rank sends and receives
//   as much at once, so finishing a send early gains nothing: from 64 KiB;
// - reduce: the receiver adds what arrives; through the FIFO the sender's
//   copy runs beside the receiver's reduction, and the non-root is otherwise
//   idle: from 1 MiB;
// - all-reduce, broadcast, barrier (and send/recv): from 256 KiB.
constexpr size_t kKiB = 1024;

}  // namespace

const CollTraits kCollTraits[kNumCollKinds] = {
    // name            reduces rooted rankOrderFree layout  singleCopyFrom
    {"allreduce", true, false, true, Layout::Whole, kSingleCopyFrom},
    {"bcast", false, true, true, Layout::Whole, kSingleCopyFrom},
    {"reduce", true, true, true, Layout::Whole, 1024 * kKiB},
    {"allgather", false, false, false, Layout::GatherOut, 64 * kKiB},
    {"reducescatter", true, false, false, Layout::ScatterIn, 64 * kKiB},
    {"alltoall", false, false, false, Layout::BlockPerPeer, 64 * kKiB},
    {"alltoallv", false, false, false, Layout::Vectors, 64 * kKiB},
    {"barrier", false, false, true, Layout::None, kSingleCopyFrom},
};

const CollTraits kUnknownTraits{"unknown", false, false, false, Layout::None, kSingleCopyFrom};

}  // namespace gdr

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
// - broadcast, all-reduce, barrier: from 256 KiB. Broadcast's copy is shared
//   by both ranks (transport/shm/cma_copy.h), which beats the FIFO's two
//   copies from 256 KiB (0.52-0.62x of 00cdb4b's time at 256 KiB-1 MiB);
//   at 128 KiB the root waiting for its reader cost 3.3x the FIFO's time in
//   back-to-back broadcasts (2.99 against 8.69 us, session 14);
// - send/recv: kSingleCopyFrom.
//
// singleCopyFromOwnCores: the same where no two ranks of the host share a
// core. Broadcast from 32 KiB: then the root's wait for its reader is a core
// the shared copy uses, and on the AMD EPYC VM (session 22) the FIFO's two
// copies ran at 7-9 GB/s, so np 2 broadcast at 32-128 KiB took 0.62-1.16x
// Open MPI's time through the FIFO and 1.33-1.73x single-copy, in halves
// (bench/results/host-2core.md, session 22). On a VM whose FIFO is fast
// (session 14's: 2.99 us at 128 KiB) it costs up to 3x there, but stays
// ahead of Open MPI's single copy, which it halves. Where ranks share cores the
// root waiting for a reader that is not running cost 1.4-4x (np 3-8, 32-128
// KiB), so the 256 KiB above stands there.
//
// sharedCopy: whether the sender of a single-copy message copies part of it
// into the receiver's buffer (transport/shm/cma_copy.h). Where the sender
// is otherwise idle until the receiver is done (broadcast; send/recv, see
// RecvOp::shareCopy) that halves the copy's time: np 2 broadcast 128 KiB-
// 4 MiB 0.30-0.69x of its time alone. Where every rank sends and receives
// at once it costs: np 2 all-gather read 1.16-1.52x slower with it, as each
// rank's stores into the other's buffer take the lines from the core that
// reads them next (bench/results/host-2core.md, session 12).
constexpr size_t kKiB = 1024;

}  // namespace

const CollTraits kCollTraits[kNumCollKinds] = {
    // name            reduces rooted rankOrderFree layout  singleCopyFrom sharedCopy ...OwnCores
    {"allreduce", true, false, true, Layout::Whole, 256 * kKiB, false, 0},
    {"bcast", false, true, true, Layout::Whole, 256 * kKiB, true, 32 * kKiB},
    {"reduce", true, true, true, Layout::Whole, 1024 * kKiB, false, 0},
    {"allgather", false, false, false, Layout::GatherOut, 64 * kKiB, false, 0},
    {"reducescatter", true, false, false, Layout::ScatterIn, 64 * kKiB, false, 0},
    {"alltoall", false, false, false, Layout::BlockPerPeer, 64 * kKiB, false, 0},
    {"alltoallv", false, false, false, Layout::Vectors, 64 * kKiB, false, 0},
    {"barrier", false, false, true, Layout::None, 256 * kKiB, false, 0},
};

const CollTraits kUnknownTraits{"unknown", false, false, false, Layout::None, kSingleCopyFrom, false, 0};

}  // namespace gdr

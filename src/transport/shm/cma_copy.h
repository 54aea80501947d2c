// Single-copy moves between two processes of one host (process_vm_readv /
// process_vm_writev), and the sharing of one such copy by both ranks.
//
// A single-copy send completes only once its receiver has read it, so the
// sender's core sits idle for the whole copy. Shared, the copy is cut into
// pieces that both ranks claim from one counter in the message's slot: the
// receiver reads pieces from the sender's buffer, the sender writes pieces
// into the receiver's destination (published in the slot once the receiver
// has matched the message), each on its own core. Whichever rank is not
// running leaves the rest to the other, so it is never slower than one copy.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace gdr::transport::shm {

// In the payload of a single-copy message's slot (which carries no payload).
struct alignas(64) CopyShare {
  std::atomic<uint64_t> dst;   // the receiver's destination; 0 until it is known
  std::atomic<uint32_t> next;  // the next piece to claim
  std::atomic<uint32_t> done;  // pieces copied
  uint32_t pieces;
  uint32_t pieceBytes;
};

// The sender's set-up before it publishes the slot.
void initShare(CopyShare* share, size_t bytes);

// Claims and copies pieces until none is left to claim; returns how many it
// copied. `local` is this rank's end of the whole message, `remote` the
// peer's; `write` moves local -> remote (the sender), else remote -> local.
size_t copyPieces(CopyShare* share, bool write, pid_t pid, int peerRank, char* local, uint64_t remote,
                size_t bytes);

// One copy of `len` bytes between this process and `pid`, whole (short
// transfers are continued); a failure throws, naming the peer.
void cmaCopy(bool write, pid_t pid, int peerRank, void* local, uint64_t remote, size_t len);

}  // namespace gdr::transport::shm

#include "transport/shm/cma_copy.h"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>

#include "core/error.h"
#include "transport/peer_liveness.h"

namespace gdr::transport::shm {

void initShare(CopyShare* share, size_t bytes) {
  // Halves, one for each rank, as each call costs some 1-2 us of page
  // pinning and set-up (eighths of 32 KiB and up read 1.1-1.3x Open MPI at
  // 128-512 KiB, halves 1.4-1.7x: bench/results/host-2core.md, session 12);
  // no piece under 16 KiB (a 32 KiB broadcast, single-copy from there where
  // ranks have cores of their own, is two: 1.33-1.39x Open MPI at np 2,
  // session 22) or over 1 MiB (the rank that runs takes more of a large
  // message when the other is late); a multiple of 4 KiB. The count fits its
  // 32 bits up to 4 PiB a message.
  size_t piece = std::clamp<size_t>(bytes / 2, size_t{16} << 10, size_t{1} << 20);
  share->pieceBytes = static_cast<uint32_t>((piece + 4095) & ~size_t{4095});
  share->pieces = static_cast<uint32_t>((bytes + share->pieceBytes - 1) / share->pieceBytes);
  share->dst.store(0, std::memory_order_relaxed);
  share->next.store(0, std::memory_order_relaxed);
  share->done.store(0, std::memory_order_relaxed);
}

size_t copyPieces(CopyShare* share, bool write, pid_t pid, int peerRank, char* local,
                  uint64_t remote, size_t bytes) {
  size_t copied = 0;
  const uint32_t pieces = share->pieces;
  const size_t pieceBytes = share->pieceBytes;
  while (share->next.load(std::memory_order_relaxed) < pieces) {
    const uint32_t i = share->next.fetch_add(1, std::memory_order_relaxed);
    if (i >= pieces) break;
    const size_t off = i * pieceBytes;
    cmaCopy(write, pid, peerRank, local + off, remote + off, std::min(pieceBytes, bytes - off));
    share->done.fetch_add(1, std::memory_order_release);
    ++copied;
  }
  return copied;
}

void cmaCopy(bool write, pid_t pid, int peerRank, void* local, uint64_t remote, size_t len) {
  char* at = static_cast<char*>(local);
  while (len) {
    struct iovec l = {at, len};
    struct iovec r = {reinterpret_cast<void*>(remote), len};
    const ssize_t n =
        write ? process_vm_writev(pid, &l, 1, &r, 1, 0) : process_vm_readv(pid, &l, 1, &r, 1, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      // ESRCH: the peer exited (or is exiting) while the message was posted.
      // That is a peer failure, whatever the OS call that saw it first.
      if (errno == ESRCH || !processAlive(pid))
        throw RemoteError(strprintf("rank %d (pid %d) exited while this rank %s its message", peerRank,
                                    (int)pid, write ? "wrote" : "read"));
      throw SystemError(strprintf("%s of %zu bytes %s rank %d (pid %d)",
                                  write ? "process_vm_writev" : "process_vm_readv", len,
                                  write ? "to" : "from", peerRank, (int)pid),
                        errno);
    }
    if (n == 0) throw RemoteError(strprintf("rank %d's buffer vanished during a copy", peerRank));
    at += n;
    remote += static_cast<uint64_t>(n);
    len -= static_cast<size_t>(n);
  }
}

}  // namespace gdr::transport::shm

// The software NIC across processes of one machine (host memory): every QP
// publishes a small shared-memory segment (/gdr-snq-<qpn>: owner pid, error
// flag, posted-receive count, an inbox of immediates written by its peer)
// and every process its MR table (/gdr-snm-<pid>). A writer in another
// process finds the target QP's segment, checks the rkey and range in the
// owner's table, copies with process_vm_writev (the kernel's cross-memory
// attach, as the shm transport uses) and appends the immediate to the
// inbox; the owner turns inbox entries into receive completions when it
// polls. QP numbers are unique on the machine (the segment is created
// exclusively). A registered device range is published with the CUDA IPC
// handles of the allocations it overlaps: a writer in another process opens
// a handle once (softnic.cc keeps it) and copies with CUDA.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace gdr::transport::ib::softnic {

constexpr uint32_t kInbox = 4096;  // power of two
constexpr uint32_t kMaxMrs = 1024;
constexpr uint32_t kMaxAllocs = 4;  // CUDA allocations one device MR may overlap

struct QpShm {
  uint32_t magic;
  pid_t pid;
  uint32_t dev;  // the owner's device index (softnic<dev>): an rkey must be of it
  std::atomic<uint32_t> error;
  std::atomic<uint64_t> recvPosted;  // by the owner
  std::atomic<uint64_t> recvTaken;   // by the peer's writes with immediate
  std::atomic<uint64_t> tail;        // inbox entries written (peer)
  uint64_t head;                     // inbox entries read (owner only)
  struct Entry {
    uint32_t imm;
    uint32_t bytes;
  } inbox[kInbox];
};

struct MrShm {
  struct Mr {
    std::atomic<uint32_t> rkey;  // 0: free
    uint32_t access;
    uint32_t dev;  // the device (softnic<dev>) the range is registered on
    uint64_t addr, len;
    // Device memory: the CUDA allocations the range overlaps (a range is
    // page-aligned, so it may reach into a neighbouring allocation).
    uint32_t nalloc;
    struct Alloc {
      uint64_t base, size;    // in the owner's address space
      unsigned char ipc[64];  // cudaIpcMemHandle_t
    } alloc[kMaxAllocs];
  } mrs[kMaxMrs];
};

// This process's QP segment for `qpn` (created, exclusive); null when taken.
QpShm* createQpShm(uint32_t qpn);
void destroyQpShm(uint32_t qpn, QpShm* q);
// Another process's QP segment, mapped once and kept; null if none.
QpShm* openQpShm(uint32_t qpn);
// This process's MR table, and another's (mapped once, kept).
MrShm* myMrShm();
MrShm* peerMrShm(pid_t pid);
// Copies into another process's memory; false on failure (errno set).
bool writeRemote(pid_t pid, uint64_t raddr, const void* const* src, const size_t* len, int n);

}  // namespace gdr::transport::ib::softnic

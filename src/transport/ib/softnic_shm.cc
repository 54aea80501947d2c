#include "transport/ib/softnic_shm.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string>

namespace gdr::transport::ib::softnic {

namespace {

constexpr uint32_t kMagic = 0x534e4943;  // "SNIC"

std::string qpName(uint32_t qpn) { return "/gdr-snq-" + std::to_string(qpn); }
std::string mrName(pid_t pid) { return "/gdr-snm-" + std::to_string(pid); }

void* mapShm(const std::string& name, size_t bytes, bool create) {
  int fd = create ? shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600)
                  : shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) return nullptr;
  if (create && ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    close(fd);
    shm_unlink(name.c_str());
    return nullptr;
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  return p == MAP_FAILED ? nullptr : p;
}

// Peers' segments stay mapped for the life of the process (a handful).
std::mutex gMu;
std::map<uint32_t, QpShm*> gPeerQps;
std::map<pid_t, MrShm*> gPeerMrs;
std::set<uint32_t>* gMine = new std::set<uint32_t>;  // this process's QP segments

// A process that exits without destroying its QPs (an abort, exit() from a
// test) leaves no segment behind; only a killed one does, and the next
// writer that finds it dead removes it (openQpShm).
void unlinkMine() {
  std::lock_guard<std::mutex> g(gMu);
  for (uint32_t qpn : *gMine) shm_unlink(qpName(qpn).c_str());
  gMine->clear();
}

}  // namespace

QpShm* createQpShm(uint32_t qpn) {
  auto* q = static_cast<QpShm*>(mapShm(qpName(qpn), sizeof(QpShm), true));
  if (!q) return nullptr;
  q->pid = getpid();
  q->magic = kMagic;  // zero-filled otherwise
  static const bool hooked = (std::atexit(unlinkMine), true);
  (void)hooked;
  std::lock_guard<std::mutex> g(gMu);
  gMine->insert(qpn);
  return q;
}

void destroyQpShm(uint32_t qpn, QpShm* q) {
  q->error.store(1);
  munmap(q, sizeof(QpShm));
  shm_unlink(qpName(qpn).c_str());
  std::lock_guard<std::mutex> g(gMu);
  gMine->erase(qpn);
}

QpShm* openQpShm(uint32_t qpn) {
  std::lock_guard<std::mutex> g(gMu);
  auto it = gPeerQps.find(qpn);
  if (it != gPeerQps.end()) return it->second;
  auto* q = static_cast<QpShm*>(mapShm(qpName(qpn), sizeof(QpShm), false));
  if (q && q->magic != kMagic) {
    munmap(q, sizeof(QpShm));
    q = nullptr;
  } else if (q && kill(q->pid, 0) != 0 && errno == ESRCH) {  // its process was killed
    munmap(q, sizeof(QpShm));
    shm_unlink(qpName(qpn).c_str());
    q = nullptr;
  }
  if (q) gPeerQps[qpn] = q;
  return q;
}

MrShm* myMrShm() {
  static MrShm* mine = [] {
    const std::string name = mrName(getpid());
    shm_unlink(name.c_str());  // a dead process's table under a reused pid
    auto* m = static_cast<MrShm*>(mapShm(name, sizeof(MrShm), true));
    // Unlinked at exit so /dev/shm keeps nothing of a finished process.
    if (m) std::atexit([] { shm_unlink(mrName(getpid()).c_str()); });
    return m;
  }();
  return mine;
}

MrShm* peerMrShm(pid_t pid) {
  std::lock_guard<std::mutex> g(gMu);
  auto it = gPeerMrs.find(pid);
  if (it != gPeerMrs.end()) return it->second;
  auto* m = static_cast<MrShm*>(mapShm(mrName(pid), sizeof(MrShm), false));
  if (m) gPeerMrs[pid] = m;
  return m;
}

bool writeRemote(pid_t pid, uint64_t raddr, const void* const* src, const size_t* len, int n) {
  iovec local[8];
  size_t total = 0;
  if (n > 8) {
    errno = EINVAL;
    return false;
  }
  for (int i = 0; i < n; ++i) {
    local[i] = {const_cast<void*>(src[i]), len[i]};
    total += len[i];
  }
  size_t done = 0;
  while (done < total) {  // process_vm_writev may write less than asked
    iovec remote{reinterpret_cast<void*>(raddr + done), total - done};
    // Skip what went already.
    iovec rest[8];
    int k = 0;
    size_t skip = done;
    for (int i = 0; i < n; ++i) {
      if (skip >= local[i].iov_len) {
        skip -= local[i].iov_len;
        continue;
      }
      rest[k++] = {static_cast<char*>(local[i].iov_base) + skip, local[i].iov_len - skip};
      skip = 0;
    }
    ssize_t w = process_vm_writev(pid, rest, k, &remote, 1, 0);
    if (w <= 0) return false;
    done += static_cast<size_t>(w);
  }
  return true;
}

}  // namespace gdr::transport::ib::softnic

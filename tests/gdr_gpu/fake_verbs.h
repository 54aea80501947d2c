// A fake libibverbs table for tests: the memory-registration entry points
// record what they receive (for a dma-buf, the fd's size as the kernel sees
// it, read before the caller closes the fd) and hand out MRs with fresh keys.
// Everything else in the table stays null. Single-threaded use.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <vector>

#include "transport/ib/ibv_api.h"

namespace gdr::testing {

struct FakeVerbs {
  struct Call {
    bool dmabuf = false;
    void* addr = nullptr;     // reg_mr
    uint64_t offset = 0;      // reg_dmabuf_mr
    size_t len = 0;
    uint64_t iova = 0;
    int fd = -1;
    off_t fdSize = -1;        // lseek(fd, 0, SEEK_END)
    bool fdIsFile = false;    // fstat succeeded
    int access = 0;
  };
  std::vector<Call> calls;
  int live = 0;
  int deregs = 0;
  uint32_t nextKey = 100;
  bool failNext = false;  // the next registration fails with EFAULT

  static FakeVerbs& get() {
    static FakeVerbs f;
    return f;
  }
  void reset() { *this = FakeVerbs(); }

  static transport::ib::IbvApi table() {
    transport::ib::IbvApi a{};
    a.reg_mr = &regMr;
    a.reg_dmabuf_mr = &regDmaBufMr;
    a.dereg_mr = &deregMr;
    return a;
  }

 private:
  static ibv_mr* make(const Call& c) {
    FakeVerbs& f = get();
    f.calls.push_back(c);
    if (f.failNext) {
      f.failNext = false;
      errno = EFAULT;
      return nullptr;
    }
    auto* mr = new ibv_mr{};
    mr->addr = c.dmabuf ? reinterpret_cast<void*>(c.iova) : c.addr;
    mr->length = c.len;
    mr->lkey = f.nextKey++;
    mr->rkey = f.nextKey++;
    ++f.live;
    return mr;
  }
  static ibv_mr* regMr(ibv_pd*, void* addr, size_t len, int access) {
    Call c;
    c.addr = addr;
    c.len = len;
    c.access = access;
    return make(c);
  }
  static ibv_mr* regDmaBufMr(ibv_pd*, uint64_t offset, size_t len, uint64_t iova, int fd,
                             int access) {
    Call c;
    c.dmabuf = true;
    c.offset = offset;
    c.len = len;
    c.iova = iova;
    c.fd = fd;
    c.access = access;
    struct stat st {};
    c.fdIsFile = fstat(fd, &st) == 0;
    c.fdSize = lseek(fd, 0, SEEK_END);
    return make(c);
  }
  static int deregMr(ibv_mr* mr) {
    FakeVerbs& f = get();
    --f.live;
    ++f.deregs;
    delete mr;
    return 0;
  }
};

}  // namespace gdr::testing

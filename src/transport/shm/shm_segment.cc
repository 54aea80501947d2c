#include "transport/shm/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <utility>

#include "core/error.h"

namespace gdr::transport::shm {

Mapping Mapping::create(const std::string& name, size_t bytes) {
  int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) throw SystemError("shm_open(" + name + ") to create", errno);
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    int e = errno;
    close(fd);
    shm_unlink(name.c_str());
    throw SystemError(strprintf("ftruncate of shared memory %s to %zu bytes (is /dev/shm full?)",
                                name.c_str(), bytes),
                      e);
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int e = errno;
  close(fd);
  if (p == MAP_FAILED) {
    shm_unlink(name.c_str());
    throw SystemError("mmap of shared memory " + name, e);
  }
  Mapping m;
  m.name_ = name;
  m.data_ = static_cast<char*>(p);
  m.size_ = bytes;
  m.owner_ = true;
  return m;
}

Mapping Mapping::open(const std::string& name) {
  int fd = shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) throw SystemError("shm_open(" + name + ") of a peer's segment", errno);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    throw SystemError("fstat of shared memory " + name, e);
  }
  void* p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int e = errno;
  close(fd);
  if (p == MAP_FAILED) throw SystemError("mmap of shared memory " + name, e);
  Mapping m;
  m.name_ = name;
  m.data_ = static_cast<char*>(p);
  m.size_ = static_cast<size_t>(st.st_size);
  return m;
}

void prefault(void* p, size_t bytes) noexcept {
#ifdef MADV_POPULATE_WRITE
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t b = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
  const uintptr_t e = reinterpret_cast<uintptr_t>(p) + bytes;
  madvise(reinterpret_cast<void*>(b), e - b, MADV_POPULATE_WRITE);
#else
  (void)p;
  (void)bytes;
#endif
}

Mapping::Mapping(Mapping&& o) noexcept { *this = std::move(o); }

Mapping& Mapping::operator=(Mapping&& o) noexcept {
  if (this != &o) {
    this->~Mapping();
    name_ = std::move(o.name_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    owner_ = std::exchange(o.owner_, false);
  }
  return *this;
}

void Mapping::unlink() {
  if (owner_) shm_unlink(name_.c_str());
  owner_ = false;
}

Mapping::~Mapping() {
  if (data_) munmap(data_, size_);
  data_ = nullptr;
  unlink();
}

}  // namespace gdr::transport::shm

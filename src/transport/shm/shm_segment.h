// Creating, mapping and unlinking POSIX shared-memory segments.
#pragma once

#include <cstddef>
#include <string>

namespace gdr::transport::shm {

class Mapping {
 public:
  Mapping() = default;
  // Creates (exclusively) and maps a segment of `bytes`, zero-filled.
  static Mapping create(const std::string& name, size_t bytes);
  // Maps an existing segment (size read from the file).
  static Mapping open(const std::string& name);
  Mapping(Mapping&& o) noexcept;
  Mapping& operator=(Mapping&& o) noexcept;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping();

  char* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& name() const { return name_; }
  // Removes the name; the memory stays mapped by whoever has it.
  void unlink();

 private:
  std::string name_;
  char* data_ = nullptr;
  size_t size_ = 0;
  bool owner_ = false;
};

// Best effort: maps [p, p + bytes) writable now (MADV_POPULATE_WRITE), so a
// first touch inside a timed loop is not a page fault per 4 KiB. Never
// writes the memory; ignored where the kernel lacks it.
void prefault(void* p, size_t bytes) noexcept;

}  // namespace gdr::transport::shm

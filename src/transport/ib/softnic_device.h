// The software NIC's reach into device memory (softnic.cc is the NIC):
// copies that may touch device memory, and device memory across processes
// through CUDA IPC. A registered device range carries the CUDA IPC handles
// of its allocations (exportDevice, at registration), which a writer in
// another process opens once per allocation and keeps (the handle, not the
// rkey, is the key: per-operation registrations of one buffer share one
// mapping). Kept until the process ends: a mapping of an allocation its
// owner freed only holds that memory, it is never written again (its rkeys
// are gone from the owner's table).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "transport/ib/softnic_shm.h"

namespace gdr::transport::ib::softnic {

bool isDevice(const void* p);
// memcpy, or a CUDA copy where either side is device memory.
void copyBytes(void* dst, const void* src, size_t n);
// Publishes in `m` the allocations [addr, addr + len) overlaps; false when
// no part of it is device memory.
bool exportDevice(uintptr_t addr, size_t len, MrShm::Mr& m);
// Whether a range being registered may hold device memory.
bool mayBeDevice(uintptr_t addr, size_t len);
// Where a write of [raddr, raddr + n) into process `pid`'s device MR `m`
// lands in this process (null: not inside one allocation, or not mapped).
// The caller holds the NIC's lock.
char* deviceTarget(pid_t pid, const MrShm::Mr& m, uint64_t raddr, uint64_t n);

}  // namespace gdr::transport::ib::softnic

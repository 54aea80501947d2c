// Where a buffer lives: host memory (pageable, pinned or managed as seen by
// the host) or device memory. Without CUDA support every pointer is host.
#pragma once

namespace gdr {

enum class MemKind { Host, Device };
MemKind memoryKind(const void* p);
const char* memKindName(MemKind k);

}  // namespace gdr

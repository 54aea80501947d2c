// A hint for lines that one core writes and another reads next: CLDEMOTE
// moves the line out of this core's private caches toward the shared last
// level, so the other core's access finds it there instead of snooping this
// core for it. It is a hint in the NOP space: a CPU without it does nothing.
#pragma once

namespace gdr::transport::shm {

inline void demoteLine(const void* p) {
#if defined(__x86_64__)
  asm volatile("cldemote (%0)" : : "r"(p) : "memory");
#else
  (void)p;
#endif
}

// Asks for a line this core writes next in exclusive state ahead of the
// store (PREFETCHW; a NOP where the CPU lacks it), so the store does not
// wait for the other core's copy to be invalidated.
inline void prefetchForWrite(const void* p) {
#if defined(__x86_64__)
  asm volatile("prefetchw (%0)" : : "r"(p));
#else
  __builtin_prefetch(p, 1, 3);
#endif
}

}  // namespace gdr::transport::shm

// The staged path's pinned slots: the pipeline's host buffers.
#pragma once

#if GDR_HAVE_CUDA
#include <cstddef>

namespace gdr::paths::staged {

constexpr size_t kSlots = 4;  // pipeline depth (segments in flight)

// Pinned buffers of the pipeline: an in and an out buffer per slot, and
// (GPU sealing only, made on first use) a device buffer per slot that rows
// are sealed into before they are copied out.
struct SlotSet {
  size_t bytes = 0;
  char* in[kSlots] = {};
  char* out[kSlots] = {};
  char* sealDev[kSlots] = {};
  explicit SlotSet(size_t b);
  ~SlotSet();
  SlotSet(const SlotSet&) = delete;
  SlotSet& operator=(const SlotSet&) = delete;
  // Sealed operations are never captured and are queued under the enqueue
  // lock, so this is never called concurrently.
  char* sealBuf(size_t sl);
};

}  // namespace gdr::paths::staged
#endif

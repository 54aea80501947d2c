#include "core/memory_kind.h"

#include "core/cuda.h"

#if GDR_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace gdr {

MemKind memoryKind(const void* p) {
#if GDR_HAVE_CUDA
  if (!p) return MemKind::Host;
  // Without a usable device every pointer is host memory; asking the
  // runtime about each pointer would cost a failed call every time.
  if (!anyCudaDevice()) return MemKind::Host;
  cudaPointerAttributes a{};
  cudaError_t rc = cudaPointerGetAttributes(&a, p);
  if (rc != cudaSuccess) {
    cudaGetLastError();  // no driver or device: the pointer is host memory
    return MemKind::Host;
  }
  return a.type == cudaMemoryTypeDevice ? MemKind::Device : MemKind::Host;
#else
  (void)p;
  return MemKind::Host;
#endif
}

const char* memKindName(MemKind k) { return k == MemKind::Device ? "device" : "host"; }

}  // namespace gdr

#include "paths/staged/slots.h"

#if GDR_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "core/cuda.h"
#include "paths/staged/driver.h"

namespace gdr::paths::staged {

SlotSet::SlotSet(size_t b) : bytes(b) {
  RelaxedCapture relaxed;
  for (size_t i = 0; i < kSlots; ++i) {
    checkCuda(cudaHostAlloc(reinterpret_cast<void**>(&in[i]), bytes, cudaHostAllocPortable),
              "cudaHostAlloc (staged path)");
    checkCuda(cudaHostAlloc(reinterpret_cast<void**>(&out[i]), bytes, cudaHostAllocPortable),
              "cudaHostAlloc (staged path)");
  }
}

SlotSet::~SlotSet() {
  for (size_t i = 0; i < kSlots; ++i) {
    if (in[i]) cudaFreeHost(in[i]);
    if (out[i]) cudaFreeHost(out[i]);
    if (sealDev[i]) cudaFree(sealDev[i]);
  }
}

char* SlotSet::sealBuf(size_t sl) {
  if (!sealDev[sl])
    checkCuda(cudaMalloc(reinterpret_cast<void**>(&sealDev[sl]), bytes),
              "cudaMalloc (sealing) (staged path)");
  return sealDev[sl];
}

}  // namespace gdr::paths::staged
#endif

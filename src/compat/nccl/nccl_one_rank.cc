#include "compat/nccl/nccl_one_rank.h"

#include "compat/nccl/nccl_group.h"
#include "core/cuda.h"

#if GDR_HAVE_CUDA
#include "device/device_copy.h"
#endif

namespace gdr::nccl {

bool oneRankCopy(const char* fn, ncclComm_t comm, const void* src, void* dst, size_t count,
                 ncclDataType_t type, cudaStream_t stream, ncclResult_t* result) {
#if GDR_HAVE_CUDA
  // Without a usable device the copy is the host path's (host buffers).
  if (!anyCudaDevice() || !comm || comm->magic != kCommMagic || comm->nranks != 1 || groupActive()) return false;
  const int t = static_cast<int>(type);
  if (t < 0 || t >= static_cast<int>(ncclNumTypes)) return false;
  size_t bytes = 0;
  if (__builtin_mul_overflow(count, typeBytes(type), &bytes)) return false;
  if (bytes && (!src || !dst)) return false;
  // A failed or revoked communicator takes the full path, which reports why.
  if (comm->initState.load() != ncclSuccess || !comm->initJoined.load(std::memory_order_acquire)) return false;
  gdrResult_t async = gdrSuccess;
  if (gdrCommGetAsyncError(comm->gdr, &async) != gdrSuccess || async != gdrSuccess) return false;
  *result = guard(fn, comm, [&]() -> ncclResult_t {
    if (bytes && src != dst) {
      checkCuda(dev::copyOnStream(dst, src, bytes, comm->cudaDev, stream), "the one-rank copy");
    }
    return ncclSuccess;
  });
  return true;
#else
  (void)fn, (void)comm, (void)src, (void)dst, (void)count, (void)type, (void)stream, (void)result;
  return false;
#endif
}

}  // namespace gdr::nccl

#include "paths/staged/driver.h"

#if GDR_HAVE_CUDA
#include "core/error.h"

namespace gdr::paths::staged {

const DriverApi& driver() {
  static const DriverApi api = [] {
    DriverApi a;
    auto get = [](const char* name, int version, void** fn) {
      cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
      cudaError_t rc = cudaGetDriverEntryPointByVersion(name, fn, version, cudaEnableDefault, &q);
      if (rc != cudaSuccess || q != cudaDriverEntryPointSuccess || !*fn) {
        cudaGetLastError();
        *fn = nullptr;
      }
    };
    get("cuStreamWriteValue32", 11070, reinterpret_cast<void**>(&a.writeValue32));
    get("cuStreamWaitValue32", 11070, reinterpret_cast<void**>(&a.waitValue32));
    get("cuGetErrorString", 6000, reinterpret_cast<void**>(&a.errorString));
    return a;
  }();
  if (!api.writeValue32 || !api.waitValue32)
    throw NotSupported(
        "the CUDA driver lacks cuStreamWriteValue32/cuStreamWaitValue32, which the staged path "
        "needs");
  return api;
}

void cuOk(CUresult rc, const char* what) {
  if (rc != CUDA_SUCCESS) {
    const char* s = nullptr;
    if (driver().errorString) driver().errorString(rc, &s);
    throw Error(gdrCudaError,
                strprintf("%s: %s (staged path)", what, s ? s : "unknown CUDA driver error"));
  }
}

}  // namespace gdr::paths::staged
#endif

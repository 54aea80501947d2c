#include "paths/direct/order.h"

#include "core/error.h"

#if GDR_HAVE_CUDA
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#endif

namespace gdr::paths::direct {

OrderChoice chooseOrder(const std::string& order, ModuleLoading loading) {
  if (order != "auto" && order != "flags" && order != "host")
    throw InvalidArgument("GDR_DIRECT_ORDER=" + order + " is not auto, flags or host");
  OrderChoice c;
  if (order == "host") {
    c.why = "GDR_DIRECT_ORDER=host";
    return c;
  }
  if (order == "flags") {
    c.flags = true;
    c.risky = loading != ModuleLoading::Eager;
    c.why = c.risky ? "GDR_DIRECT_ORDER=flags, although CUDA may load kernels lazily: a kernel "
                      "the program launches for the first time while an operation waits can "
                      "deadlock the process; set CUDA_MODULE_LOADING=EAGER"
                    : "GDR_DIRECT_ORDER=flags";
    return c;
  }
  c.flags = loading == ModuleLoading::Eager;
  c.why = c.flags ? "GDR_DIRECT_ORDER=auto and CUDA loads modules eagerly "
                    "(CUDA_MODULE_LOADING=EAGER): the stream waits on flags"
          : loading == ModuleLoading::Lazy
              ? "GDR_DIRECT_ORDER=auto and CUDA loads kernels lazily, which stream flags cannot "
                "survive (a kernel's first launch waits for the context to go idle): the call "
                "waits for its stream; set CUDA_MODULE_LOADING=EAGER for stream flags"
              : "GDR_DIRECT_ORDER=auto and the CUDA driver does not say how it loads modules: "
                "the call waits for its stream";
  return c;
}

ModuleLoading moduleLoading() {
#if GDR_HAVE_CUDA
  static const ModuleLoading mode = [] {
    PFN_cuModuleGetLoadingMode_v11070 get = nullptr;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuModuleGetLoadingMode", reinterpret_cast<void**>(&get),
                                         11070, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess || !get) {
      cudaGetLastError();
      return ModuleLoading::Unknown;
    }
    CUmoduleLoadingMode m{};
    if (get(&m) != CUDA_SUCCESS) return ModuleLoading::Unknown;
    return m == CU_MODULE_EAGER_LOADING  ? ModuleLoading::Eager
           : m == CU_MODULE_LAZY_LOADING ? ModuleLoading::Lazy
                                         : ModuleLoading::Unknown;
  }();
  return mode;
#else
  return ModuleLoading::Unknown;
#endif
}

}  // namespace gdr::paths::direct

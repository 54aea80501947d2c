// Which order the GPUDirect path keeps with the caller's stream
// (GDR_DIRECT_ORDER), chosen once per communicator and logged with why.
//
// Flags order (the stream waits on host-mapped words the path's progress
// thread writes; the call returns at once) is safe only where no kernel is
// loaded lazily: under CUDA's lazy module loading (CUDA_MODULE_LOADING unset
// or LAZY, the default since CUDA 12.2) the first launch of a kernel can
// wait for the context to go idle, and a context whose stream waits for the
// progress thread never goes idle while that thread's own CUDA calls (the
// software NIC's copies, an eager message's copy into device memory) wait
// behind the load: the process deadlocks (on the H200 machine flags order
// hangs under lazy loading and passes under CUDA_MODULE_LOADING=EAGER;
// bench/results/gpudirect.md). The path loads its own kernels up front, but
// the program's and the runtime's are out of its reach. So `auto` (the
// default) takes flags order where the driver says modules load eagerly,
// host order otherwise; `flags` and `host` force one.
#pragma once

#include <string>

namespace gdr::paths::direct {

enum class ModuleLoading { Unknown, Lazy, Eager };

struct OrderChoice {
  bool flags = false;
  std::string why;     // one line for the log
  bool risky = false;  // flags forced where kernels load lazily: warn
};

// `order`: GDR_DIRECT_ORDER's value (auto, flags or host; anything else
// throws InvalidArgument). Pure, for tests.
OrderChoice chooseOrder(const std::string& order, ModuleLoading loading);

// How this process's CUDA driver loads modules (cuModuleGetLoadingMode);
// Unknown without CUDA or where the driver cannot say.
ModuleLoading moduleLoading();

}  // namespace gdr::paths::direct

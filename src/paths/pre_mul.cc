#include "paths/pre_mul.h"

#include <cstring>

#include "core/cuda.h"
#include "core/datatype.h"
#include "core/error.h"
#include "core/scale.h"

#if GDR_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "device/device_scale.h"
#endif

namespace gdr::paths {

PreMulInput::PreMulInput(const CollCall& call, const PreMul& pm, int nranks, bool onDevice,
                         gdrStream_t stream)
    : call_(call), stream_(stream) {
  // The input's elements: a reduce-scatter reads one block per rank.
  const size_t n = traitsOf(call.kind).layout == Layout::ScatterIn
                       ? call.count * static_cast<size_t>(nranks)
                       : call.count;
  const size_t bytes = n * typeSize(call.type);
  const void* src = call.inPlace ? call.recvbuf : call.sendbuf;
  call_.op = gdrSum;
  call_.inPlace = false;
#if GDR_HAVE_CUDA
  auto s = reinterpret_cast<cudaStream_t>(stream);
  if (onDevice) {
    checkCuda(cudaMallocAsync(&device_, bytes ? bytes : 1, s), "cudaMallocAsync (PreMulSum input)");
    const cudaError_t rc = dev::launchScale(device_, src, n, call.type,
                                            pm.onDevice ? pm.pointer : nullptr, pm.value, s);
    if (rc != cudaSuccess) {
      cudaFreeAsync(device_, s);
      device_ = nullptr;
      checkCuda(rc, "PreMulSum scaling kernel");
    }
    call_.sendbuf = device_;
    return;
  }
  unsigned char scalar[8];
  std::memcpy(scalar, pm.value, sizeof(scalar));
  if (pm.onDevice) {
    checkCuda(cudaMemcpyAsync(scalar, pm.pointer, typeSize(call.type), cudaMemcpyDeviceToHost, s),
              "cudaMemcpyAsync (PreMulSum scalar)");
    checkCuda(cudaStreamSynchronize(s), "cudaStreamSynchronize (PreMulSum scalar)");
  }
#else
  if (onDevice || pm.onDevice) throw NotSupported("this build of gdrcoll has no CUDA support");
  const unsigned char* scalar = pm.value;
#endif
  host_.resize(bytes ? bytes : 1);
  scaleHost(host_.data(), src, n, call.type, scalar);
  call_.sendbuf = host_.data();
}

PreMulInput::~PreMulInput() {
#if GDR_HAVE_CUDA
  if (device_) cudaFreeAsync(device_, reinterpret_cast<cudaStream_t>(stream_));
#endif
}

}  // namespace gdr::paths

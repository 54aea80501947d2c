#include "transport/ib/gpu_dmabuf.h"

#include <unistd.h>

#include <mutex>

#include "core/error.h"
#include "core/log.h"

#if GDR_HAVE_CUDA
#include <cuda.h>
#include <cuda_runtime_api.h>
#endif

namespace gdr::transport::ib {

#if GDR_HAVE_CUDA
namespace {

struct DriverFns {
  CUresult (*getHandle)(void*, CUdeviceptr, size_t, CUmemRangeHandleType, unsigned long long) =
      nullptr;
  CUresult (*deviceGetAttribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*flushWrites)(CUflushGPUDirectRDMAWritesTarget, CUflushGPUDirectRDMAWritesScope) =
      nullptr;
  CUresult (*getErrorString)(CUresult, const char**) = nullptr;
};

template <typename F>
void entry(const char* sym, F* out) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  // 12000: the ABI these prototypes were written against.
  if (cudaGetDriverEntryPointByVersion(sym, &fn, 12000, cudaEnableDefault, &q) == cudaSuccess &&
      q == cudaDriverEntryPointSuccess)
    *out = reinterpret_cast<F>(fn);
  cudaGetLastError();
}

const DriverFns& driver() {
  static DriverFns d = [] {
    DriverFns f;
    entry("cuMemGetHandleForAddressRange", &f.getHandle);
    entry("cuDeviceGetAttribute", &f.deviceGetAttribute);
    entry("cuFlushGPUDirectRDMAWrites", &f.flushWrites);
    entry("cuGetErrorString", &f.getErrorString);
    return f;
  }();
  return d;
}

std::string cuText(CUresult r) {
  const char* s = nullptr;
  if (driver().getErrorString) driver().getErrorString(r, &s);
  return strprintf("CUDA driver error %d (%s)", static_cast<int>(r), s ? s : "?");
}

GpuNetCaps probeDevice(int dev) {
  GpuNetCaps c;
  c.gpuPresent = true;
  const DriverFns& d = driver();
  if (!d.deviceGetAttribute) {
    c.note = "cuDeviceGetAttribute not found through the runtime";
    return c;
  }
  auto attr = [&](CUdevice_attribute a) {
    int v = 0;
    if (d.deviceGetAttribute(&v, a, dev) != CUDA_SUCCESS) v = 0;
    return v;
  };
  c.rdmaSupported = attr(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED) != 0;
  c.writesOrdering = attr(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING);
  c.flushOptions = attr(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS);
  bool attrDmaBuf = attr(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED) != 0;
  c.dmaBuf = attrDmaBuf && d.getHandle;
  if (!attrDmaBuf)
    c.note = "the GPU driver reports no dma-buf support (needs the open kernel modules, "
             "CUDA 11.7+ and Linux 5.12+)";
  else if (!d.getHandle)
    c.note = "cuMemGetHandleForAddressRange not found in the driver";
  return c;
}

}  // namespace

GpuNetCaps probeGpuNetCaps() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n <= 0) {
    cudaGetLastError();
    GpuNetCaps c;
    c.note = "no CUDA device is visible";
    return c;
  }
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    cudaGetLastError();
    dev = 0;
  }
  static std::mutex mu;
  static GpuNetCaps cache[64];
  static bool have[64] = {};
  if (dev < 0 || dev >= 64) return probeDevice(dev);
  std::lock_guard<std::mutex> g(mu);
  if (!have[dev]) {
    cache[dev] = probeDevice(dev);
    have[dev] = true;
  }
  return cache[dev];
}

int exportDmaBuf(uintptr_t base, size_t len) {
  const DriverFns& d = driver();
  if (!d.getHandle)
    throw NotSupported("dma-buf export: cuMemGetHandleForAddressRange is not available");
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (base % page || len % page || len == 0)
    throw InvalidArgument(strprintf(
        "dma-buf export of %#llx + %zu: start and length must be multiples of %zu bytes",
        (unsigned long long)base, len, page));
  int fd = -1;
  CUresult r = d.getHandle(&fd, static_cast<CUdeviceptr>(base), len,
                           CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  if (r != CUDA_SUCCESS || fd < 0)
    throw Error(gdrCudaError,
                strprintf("cuMemGetHandleForAddressRange(dma-buf) of %zu bytes at %#llx: %s", len,
                          (unsigned long long)base, cuText(r).c_str()));
  return fd;
}

bool flushGpuRdmaWritesByDriver() {
  const DriverFns& d = driver();
  if (!d.flushWrites) return false;
  return d.flushWrites(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
                       CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER) == CUDA_SUCCESS;
}

#else  // no CUDA in this build

GpuNetCaps probeGpuNetCaps() {
  GpuNetCaps c;
  c.note = "this build has no CUDA support";
  return c;
}
int exportDmaBuf(uintptr_t, size_t) { throw NotSupported("dma-buf export: this build has no CUDA"); }
bool flushGpuRdmaWritesByDriver() { return false; }

#endif

}  // namespace gdr::transport::ib

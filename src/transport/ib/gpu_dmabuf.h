// The CUDA side of GPUDirect RDMA, without verbs: what the current GPU offers
// (dma-buf export, GPUDirect RDMA, write ordering, flush options) and the
// dma-buf export of a device range. Driver entry points are found through the
// runtime (cudaGetDriverEntryPointByVersion), so nothing links -lcuda; a
// build without CUDA answers "no GPU".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gdr::transport::ib {

struct GpuNetCaps {
  bool gpuPresent = false;
  bool dmaBuf = false;       // CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED and the export entry point
  bool rdmaSupported = false;  // CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED
  int writesOrdering = 0;      // CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING
  int flushOptions = 0;        // CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS
  std::string note;            // why something is missing
};
// For the current device (device 0 when none was set). Cached per device.
GpuNetCaps probeGpuNetCaps();

// Exports [base, base+len) of device memory as a dma-buf fd (the caller
// closes it). base and len must be multiples of the host page size. Throws
// NotSupported (no entry point / no GPU) or an Error(gdrCudaError) naming the
// CUDA error.
int exportDmaBuf(uintptr_t base, size_t len);

// cuFlushGPUDirectRDMAWrites for the current context, to the owner: makes
// NIC writes already landed in GPU memory visible to later work. False when
// the driver does not offer it.
bool flushGpuRdmaWritesByDriver();

}  // namespace gdr::transport::ib

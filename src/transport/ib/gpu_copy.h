// Copies that touch device memory from the transport's own threads (the
// eager receive copy-out into a device buffer, the software NIC's writes):
// one cudaMemcpyAsync on a non-blocking stream of the calling thread, then a
// wait for that stream only. Never the legacy default stream, which would
// wait for (and be waited on by) every blocking stream, the caller's
// included, while it sits in a stream wait for this very transfer.
#pragma once

#include <cstddef>

namespace gdr::transport::ib {

// dst = src, n bytes, either side device or host memory; throws
// gdr::Error(gdrCudaError) naming `what` on failure. Host-only builds: memcpy.
void gpuCopy(void* dst, const void* src, size_t n, const char* what);

}  // namespace gdr::transport::ib

// A stream wait on a host-mapped word done by a one-thread kernel: the
// staged path's alternative to cuStreamWaitValue32 (GDR_STAGED_WAIT=kernel).
// The kernel polls the word with volatile loads and a short sleep, so the
// stream moves on within microseconds of the host's store; the driver's
// stream wait was measured with a ~4 ms quantum on the H200 machine
// (bench/results/security.md, session 2). Capturable into CUDA graphs.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gdr::device {

// Work queued on `stream` after this runs once the word at `word` (device
// view of host-mapped memory) has reached `want` (wrap-safe: the word only
// grows). Returns the launch's error.
cudaError_t launchWaitGeq(const uint32_t* word, uint32_t want, cudaStream_t stream);

}  // namespace gdr::device

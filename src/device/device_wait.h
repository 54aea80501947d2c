// A stream's wait for a host-mapped word, as a kernel: one thread polls the
// word until it reaches `value` (cyclically, as CU_STREAM_WAIT_VALUE_GEQ
// compares: (int32_t)(word - value) >= 0), then the stream goes on.
//
// The alternative to cuStreamWaitValue32 for the GPUDirect path's flags
// order (GDR_DIRECT_WAIT): no stream memory operation, one thread block
// held while it waits. `timeoutNs` (0: none) bounds the poll as a last
// resort: whoever owns the word writes it on success and failure alike,
// well within that bound.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gdr::dev {

// Loads the kernel now (see preloadReduceKernels, device_reduce.h).
cudaError_t preloadWaitWord();
// `word`: the device address of host-mapped memory.
cudaError_t launchWaitWord(const uint32_t* word, uint32_t value, uint64_t timeoutNs,
                           cudaStream_t stream);

}  // namespace gdr::dev

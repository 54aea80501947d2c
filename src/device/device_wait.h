// A stream's wait for a host-mapped word, as a kernel: one thread polls the
// word until it reaches `value` (cyclically, as CU_STREAM_WAIT_VALUE_GEQ
// compares: (int32_t)(word - value) >= 0), then the stream goes on.
//
// Why not cuStreamWaitValue32: a stream memory wait stalls the hardware
// queue the stream is mapped to, and streams share a few such queues
// (CUDA_DEVICE_MAX_CONNECTIONS), so copies the progress thread issues on a
// stream of its own can sit behind the wait they are to end; a kernel that
// polls holds one thread block and no queue. `timeoutNs` (0: none) bounds
// the poll as a last resort: whoever owns the word writes it on success and
// failure alike, well within that bound.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gdr::dev {

// `word`: the device address of host-mapped memory.
// Loads the kernel now (see preloadReduceKernels, device_reduce.h).
cudaError_t preloadWaitWord();
cudaError_t launchWaitWord(const uint32_t* word, uint32_t value, uint64_t timeoutNs,
                           cudaStream_t stream);

}  // namespace gdr::dev

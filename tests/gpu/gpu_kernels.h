#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

// Spins ~spinCycles on the GPU, then sets p[0, n) to value.
cudaError_t testSpinThenFill(uint32_t* p, size_t n, uint32_t value, long long spinCycles, cudaStream_t s);
// Spins ~ns nanoseconds of GPU time (the global timer: no clock rate needed).
cudaError_t testSpinNs(unsigned long long ns, cudaStream_t s);
// p[i] += 1.
cudaError_t testAddOne(int32_t* p, size_t n, cudaStream_t s);

#include "device/stream_wait.h"

namespace gdr::device {

namespace {

__global__ void waitGeqKernel(const volatile uint32_t* word, uint32_t want) {
  unsigned ns = 32;
  while (static_cast<int32_t>(*word - want) < 0) {
    __nanosleep(ns);
    if (ns < 1024) ns *= 2;
  }
  __threadfence_system();  // what the host wrote before the word is seen after it
}

}  // namespace

cudaError_t launchWaitGeq(const uint32_t* word, uint32_t want, cudaStream_t stream) {
  waitGeqKernel<<<1, 1, 0, stream>>>(word, want);
  return cudaGetLastError();
}

}  // namespace gdr::device

// dev::copyOnStream, the one-rank collectives' copy: every way it can go
// (the kernel for aligned device buffers, cudaMemcpyAsync for unaligned,
// pinned-host, pageable-host and other-device ones, a device that is not
// current) gives the same bytes, including the sizes around a 16-byte vector
// and a size past one block's share. Exit 77 without a device.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "device/device_copy.h"

namespace {

int failures = 0;

void check(bool ok, const char* what, size_t bytes, size_t srcOff, size_t dstOff) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "FAIL %s: %zu bytes, src +%zu, dst +%zu\n", what, bytes, srcOff, dstOff);
}

#define CK(x)                                                                        \
  do {                                                                               \
    cudaError_t e_ = (x);                                                            \
    if (e_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                  \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

// Copies `bytes` from src+srcOff to dst+dstOff through copyOnStream and
// compares with the pattern, and that the bytes around the target stay.
void oneCase(const char* what, char* src, bool srcHost, char* dst, bool dstHost, size_t bytes, size_t srcOff,
             size_t dstOff, cudaStream_t st) {
  const size_t span = bytes + 64;
  std::vector<unsigned char> pattern(span), sentinel(span, 0xA5), got(span);
  for (size_t i = 0; i < span; ++i) pattern[i] = static_cast<unsigned char>(i * 131 + bytes + srcOff);
  if (srcHost) std::memcpy(src, pattern.data(), span);
  else CK(cudaMemcpy(src, pattern.data(), span, cudaMemcpyHostToDevice));
  if (dstHost) std::memcpy(dst, sentinel.data(), span);
  else CK(cudaMemcpy(dst, sentinel.data(), span, cudaMemcpyHostToDevice));
  // A copy from pageable memory may return before its DMA lands, and `st`
  // does not wait for the legacy stream.
  CK(cudaDeviceSynchronize());
  CK(gdr::dev::copyOnStream(dst + dstOff, src + srcOff, bytes, 0, st));
  CK(cudaStreamSynchronize(st));
  if (dstHost) std::memcpy(got.data(), dst, span);
  else CK(cudaMemcpy(got.data(), dst, span, cudaMemcpyDeviceToHost));
  bool ok = true;
  for (size_t i = 0; i < span && ok; ++i) {
    const bool inside = i >= dstOff && i < dstOff + bytes;
    ok = got[i] == (inside ? pattern[i - dstOff + srcOff] : 0xA5);
  }
  check(ok, what, bytes, srcOff, dstOff);
}

}  // namespace

int main() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::printf("no CUDA device: skipped\n");
    return 77;
  }
  CK(cudaSetDevice(0));
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  const size_t maxBytes = (4u << 20) + 256;
  char *da, *db, *ha, *hb;
  CK(cudaMalloc(&da, maxBytes));
  CK(cudaMalloc(&db, maxBytes));
  CK(cudaMallocHost(&ha, maxBytes));
  std::vector<char> pageable(maxBytes);
  hb = pageable.data();
  const size_t sizes[] = {1, 15, 16, 17, 4096, 65536 + 48, (1u << 20) + 3, 4u << 20};
  for (size_t bytes : sizes) {
    oneCase("device to device, aligned", da, false, db, false, bytes, 0, 0, st);
    oneCase("device to device, src unaligned", da, false, db, false, bytes, 3, 0, st);
    oneCase("device to device, dst unaligned", da, false, db, false, bytes, 0, 8, st);
    oneCase("device to device, inside one allocation", da, false, da + maxBytes / 2 - 32, false,
            bytes < maxBytes / 2 - 64 ? bytes : 16, 0, 0, st);
    oneCase("pinned host to device", ha, true, db, false, bytes, 0, 0, st);
    oneCase("device to pageable host", da, false, hb, true, bytes, 0, 0, st);
  }
  // The same buffers again: the range cache answers, and must still be right.
  oneCase("device to device, cached ranges", da, false, db, false, 1u << 20, 16, 32, st);
  if (n > 1) {  // device 0's copy with device 1 current: cudaMemcpyAsync
    CK(cudaSetDevice(1));
    oneCase("device 0 buffers, device 1 current", da, false, db, false, 1u << 20, 0, 0, st);
    CK(cudaSetDevice(0));
  }
  CK(gdr::dev::copyOnStream(db, da, 0, 0, st));
  CK(cudaStreamSynchronize(st));
  std::printf("%s: %d failures\n", failures ? "FAILED" : "device copy checks passed", failures);
  return failures ? 1 : 0;
}

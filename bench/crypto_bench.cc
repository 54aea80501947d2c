// gdr-crypto-bench: AES-256-GCM throughput of the GPU kernels
// (security/gpu_aes_gcm.h) against OpenSSL on this machine's CPU, one thread
// and all cores, for message sizes from 64 KiB to 512 MiB. GPU figures are
// back-to-back calls on one stream (the way a pipeline of chunks issues
// them), timed with events; CPU figures are EVP_aes_256_gcm, each thread
// sealing or opening its own slice under its own nonce.
//
//   gdr-crypto-bench [--min 64K] [--max 512M] [--threads N] [--ms 50]
#include <cuda_runtime.h>
#include <openssl/evp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "security/gpu_aes_gcm.h"

namespace {

using namespace gdr::security;
using Clock = std::chrono::steady_clock;

struct Options {
  size_t minBytes = size_t{64} << 10;
  size_t maxBytes = size_t{512} << 20;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  double minMs = 50;  // time each figure at least this long
};

size_t parseSize(const char* s) {
  char* end = nullptr;
  double v = std::strtod(s, &end);
  switch (end && *end ? *end : ' ') {
    case 'K': case 'k': v *= 1024; break;
    case 'M': case 'm': v *= 1024 * 1024; break;
    case 'G': case 'g': v *= 1024.0 * 1024 * 1024; break;
    default: break;
  }
  return static_cast<size_t>(v);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--min") o.minBytes = parseSize(argv[i + 1]);
    else if (a == "--max") o.maxBytes = parseSize(argv[i + 1]);
    else if (a == "--threads") o.threads = std::max(1, std::atoi(argv[i + 1]));
    else if (a == "--ms") o.minMs = std::atof(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: gdr-crypto-bench [--min 64K] [--max 512M] [--threads N] [--ms 50]\n");
      std::exit(2);
    }
  }
  return o;
}

void cudaOk(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "gdr-crypto-bench: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// ---- OpenSSL ------------------------------------------------------------------

const uint8_t kKey[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                          17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};

// Seals (or opens, checking `tag`) n bytes with OpenSSL; false if open fails.
bool cpuGcm(EVP_CIPHER_CTX* ctx, bool seal, const uint8_t iv[12], const uint8_t* in, uint8_t* out, size_t n,
            uint8_t tag[16]) {
  int len = 0;
  uint8_t none[16];
  if (seal) {
    return EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, kKey, iv) == 1 &&
           EVP_EncryptUpdate(ctx, out, &len, in, static_cast<int>(n)) == 1 &&
           EVP_EncryptFinal_ex(ctx, none, &len) == 1 && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag) == 1;
  }
  return EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, kKey, iv) == 1 &&
         EVP_DecryptUpdate(ctx, out, &len, in, static_cast<int>(n)) == 1 &&
         EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, tag) == 1 && EVP_DecryptFinal_ex(ctx, none, &len) == 1;
}

struct CpuBufs {
  std::vector<uint8_t> plain, sealed, opened, tags;
  CpuBufs(size_t bytes, int threads) : plain(bytes, 0x5a), sealed(bytes), opened(bytes), tags(16 * threads) {}
};

// GB/s of `threads` threads each sealing (plain -> sealed) or opening
// (sealed -> opened) bytes/threads of the message under its own nonce.
double cpuRate(const Options& o, size_t bytes, int threads, bool seal, CpuBufs& buf) {
  const size_t slice = (bytes + threads - 1) / threads;
  std::atomic<bool> failed{false};
  auto run = [&](bool sealing, int iters) {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
        uint8_t iv[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, static_cast<uint8_t>(t)};
        const size_t off = std::min(bytes, t * slice), n = std::min(slice, bytes - off);
        const uint8_t* in = (sealing ? buf.plain : buf.sealed).data() + off;
        uint8_t* out = (sealing ? buf.sealed : buf.opened).data() + off;
        for (int i = 0; i < iters; ++i)
          if (!cpuGcm(ctx, sealing, iv, in, out, n, buf.tags.data() + 16 * t)) failed = true;
        EVP_CIPHER_CTX_free(ctx);
      });
    }
    for (auto& th : pool) th.join();
  };
  run(true, 1);  // warm-up; open needs what a seal made
  int iters = 1;
  for (;;) {
    auto t0 = Clock::now();
    run(seal, iters);
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (ms >= o.minMs || iters >= 1 << 20) {
      if (failed) std::fprintf(stderr, "gdr-crypto-bench: OpenSSL %s failed\n", seal ? "seal" : "open");
      return double(bytes) * iters / (ms * 1e6);
    }
    iters = static_cast<int>(std::min<double>(1 << 20, iters * std::max(2.0, 1.2 * o.minMs / std::max(ms, 1e-3))));
  }
}

// ---- GPU ----------------------------------------------------------------------

struct Gpu {
  GpuGcmKey key{kKey};
  GpuGcmScratch scratch;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  uint8_t *in = nullptr, *out = nullptr, *tag = nullptr;
  uint32_t* status = nullptr;
  explicit Gpu(size_t maxBytes) {
    cudaOk(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    cudaOk(cudaEventCreate(&start), "event");
    cudaOk(cudaEventCreate(&stop), "event");
    cudaOk(cudaMalloc(&in, maxBytes), "cudaMalloc");
    cudaOk(cudaMalloc(&out, maxBytes), "cudaMalloc");
    cudaOk(cudaMalloc(&tag, 16), "cudaMalloc");
    cudaOk(cudaMalloc(&status, 4), "cudaMalloc");
    // On the bench's stream, finished before any timing (a plain cudaMemset
    // goes on the default stream, which a non-blocking stream does not wait for).
    cudaOk(cudaMemsetAsync(in, 0x5a, maxBytes, stream), "cudaMemsetAsync");
    cudaOk(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  }
  ~Gpu() {
    cudaFree(in), cudaFree(out), cudaFree(tag), cudaFree(status);
    cudaEventDestroy(start), cudaEventDestroy(stop), cudaStreamDestroy(stream);
  }
  void call(bool seal, size_t bytes) {
    static const uint8_t iv[12] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0};
    cudaError_t e = seal ? gpuAesGcmSeal(key, iv, nullptr, 0, in, out, bytes, tag, scratch, stream)
                         : gpuAesGcmOpen(key, iv, nullptr, 0, out, in, bytes, tag, scratch, status, stream);
    cudaOk(e, seal ? "gpuAesGcmSeal" : "gpuAesGcmOpen");
  }
  // GB/s of back-to-back calls; open runs on what seal just made (and must pass).
  double rate(const Options& o, bool seal, size_t bytes) {
    if (!seal) call(true, bytes);
    call(seal, bytes);  // warm-up
    cudaOk(cudaStreamSynchronize(stream), "warm-up");
    int iters = 1;
    for (;;) {
      cudaOk(cudaEventRecord(start, stream), "event");
      for (int i = 0; i < iters; ++i) call(seal, bytes);
      cudaOk(cudaEventRecord(stop, stream), "event");
      cudaOk(cudaEventSynchronize(stop), "sync");
      float ms = 0;
      cudaOk(cudaEventElapsedTime(&ms, start, stop), "elapsed");
      if (ms >= o.minMs || iters >= 1 << 16) {
        if (!seal) {
          uint32_t st = 0;
          cudaOk(cudaMemcpy(&st, status, 4, cudaMemcpyDeviceToHost), "status");
          if (st != kGcmAuthentic) std::fprintf(stderr, "gdr-crypto-bench: GPU open refused its own seal\n");
          // Open decrypted back into `in`, as it was.
        }
        return double(bytes) * iters / (double(ms) * 1e6);
      }
      iters = static_cast<int>(std::min<double>(1 << 16, iters * std::max(2.0, 1.2 * o.minMs / std::max<double>(ms, 1e-3))));
    }
  }
};

std::string cpuModel() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

std::string human(size_t b) {
  char s[32];
  if (b >= (size_t{1} << 20)) std::snprintf(s, sizeof s, "%zu MiB", b >> 20);
  else std::snprintf(s, sizeof s, "%zu KiB", b >> 10);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("skipped: no CUDA device\n");
    return 77;
  }
  cudaDeviceProp prop{};
  cudaOk(cudaGetDeviceProperties(&prop, 0), "properties");
  Gpu gpu(o.maxBytes);

  // Sanity: the GPU's tag equals OpenSSL's on the benchmark's key and data.
  {
    const size_t n = std::min(o.maxBytes, size_t{1} << 20);
    std::vector<uint8_t> pt(n, 0x5a), ct(n);
    uint8_t want[16], got[16];
    static const uint8_t iv[12] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0};
    EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
    bool ok = cpuGcm(ctx, true, iv, pt.data(), ct.data(), n, want);
    EVP_CIPHER_CTX_free(ctx);
    gpu.call(true, n);
    cudaOk(cudaMemcpy(got, gpu.tag, 16, cudaMemcpyDeviceToHost), "tag");
    std::printf("# check: GPU tag %s OpenSSL's on %s\n", ok && !std::memcmp(got, want, 16) ? "==" : "!= (BUG)",
                human(n).c_str());
  }

  std::printf("# GPU: %s (%d SMs); CPU: %s, %d threads; OpenSSL %s\n", prop.name, prop.multiProcessorCount,
              cpuModel().c_str(), o.threads, OpenSSL_version(OPENSSL_VERSION));
  std::printf("# GB/s = 1e9 bytes/s of plaintext; GPU: back-to-back calls on one stream; CPU: EVP_aes_256_gcm\n");
  std::printf("| size | GPU seal | GPU open | CPU seal 1 thr | CPU open 1 thr | CPU seal %d thr | CPU open %d thr "
              "| GPU seal / CPU all |\n",
              o.threads, o.threads);
  std::printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  CpuBufs buf(o.maxBytes, o.threads);
  for (size_t b = o.minBytes; b <= o.maxBytes; b = b * 4 > o.maxBytes && b < o.maxBytes ? o.maxBytes : b * 4) {
    double gs = gpu.rate(o, true, b), go = gpu.rate(o, false, b);
    double c1s = cpuRate(o, b, 1, true, buf), c1o = cpuRate(o, b, 1, false, buf);
    double cns = cpuRate(o, b, o.threads, true, buf), cno = cpuRate(o, b, o.threads, false, buf);
    std::printf("| %s | %.1f | %.1f | %.2f | %.2f | %.1f | %.1f | %.1fx |\n", human(b).c_str(), gs, go, c1s, c1o, cns,
                cno, gs / cns);
    std::fflush(stdout);
  }
  return 0;
}

// The software NIC's device mode on a GPU machine without an RDMA NIC: two
// verbs endpoints of this process (ranks 0 and 1) over softnic0, with
// device buffers registered the way nvidia-peermem registers them (by
// pointer), moved by cudaMemcpy inside the "NIC":
//  1. zero-copy device -> device (and host <-> device), 1 and 2 GPUs: the
//     receive lands in GPU memory directly, no byte copied by the CPU;
//  2. a failed write: the sender's error names the peer;
//  3. a bench: bandwidth and CPU time per GB of the direct path against the
//     staged path (device -> pinned host, host zero-copy, host -> device),
//     both through the software NIC, so only the host copies differ.
// Prints "skipped: no CUDA device" and exits 77 without a GPU.
#include <cuda_runtime_api.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "transport/ib/ib_device.h"
#include "transport/ib/ib_endpoint.h"
#include "transport/ib/softnic.h"

using namespace gdr::transport;
using namespace gdr::transport::ib;

namespace {

int gFailures = 0;
#define EXPECT(cond, ...)                              \
  do {                                                 \
    if (!(cond)) {                                     \
      std::printf("FAIL %s:%d: ", __FILE__, __LINE__); \
      std::printf(__VA_ARGS__);                        \
      std::printf("\n");                               \
      ++gFailures;                                     \
    }                                                  \
  } while (0)

#define CU(call)                                                   \
  do {                                                             \
    cudaError_t e_ = (call);                                       \
    if (e_ != cudaSuccess) {                                       \
      std::printf("FAIL %s: %s\n", #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                \
    }                                                              \
  } while (0)

struct Pair {
  std::shared_ptr<IbDevice> dev;
  std::unique_ptr<IbEndpoint> a, b;
  Pair() {
    setenv("GDR_IB_PROVIDER", "softnic", 1);
    dev = IbDevice::open();
    IbEndpointConfig c;
    c.nQps = 2;
    c.qpDepth = 256;
    c.zcopyBytes = 256 * 1024;
    c.zcopyChunk = 1 << 20;
    c.gpuMode = GdrMode::PeerMem;  // device memory registered by pointer, as nvidia-peermem does
    IbEndpointConfig ca = c, cb = c;
    ca.peerRank = cb.myRank = 1;
    a = std::make_unique<IbEndpoint>(dev, ca);
    b = std::make_unique<IbEndpoint>(dev, cb);
    IbConnInfo ia = a->localInfo(), ib = b->localInfo();
    a->connect(ib, nullptr);
    b->connect(ia, nullptr);
  }
  bool move(const void* src, void* dst, size_t n, uint64_t seq) {
    SendOp s;
    s.data = src;
    s.bytes = n;
    s.sig.kind = kP2PKind;
    s.sig.seq = seq;
    RecvOp r;
    r.dst = dst;
    r.bytes = n;
    r.sig = s.sig;
    b->postRecv(&r);
    a->postSend(&s);
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!(s.complete && r.complete)) {
      if (std::chrono::steady_clock::now() > end) return false;
      a->progress();
      b->progress();
    }
    return true;
  }
};

void fillDevice(void* d, size_t n, int seed, std::vector<char>& host) {
  host.resize(n);
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<char>((i * 31 + seed) & 0xff);
  CU(cudaMemcpy(d, host.data(), n, cudaMemcpyDefault));
}

bool sameAs(const void* d, const std::vector<char>& want) {
  std::vector<char> got(want.size());
  CU(cudaMemcpy(got.data(), d, want.size(), cudaMemcpyDefault));
  return got == want;
}

void testDirect(Pair& p, int srcDev, int dstDev) {
  const size_t n = (8 << 20) + 4096 + 3;
  void *src = nullptr, *dst = nullptr;
  CU(cudaSetDevice(srcDev));
  CU(cudaMalloc(&src, n));
  CU(cudaSetDevice(dstDev));
  CU(cudaMalloc(&dst, n));
  CU(cudaMemset(dst, 0, n));
  std::vector<char> want;
  fillDevice(src, n, srcDev * 7 + dstDev, want);
  const IbStats before = p.b->stats();
  EXPECT(p.move(src, dst, n, 1), "GPU %d -> GPU %d: not done in 30 s", srcDev, dstDev);
  const IbStats after = p.b->stats();
  EXPECT(sameAs(dst, want), "GPU %d -> GPU %d: data differs", srcDev, dstDev);
  EXPECT(after.cpuCopyBytes == before.cpuCopyBytes, "GPU %d -> GPU %d: the CPU copied %llu bytes",
         srcDev, dstDev, (unsigned long long)(after.cpuCopyBytes - before.cpuCopyBytes));
  EXPECT(after.zcopyReceived == before.zcopyReceived + 1, "GPU %d -> GPU %d: not by rendezvous",
         srcDev, dstDev);
  std::printf("direct GPU %d -> GPU %d, %zu bytes: ok\n", srcDev, dstDev, n);
  CU(cudaFree(src));
  CU(cudaFree(dst));
}

void testHostDevice(Pair& p) {
  const size_t n = 3 << 20;
  void* d = nullptr;
  CU(cudaMalloc(&d, n));
  std::vector<char> host(n), want, back(n, 0);
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<char>(i * 13);
  EXPECT(p.move(host.data(), d, n, 2), "host -> device: not done");
  EXPECT(sameAs(d, host), "host -> device: data differs");
  EXPECT(p.move(d, back.data(), n, 3), "device -> host: not done");
  EXPECT(back == host, "device -> host: data differs");
  std::printf("host <-> device, %zu bytes: ok\n", n);
  CU(cudaFree(d));
}

void testFailedWrite() {
  Pair p;
  const size_t n = 4 << 20;
  void *src = nullptr, *dst = nullptr;
  CU(cudaMalloc(&src, n));
  CU(cudaMalloc(&dst, n));
  SendOp s;
  s.data = src;
  s.bytes = n;
  s.sig.kind = kP2PKind;
  RecvOp r;
  r.dst = dst;
  r.bytes = n;
  r.sig = s.sig;
  p.b->postRecv(&r);
  p.b->progress();        // the clear-to-send
  softnic::failWrite(3);  // the announce, one chunk, then the failure
  p.a->postSend(&s);
  std::string what;
  try {
    for (int i = 0; i < 10000; ++i) {
      p.a->progress();
      p.b->progress();
    }
  } catch (const gdr::Error& e) {
    what = e.what();
  }
  softnic::failWrite(0);
  EXPECT(what.find("rank 1") != std::string::npos && what.find("zero-copy") != std::string::npos,
         "failed write: error was '%s'", what.c_str());
  std::printf("failed write: %s\n", what.c_str());
  CU(cudaFree(src));
  CU(cudaFree(dst));
}

double cpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// One row per size: the direct path (device -> device through the NIC)
// against the staged one (device -> pinned host, NIC, pinned host -> device).
void bench(Pair& p) {
  std::printf(
      "\n| bytes | direct us | direct GB/s | direct CPU s/GB | staged us | staged GB/s | "
      "staged CPU s/GB |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  const int iters = 20;
  for (size_t n :
       {size_t(256) << 10, size_t(1) << 20, size_t(4) << 20, size_t(16) << 20, size_t(64) << 20}) {
    void *src = nullptr, *dst = nullptr, *hs = nullptr, *hd = nullptr;
    CU(cudaMalloc(&src, n));
    CU(cudaMalloc(&dst, n));
    CU(cudaMallocHost(&hs, n));
    CU(cudaMallocHost(&hd, n));
    double us[2], cpu[2];
    for (int staged = 0; staged < 2; ++staged) {
      for (int warm = 0; warm < 2; ++warm) {
        auto t0 = std::chrono::steady_clock::now();
        double c0 = cpuSeconds();
        for (int i = 0; i < (warm ? iters : 2); ++i) {
          if (staged) {
            CU(cudaMemcpy(hs, src, n, cudaMemcpyDeviceToHost));
            p.move(hs, hd, n, 100 + i);
            CU(cudaMemcpy(dst, hd, n, cudaMemcpyHostToDevice));
          } else {
            p.move(src, dst, n, 100 + i);
          }
        }
        CU(cudaDeviceSynchronize());
        us[staged] =
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                .count() /
            (warm ? iters : 2);
        cpu[staged] = (cpuSeconds() - c0) / (warm ? iters : 2);
      }
    }
    auto gbs = [&](double u) { return n / u / 1e3; };
    auto cpg = [&](double c) { return c / (n / 1e9); };
    std::printf("| %zu | %.1f | %.2f | %.3f | %.1f | %.2f | %.3f |\n", n, us[0], gbs(us[0]),
                cpg(cpu[0]), us[1], gbs(us[1]), cpg(cpu[1]));
    CU(cudaFree(src));
    CU(cudaFree(dst));
    CU(cudaFreeHost(hs));
    CU(cudaFreeHost(hd));
  }
}

}  // namespace

int main(int argc, char** argv) {
  int nDev = 0;
  if (cudaGetDeviceCount(&nDev) != cudaSuccess || nDev == 0) {
    std::printf("skipped: no CUDA device\n");
    return 77;
  }
  const bool doBench = argc > 1 && std::strcmp(argv[1], "--bench") == 0;
  try {
    Pair p;
    std::printf("software NIC: %s, %d GPU(s)\n", p.dev->name().c_str(), nDev);
    testDirect(p, 0, 0);
    if (nDev > 1) testDirect(p, 0, 1);
    testHostDevice(p);
    testFailedWrite();
    if (doBench) bench(p);
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
  std::printf("%s (%d failures)\n", gFailures ? "FAILED" : "passed", gFailures);
  return gFailures ? 1 : 0;
}

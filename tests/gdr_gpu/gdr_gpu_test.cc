// GPU half of GPUDirect RDMA, on a machine with a GPU and no RDMA NIC:
//  1. the machine's GDR checks (what the library would decide here);
//  2. dma-buf export of device ranges from cudaMalloc and gdrMemAlloc, with
//     page-aligned and unaligned starts: the fd is a real file whose size
//     covers the exported range;
//  3. (verbs headers present) the registration path up to ibv_reg_dmabuf_mr
//     with a fake verbs table that records (fd, offset, length, iova,
//     access), checked against the plan; peermem and staged modes; and the
//     registration cache on gdrMemAlloc memory (hit, then dropped by gdrMemFree).
// Prints "skipped: no CUDA device" and exits 77 without a GPU.
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "core/error.h"
#include "core/memory_kind.h"
#include "gdrcoll.h"
#include "transport/ib/gpu_dmabuf.h"
#include "transport/ib/mr_plan.h"
#if GDR_HAVE_IB
#include "gdr_gpu/fake_verbs.h"
#include "transport/ib/gdr_mode.h"
#include "transport/ib/mr_register.h"
#include "transport/ib/reg_cache.h"
#endif

using namespace gdr::transport::ib;
#if GDR_HAVE_IB
using gdr::testing::FakeVerbs;
#endif

namespace {

int gFailures = 0;
#define EXPECT(cond, ...)                                               \
  do {                                                                  \
    if (!(cond)) {                                                      \
      std::printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);       \
      std::printf(__VA_ARGS__);                                         \
      std::printf("\n");                                                \
      ++gFailures;                                                      \
    }                                                                   \
  } while (0)

const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));

void checkCaps() {
  GpuNetCaps g = probeGpuNetCaps();
  std::printf("GPU caps: present %d, dma-buf %d, GPUDirect RDMA %d, writes ordering %d, flush "
              "options %#x%s%s\n",
              g.gpuPresent, g.dmaBuf, g.rdmaSupported, g.writesOrdering, g.flushOptions,
              g.note.empty() ? "" : "; ", g.note.c_str());
  EXPECT(g.gpuPresent, "a device is visible, yet the probe saw none");
  std::printf("cuFlushGPUDirectRDMAWrites: %s\n",
              flushGpuRdmaWritesByDriver() ? "ok" : "not available");
#if GDR_HAVE_IB
  GdrChecks c = probeGdrChecks();
  GdrDecision d = decideGdr(c);
  std::printf("GDR decision on this machine: %s\n", describeGdr(c, d).c_str());
  EXPECT(c.gpuPresent && c.cudaBuilt, "probeGdrChecks missed the GPU");
  // The decision with this GPU and a NIC that supports dma-buf.
  c.nicDmaBuf = true;
  d = decideGdr(c);
  std::printf("GDR decision with a dma-buf capable NIC: %s\n", describeGdr(c, d).c_str());
  if (g.dmaBuf) EXPECT(d.mode == GdrMode::DmaBuf, "dma-buf GPU + dma-buf NIC gave %s", gdrModeName(d.mode));
#endif
}

// Export the plan's range and check the fd; returns the fd (closed by caller).
void checkExport(const char* what, const MrPlan& p) {
  int fd = -1;
  try {
    fd = exportDmaBuf(p.base, p.len);
  } catch (const gdr::Error& e) {
    EXPECT(false, "%s: %s", what, e.what());
    return;
  }
  struct stat st {};
  EXPECT(fstat(fd, &st) == 0, "%s: fstat(dma-buf fd %d): %s", what, fd, std::strerror(errno));
  off_t size = lseek(fd, 0, SEEK_END);
  std::printf("  %s: exported %zu bytes at %#lx -> fd %d, lseek size %lld\n", what, p.len,
              (unsigned long)p.base, fd, (long long)size);
  EXPECT(size >= static_cast<off_t>(p.len), "%s: dma-buf of %lld bytes for a %zu-byte range",
         what, (long long)size, p.len);
  close(fd);
}

#if GDR_HAVE_IB
void checkRegistration(const char* what, void* addr, size_t len, const MrPlan& p) {
  FakeVerbs& f = FakeVerbs::get();
  IbvApi api = FakeVerbs::table();
  MrContext mc;
  mc.api = &api;
  mc.what = what;
  for (MrUse use : {MrUse::SendSource, MrUse::RecvTarget}) {
    f.reset();
    mc.gpuMode = GdrMode::DmaBuf;
    mc.use = use;
    Registration r{};
    try {
      r = registerRange(mc, p.base, p.len, addr);
    } catch (const gdr::Error& e) {
      EXPECT(false, "%s: dma-buf registration: %s", what, e.what());
      continue;
    }
    EXPECT(f.calls.size() == 1 && f.calls[0].dmabuf, "%s: expected one ibv_reg_dmabuf_mr call", what);
    if (f.calls.size() != 1) continue;
    const FakeVerbs::Call& c = f.calls[0];
    const unsigned want = mrAccessFor(use);
    std::printf("  %s: ibv_reg_dmabuf_mr(fd %d, offset %llu, len %zu, iova %#llx, access %#x), "
                "fd size %lld\n",
                what, c.fd, (unsigned long long)c.offset, c.len, (unsigned long long)c.iova,
                c.access, (long long)c.fdSize);
    EXPECT(c.fd >= 0 && c.fdIsFile, "%s: fd %d is not an open file", what, c.fd);
    EXPECT(c.offset == 0, "%s: offset %llu", what, (unsigned long long)c.offset);
    EXPECT(c.len == p.len && c.len % kPage == 0, "%s: length %zu, plan %zu", what, c.len, p.len);
    EXPECT(c.iova == p.base && c.iova <= reinterpret_cast<uintptr_t>(addr) &&
               c.iova + c.len >= reinterpret_cast<uintptr_t>(addr) + len,
           "%s: iova %#llx does not cover the buffer", what, (unsigned long long)c.iova);
    EXPECT(static_cast<unsigned>(c.access) == want, "%s: access %#x, want %#x", what, c.access,
           want);
    EXPECT(c.fdSize >= static_cast<off_t>(c.len), "%s: fd size %lld", what, (long long)c.fdSize);
    EXPECT(fcntl(c.fd, F_GETFD) == -1 && errno == EBADF,
           "%s: the dma-buf fd was left open after registration", what);
    deregister(api, r);
    EXPECT(f.live == 0, "%s: MR leaked", what);
  }
  // nvidia-peermem: ibv_reg_mr on the device pointer's pages.
  f.reset();
  mc.gpuMode = GdrMode::PeerMem;
  mc.use = MrUse::SendSource;
  Registration r = registerRange(mc, p.base, p.len, addr);
  EXPECT(f.calls.size() == 1 && !f.calls[0].dmabuf &&
             f.calls[0].addr == reinterpret_cast<void*>(p.base) && f.calls[0].len == p.len &&
             f.calls[0].access == 0,
         "%s: peermem registration differs from ibv_reg_mr(base, len, 0)", what);
  deregister(api, r);
  // Staged: refused, so the caller stages.
  f.reset();
  mc.gpuMode = GdrMode::Staged;
  bool refused = false;
  try {
    registerRange(mc, p.base, p.len, addr);
  } catch (const gdr::NotSupported&) {
    refused = true;
  }
  EXPECT(refused && f.calls.empty(), "%s: staged mode registered device memory", what);
}

void checkCacheOnMemAlloc() {
  FakeVerbs& f = FakeVerbs::get();
  f.reset();
  IbvApi api = FakeVerbs::table();
  MrContext mc;
  mc.api = &api;
  mc.what = "cache test";
  mc.gpuMode = GdrMode::DmaBuf;
  const IbvApi* a = &api;
  RegCache cache(cacheRegisterFn(mc), [a](const Registration& r) { deregister(*a, r); }, kPage,
                 true);
  cache.followUserRanges();
  void* p = nullptr;
  EXPECT(gdrMemAlloc(&p, 3 << 20) == gdrSuccess, "gdrMemAlloc: %s", gdrGetLastError(nullptr));
  if (!p) return;
  EXPECT(gdr::memoryKind(p) == gdr::MemKind::Device, "gdrMemAlloc gave host memory with a GPU");
  cache.release(cache.acquire(p, 3 << 20));
  cache.release(cache.acquire(static_cast<char*>(p) + 12345, 4096));
  EXPECT(cache.stats().hits == 1 && cache.stats().misses == 1 && f.live == 1,
         "cache on gdrMemAlloc memory: %llu hits, %llu misses, %d live",
         (unsigned long long)cache.stats().hits, (unsigned long long)cache.stats().misses, f.live);
  EXPECT(gdrMemFree(p) == gdrSuccess, "gdrMemFree: %s", gdrGetLastError(nullptr));
  EXPECT(f.live == 0, "gdrMemFree left the registration in the cache");
  // An unregistered cudaMalloc buffer is registered per use, never kept.
  void* q = nullptr;
  cudaMalloc(&q, 1 << 20);
  cache.release(cache.acquire(q, 1 << 20));
  EXPECT(f.live == 0, "an unregistered device buffer stayed registered");
  cudaFree(q);
  std::printf("  registration cache on gdrMemAlloc memory: hit, dropped by gdrMemFree\n");
}
#endif

void checkBuffer(const char* name, char* buf) {
  struct Case {
    const char* what;
    size_t offset, len;
  } cases[] = {{"aligned start, 1 MiB", 0, 1 << 20},
               {"aligned start, 1 MiB + 3", 0, (1 << 20) + 3},
               {"start + 100, 64 KiB", 100, 65536},
               {"start + 4096 + 17, 5000", 4096 + 17, 5000},
               {"start + 3 MiB - 1, 2 bytes", (3 << 20) - 1, 2}};
  for (const Case& c : cases) {
    std::string what = std::string(name) + ", " + c.what;
    char* addr = buf + c.offset;
    gdr::MemKind kind = gdr::memoryKind(addr);
    EXPECT(kind == gdr::MemKind::Device, "%s: memoryKind says host", what.c_str());
    MrPlan p = planMr(kind, reinterpret_cast<uintptr_t>(addr), c.len, GdrMode::DmaBuf,
                      MrUse::SendSource, kPage);
    EXPECT(p.method == MrMethod::DmaBuf && p.base % kPage == 0 && p.len % kPage == 0 &&
               p.base <= reinterpret_cast<uintptr_t>(addr) &&
               p.base + p.len >= reinterpret_cast<uintptr_t>(addr) + c.len && p.access == 0,
           "%s: bad plan", what.c_str());
    checkExport(what.c_str(), p);
#if GDR_HAVE_IB
    checkRegistration(what.c_str(), addr, c.len, p);
#endif
  }
}

}  // namespace

int main() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::printf("skipped: no CUDA device\n");
    return 77;
  }
  cudaSetDevice(0);
  checkCaps();
  void* av = nullptr;
  if (cudaMalloc(&av, 8 << 20) != cudaSuccess) {
    std::printf("FAIL: cudaMalloc\n");
    return 1;
  }
  char* a = static_cast<char*>(av);
  checkBuffer("cudaMalloc", a);
  void* b = nullptr;
  EXPECT(gdrMemAlloc(&b, 8 << 20) == gdrSuccess, "gdrMemAlloc: %s", gdrGetLastError(nullptr));
  if (b) checkBuffer("gdrMemAlloc", static_cast<char*>(b));
  // A small cudaMalloc (sub-allocated by the driver, start not page-aligned).
  void* sv = nullptr;
  cudaMalloc(&sv, 1000);
  char* small = static_cast<char*>(sv);
  if (small) {
    std::printf("  small cudaMalloc at %p (page offset %zu)\n", static_cast<void*>(small),
                reinterpret_cast<uintptr_t>(small) % kPage);
    MrPlan p = planMr(gdr::MemKind::Device, reinterpret_cast<uintptr_t>(small), 1000,
                      GdrMode::DmaBuf, MrUse::SendSource, kPage);
    checkExport("small cudaMalloc (1000 bytes)", p);
  }
#if GDR_HAVE_IB
  checkCacheOnMemAlloc();
#else
  std::printf("verbs headers absent in this build: registration with the fake verbs table not run\n");
#endif
  cudaFree(small);
  gdrMemFree(b);
  cudaFree(a);
  std::printf("%s: %d failure(s)\n", gFailures ? "FAILED" : "PASSED", gFailures);
  return gFailures ? 1 : 0;
}

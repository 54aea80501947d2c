// What a receive target's registration costs per operation on the software
// NIC (GDR_IB_PROVIDER=softnic), host memory: the registration cache the
// verbs endpoint uses for zero-copy receives (MrUse::RecvTarget), once for
// a buffer the program did not vouch for (registered and deregistered at
// every operation: a miss each time) and once for one listed in UserRanges
// (as gdrCommRegister, gdrMemAlloc and the GPUDirect path's scratch are: a
// hit after the first). Times are per acquire + release, medians of
// repeated runs, one thread. --device (CUDA builds): the buffers are
// cudaMalloc'ed instead, which the software NIC registers by publishing
// their CUDA IPC handles.
//   gdr-reg-cost [--device] [iterations]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "transport/ib/mr_register.h"
#include "transport/ib/reg_cache.h"
#include "transport/ib/softnic.h"
#include "transport/ib/user_ranges.h"

#if GDR_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

using namespace gdr::transport::ib;
using Clock = std::chrono::steady_clock;

namespace {

double medianUs(RegCache& cache, const char* buf, size_t bytes, int iters) {
  std::vector<double> t;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = Clock::now();
    for (int i = 0; i < iters; ++i) cache.release(cache.acquire(buf, bytes));
    t.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / iters);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  bool device = false;
  int iters = 200;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--device") == 0)
      device = true;
    else
      iters = std::atoi(argv[i]);
  }
#if !GDR_HAVE_CUDA
  if (device) {
    std::fprintf(stderr, "--device: this build has no CUDA\n");
    return 1;
  }
#endif
  const IbvApi* api = softnic::api();
  int n = 0;
  ibv_device** devs = api->get_device_list(&n);
  if (!devs || n < 1) {
    std::fprintf(stderr, "softnic: no device\n");
    return 1;
  }
  ibv_context* ctx = api->open_device(devs[0]);
  ibv_pd* pd = ctx ? api->alloc_pd(ctx) : nullptr;
  if (!pd) {
    std::fprintf(stderr, "softnic: no protection domain\n");
    return 1;
  }
  MrContext mc;
  mc.api = api;
  mc.pd = pd;
  mc.use = MrUse::RecvTarget;
  mc.what = "reg-cost";
  mc.gpuMode = GdrMode::PeerMem;  // the software NIC reaches device memory itself
  auto dereg = [api](const Registration& r) { deregister(*api, r); };
  std::printf("%s memory, %d acquire + release per run\n", device ? "device" : "host", iters);
  std::printf(
      "| bytes | per operation (us) | vouched for, cached (us) | misses / hits (cached) |\n");
  std::printf("|---:|---:|---:|---|\n");
  for (size_t bytes : {size_t{64} << 10, size_t{1} << 20, size_t{16} << 20, size_t{64} << 20}) {
    std::vector<char> host;
    char* buf = nullptr;
#if GDR_HAVE_CUDA
    if (device && cudaMalloc(reinterpret_cast<void**>(&buf), bytes) != cudaSuccess) {
      std::fprintf(stderr, "cudaMalloc of %zu bytes failed\n", bytes);
      return 1;
    }
#endif
    if (!device) {
      host.assign(bytes, 1);  // the pages exist
      buf = host.data();
    }
    RegCache perOp(cacheRegisterFn(mc), dereg, 4096, true);
    perOp.followUserRanges();  // not listed: released at once, as for any buffer
    const double missUs = medianUs(perOp, buf, bytes, iters);
    const uint64_t id = UserRanges::instance().add(buf, bytes);
    RegCache cached(cacheRegisterFn(mc), dereg, 4096, true);
    cached.followUserRanges();
    const double hitUs = medianUs(cached, buf, bytes, iters);
    const RegCache::Stats s = cached.stats();
    UserRanges::instance().remove(id);
    std::printf("| %zu | %.2f | %.3f | %llu / %llu |\n", bytes, missUs, hitUs,
                static_cast<unsigned long long>(s.misses), static_cast<unsigned long long>(s.hits));
#if GDR_HAVE_CUDA
    if (device) cudaFree(buf);
#endif
  }
  api->dealloc_pd(pd);
  api->close_device(ctx);
  api->free_device_list(devs);
  return 0;
}

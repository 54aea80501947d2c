// The GPUDirect device path (paths/direct/path.h) end to end on one GPU
// machine without an RDMA NIC: two ranks as forked processes sharing the
// GPU, different GDR_HOST_IDs (so two "hosts"), the verbs transport over the
// software NIC (GDR_IB_PROVIDER=softnic), which writes device memory across
// the processes through CUDA IPC.
//
//  - every collective and send/recv on device buffers takes the path (its
//    counter moves once per call) and is correct: several types and ops,
//    counts on both sides of GDR_IB_ZCOPY_BYTES (eager and rendezvous); at
//    two ranks (reductions one-shot) and at three (three processes, three
//    host ids: all-reduce and reduce-scatter run the ring, chunked by
//    GDR_CHUNK_BYTES=64 KiB);
//  - host <-> device across the processes: a host send (host path) into a
//    device receive (this path) and back;
//  - stream order: a slow kernel before the call fills its input, a kernel
//    after it adds one to the output;
//  - CUDA-graph capture is refused with an error that says so, and the
//    communicator still works after it;
//  - a failed write (the software NIC's next write, on rank 0) releases both
//    ranks' streams, and the next call fails naming the peer.
// --bench instead: the staged path (GDR_NET_GDR=0) against this one, both
// through the software NIC: latency, bandwidth and CPU time per GB moved.
//
// The parent never touches CUDA (a forked child of a process that did
// cannot use it). Exit 0 when everything passed, 77 without a CUDA device,
// 3 when a rank hung (killed at its deadline), 1 on other failures.
#include <cuda_runtime.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <typeinfo>
#include <vector>

#include "comm/comm.h"
#include "gdrcoll.h"
#include "gpu_kernels.h"
#include "paths/direct/path.h"
#include "support/multiproc.h"
#include "transport/ib/ib_endpoint.h"
#include "transport/ib/softnic.h"

namespace {

constexpr int kNoDevice = 77;
// Below and above the default GDR_IB_ZCOPY_BYTES (256 KiB) in bytes, for
// 4-byte elements; odd so blocks are uneven.
const size_t kCounts[] = {999, 100003};

#define CK(cond, ...) CHILD_CHECK(cond, __VA_ARGS__)
#define CUDA_OK(call)                                                         \
  do {                                                                        \
    cudaError_t e_ = (call);                                                  \
    if (e_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "[rank %d] %s: %s\n", gdrtest::childRank(), #call, \
                   cudaGetErrorString(e_));                                   \
      return 1;                                                               \
    }                                                                         \
  } while (0)

double val(int r, size_t i) { return static_cast<double>((r * 131 + i * 7) % 13 + 1); }

double combine(gdrRedOp_t op, double a, double b) {
  switch (op) {
    case gdrProd:
      return a * b;
    case gdrMax:
      return a > b ? a : b;
    case gdrMin:
      return a < b ? a : b;
    default:
      return a + b;
  }
}

template <typename T>
gdrDataType_t typeOf();
template <>
gdrDataType_t typeOf<float>() {
  return gdrFloat32;
}
template <>
gdrDataType_t typeOf<double>() {
  return gdrFloat64;
}
template <>
gdrDataType_t typeOf<int32_t>() {
  return gdrInt32;
}
template <>
gdrDataType_t typeOf<uint8_t>() {
  return gdrUint8;
}

struct Case {
  const char* coll;
  gdrRedOp_t op;
  bool inPlace;
  int root;
};

// One collective on device buffers, checked against the host reference;
// also checks the call went the GPUDirect way (the path's counter).
template <typename T>
int runCase(const Case& c, size_t count, int me, int n, gdrComm_t comm, cudaStream_t s) {
  const std::string coll = c.coll;
  const size_t inElems = (coll == "reducescatter" || coll == "alltoall") ? n * count : count;
  const size_t outElems = (coll == "allgather" || coll == "alltoall") ? n * count : count;
  std::vector<T> in(inElems), out(outElems), want(outElems);
  for (size_t i = 0; i < inElems; ++i) in[i] = static_cast<T>(val(me, i));
  auto reduced = [&](size_t i) {
    double a = val(0, i);
    for (int r = 1; r < n; ++r) a = combine(c.op, a, val(r, i));
    if (c.op == gdrAvg) a /= n;
    return static_cast<T>(a);
  };
  bool check = true;
  for (size_t i = 0; i < outElems; ++i) {
    if (coll == "allreduce")
      want[i] = reduced(i);
    else if (coll == "reduce") {
      want[i] = reduced(i);
      check = me == c.root;
    } else if (coll == "reducescatter")
      want[i] = reduced(me * count + i);
    else if (coll == "allgather")
      want[i] = static_cast<T>(val(static_cast<int>(i / count), i % count));
    else if (coll == "broadcast")
      want[i] = static_cast<T>(val(c.root, i));
    else if (coll == "alltoall")
      want[i] = static_cast<T>(val(static_cast<int>(i / count), me * count + i % count));
    else if (coll == "sendrecv")  // round the ring: from the previous rank
      want[i] = static_cast<T>(val((me + n - 1) % n, i));
  }
  T *dIn = nullptr, *dOut = nullptr;
  CUDA_OK(cudaMalloc(&dIn, inElems * sizeof(T)));
  CUDA_OK(cudaMalloc(&dOut, (inElems > outElems ? inElems : outElems) * sizeof(T)));
  CUDA_OK(cudaMemcpy(dIn, in.data(), inElems * sizeof(T), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(dOut, 0xee, outElems * sizeof(T)));
  if (c.inPlace || coll == "broadcast")  // an in-place all-gather's block sits in its own slot
    CUDA_OK(cudaMemcpy(dOut + (coll == "allgather" ? me * count : 0), in.data(),
                       inElems * sizeof(T), cudaMemcpyHostToDevice));
  // cudaMemcpy from pageable memory and cudaMemset may still run when they
  // return, on the legacy stream, which a non-blocking stream does not wait for.
  CUDA_OK(cudaDeviceSynchronize());
  const T* src = c.inPlace ? dOut : dIn;
  const gdrDataType_t t = typeOf<T>();
  const uint64_t before = gdr::paths::direct::opsRun();
  gdrResult_t rc = gdrSuccess;
  if (coll == "allreduce")
    rc = gdrAllReduce(src, dOut, count, t, c.op, comm, s);
  else if (coll == "reduce")
    rc = gdrReduce(src, dOut, count, t, c.op, c.root, comm, s);
  else if (coll == "reducescatter")
    rc = gdrReduceScatter(c.inPlace ? GDR_IN_PLACE : src, dOut, count, t, c.op, comm, s);
  else if (coll == "allgather")
    rc = gdrAllGather(c.inPlace ? dOut + me * count : dIn, count, dOut, t, comm, s);
  else if (coll == "broadcast")
    rc = gdrBroadcast(dOut, count, t, c.root, comm, s);
  else if (coll == "alltoall")
    rc = gdrAllToAll(src, count, dOut, t, comm, s);
  else if (coll == "sendrecv") {
    gdrGroupStart();
    gdrSend(dIn, count, t, (me + 1) % n, comm, s);
    gdrRecv(dOut, count, t, (me + n - 1) % n, comm, s);
    rc = gdrGroupEnd();
  }
  CK(rc == gdrSuccess, "%s: %s", c.coll, gdrGetLastError(comm));
  CUDA_OK(cudaStreamSynchronize(s));
  gdrResult_t async = gdrSuccess;
  gdrCommGetAsyncError(comm, &async);
  CK(async == gdrSuccess, "%s count %zu: async error %s", c.coll, count, gdrGetLastError(comm));
  CK(gdr::paths::direct::opsRun() == before + 1, "%s count %zu did not take the GPUDirect path",
     c.coll, count);
  CUDA_OK(cudaMemcpy(out.data(), dOut, outElems * sizeof(T), cudaMemcpyDeviceToHost));
  size_t bad = 0, first = 0;
  if (check)
    for (size_t i = 0; i < outElems; ++i)
      if (out[i] != want[i] && bad++ == 0) first = i;
  CK(bad == 0, "%s op %d %s count %zu in place %d: %zu wrong, first [%zu] = %g, want %g", c.coll,
     static_cast<int>(c.op), typeid(T).name(), count, c.inPlace, bad, first,
     static_cast<double>(out[first]), static_cast<double>(want[first]));
  cudaFree(dIn);
  cudaFree(dOut);
  return 0;
}

// A host send (host path) into a device receive (GPUDirect path) and back:
// device memory written by the software NIC of the other process.
int hostDevice(int me, gdrComm_t comm, cudaStream_t s) {
  if (me > 1) return 0;  // ranks 0 and 1
  for (size_t count : kCounts) {
    std::vector<float> h(count), back(count);
    for (size_t i = 0; i < count; ++i) h[i] = static_cast<float>(val(7, i));
    float* d = nullptr;
    CUDA_OK(cudaMalloc(&d, count * sizeof(float)));
    CUDA_OK(cudaMemset(d, 0, count * sizeof(float)));
    CUDA_OK(cudaDeviceSynchronize());
    gdrResult_t rc;
    if (me == 0) {
      rc = gdrSend(h.data(), count, gdrFloat32, 1, comm, nullptr);  // host -> rank 1's GPU
      CK(rc == gdrSuccess, "host send: %s", gdrGetLastError(comm));
      rc = gdrRecv(back.data(), count, gdrFloat32, 1, comm, nullptr);  // rank 1's GPU -> host
      CK(rc == gdrSuccess, "host recv: %s", gdrGetLastError(comm));
      CK(back == h, "device -> host across processes: wrong data (count %zu)", count);
    } else {
      rc = gdrRecv(d, count, gdrFloat32, 0, comm, s);
      CK(rc == gdrSuccess, "device recv: %s", gdrGetLastError(comm));
      CUDA_OK(cudaStreamSynchronize(s));
      CUDA_OK(cudaMemcpy(back.data(), d, count * sizeof(float), cudaMemcpyDeviceToHost));
      CK(back == h, "host -> device across processes: wrong data (count %zu)", count);
      rc = gdrSend(d, count, gdrFloat32, 0, comm, s);
      CK(rc == gdrSuccess, "device send: %s", gdrGetLastError(comm));
      CUDA_OK(cudaStreamSynchronize(s));
    }
    cudaFree(d);
  }
  return 0;
}

// A slow kernel fills the input before the call; one after adds 1.
int streamOrder(int me, int n, gdrComm_t comm, cudaStream_t s) {
  const size_t count = kCounts[1];
  int32_t *in = nullptr, *out = nullptr;
  CUDA_OK(cudaMalloc(&in, count * 4));
  CUDA_OK(cudaMalloc(&out, count * 4));
  CUDA_OK(cudaMemset(in, 0, count * 4));
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(testSpinThenFill(reinterpret_cast<uint32_t*>(in), count, me + 1, 200000000LL, s));
  const auto t0 = std::chrono::steady_clock::now();
  gdrResult_t rc = gdrAllReduce(in, out, count, gdrInt32, gdrSum, comm, s);
  const double callMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  CK(rc == gdrSuccess, "stream order: %s", gdrGetLastError(comm));
  CUDA_OK(testAddOne(out, count, s));
  CUDA_OK(cudaStreamSynchronize(s));
  const double totalMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::vector<int32_t> h(count);
  CUDA_OK(cudaMemcpy(h.data(), out, count * 4, cudaMemcpyDeviceToHost));
  size_t bad = 0;
  const int32_t want = n * (n + 1) / 2 + 1;  // every rank's me + 1, then one more
  for (int32_t v : h) bad += v != want;
  CK(bad == 0, "stream order: %zu of %zu wrong (first %d, want %d)", bad, count, h[0], want);
  std::printf("[rank %d] stream order: call returned after %.2f ms, stream done after %.2f ms\n",
              me, callMs, totalMs);
  cudaFree(in);
  cudaFree(out);
  return 0;
}

// The path's device scratch is registered once (the path vouches for it):
// a second all-reduce into the same scratch misses no registration of a
// receive target (rendezvous: 100003 floats are over GDR_IB_ZCOPY_BYTES).
int scratchRegisteredOnce(int me, gdrComm_t comm, cudaStream_t s) {
  if (me > 1) return 0;  // one-shot at two ranks: the peer's input lands in the scratch
  auto& c = *static_cast<gdr::Communicator*>(comm);
  auto* ep = dynamic_cast<gdr::transport::ib::IbEndpoint*>(c.endpoint(1 - me));
  CK(ep != nullptr, "rank %d: the endpoint to rank %d is not verbs", me, 1 - me);
  const size_t count = kCounts[1];
  float* d = nullptr;
  CUDA_OK(cudaMalloc(&d, count * 4));
  CUDA_OK(cudaMemset(d, 0, count * 4));
  CUDA_OK(cudaDeviceSynchronize());
  uint64_t misses[3];
  for (int i = 0; i < 3; ++i) {
    CK(gdrAllReduce(d, d, count, gdrFloat32, gdrSum, comm, s) == gdrSuccess, "all-reduce: %s",
       gdrGetLastError(comm));
    CUDA_OK(cudaStreamSynchronize(s));
    misses[i] = ep->stats().recvReg.misses;
  }
  CK(misses[2] == misses[1], "rank %d: the scratch was registered again (%llu, %llu misses)", me,
     static_cast<unsigned long long>(misses[1]), static_cast<unsigned long long>(misses[2]));
  std::printf("[rank %d] scratch registered once: receive-target misses %llu, %llu, %llu\n", me,
              static_cast<unsigned long long>(misses[0]),
              static_cast<unsigned long long>(misses[1]),
              static_cast<unsigned long long>(misses[2]));
  cudaFree(d);
  return 0;
}

int captureRefused(gdrComm_t comm, cudaStream_t s) {
  float* d = nullptr;
  CUDA_OK(cudaMalloc(&d, 4096));
  CUDA_OK(cudaMemset(d, 0, 4096));
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  gdrResult_t rc = gdrAllReduce(d, d, 1024, gdrFloat32, gdrSum, comm, s);
  const std::string text = gdrGetLastError(comm);
  cudaGraph_t g = nullptr;
  cudaError_t e = cudaStreamEndCapture(s, &g);
  if (g) cudaGraphDestroy(g);
  cudaGetLastError();
  CK(rc != gdrSuccess && text.find("capture") != std::string::npos,
     "capture: rc %d, text '%s' (want a refusal naming capture)", static_cast<int>(rc),
     text.c_str());
  CK(e == cudaSuccess, "cudaStreamEndCapture: %s", cudaGetErrorString(e));
  std::printf("[rank %d] capture refused: %s\n", gdrtest::childRank(), text.c_str());
  rc = gdrAllReduce(d, d, 1024, gdrFloat32, gdrSum, comm, s);  // still usable
  CK(rc == gdrSuccess, "after the refused capture: %s", gdrGetLastError(comm));
  CUDA_OK(cudaStreamSynchronize(s));
  cudaFree(d);
  return 0;
}

int correctness(int me, int n, gdrComm_t comm) {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) return kNoDevice;
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const Case f32[] = {{"allreduce", gdrSum, false, 0},     {"allreduce", gdrAvg, true, 0},
                      {"reducescatter", gdrSum, false, 0}, {"reduce", gdrMax, false, 1},
                      {"allgather", gdrSum, false, 0},     {"allgather", gdrSum, true, 0},
                      {"broadcast", gdrSum, false, 1},     {"alltoall", gdrSum, false, 0},
                      {"alltoall", gdrSum, true, 0},       {"sendrecv", gdrSum, false, 0}};
  const Case i32[] = {{"allreduce", gdrMax, false, 0},
                      {"reducescatter", gdrMin, true, 0},
                      {"reduce", gdrSum, false, 0},
                      {"broadcast", gdrSum, false, 0}};
  const Case f64[] = {{"allreduce", gdrProd, true, 0}, {"reducescatter", gdrMax, false, 0}};
  const Case u8[] = {{"allreduce", gdrMin, false, 0},
                     {"allgather", gdrSum, false, 0},
                     {"alltoall", gdrSum, false, 0}};
  for (size_t count : kCounts) {
    for (const Case& c : f32) runCase<float>(c, count, me, n, comm, s);
    for (const Case& c : i32) runCase<int32_t>(c, count, me, n, comm, s);
    for (const Case& c : f64) runCase<double>(c, count, me, n, comm, s);
    for (const Case& c : u8)
      runCase<uint8_t>(c, count * 4, me, n, comm, s);  // same bytes as the 4-byte cases
  }
  const uint64_t b = gdr::paths::direct::opsRun();
  CK(gdrBarrier(comm, s) == gdrSuccess, "barrier: %s", gdrGetLastError(comm));
  CUDA_OK(cudaStreamSynchronize(s));
  CK(gdr::paths::direct::opsRun() == b + 1, "the device barrier did not take the GPUDirect path");
  hostDevice(me, comm, s);
  if (n == 2) scratchRegisteredOnce(me, comm, s);
  streamOrder(me, n, comm, s);
  captureRefused(comm, s);
  std::printf("[rank %d] correctness done: %llu GPUDirect operations\n", me,
              static_cast<unsigned long long>(gdr::paths::direct::opsRun()));
  return 0;
}

// Rank 0's next software-NIC write fails, in the middle of a large
// all-reduce: both streams come free, and calls then fail naming the peer.
int failedWrite(int me, int, gdrComm_t comm) {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) return kNoDevice;
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const size_t count = kCounts[1];
  float* d = nullptr;
  CUDA_OK(cudaMalloc(&d, count * 4));
  CUDA_OK(cudaMemset(d, 0, count * 4));
  CUDA_OK(cudaDeviceSynchronize());
  CK(gdrAllReduce(d, d, count, gdrFloat32, gdrSum, comm, s) == gdrSuccess, "warm-up: %s",
     gdrGetLastError(comm));
  CUDA_OK(cudaStreamSynchronize(s));
  if (me == 0) gdr::transport::ib::softnic::failWrite(1);
  const auto t0 = std::chrono::steady_clock::now();
  gdrResult_t rc = gdrAllReduce(d, d, count, gdrFloat32, gdrSum, comm, s);
  cudaError_t e = cudaStreamSynchronize(s);  // the stream is released either way
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  CK(e == cudaSuccess, "stream after the failed write: %s", cudaGetErrorString(e));
  gdrResult_t async = gdrSuccess;
  gdrCommGetAsyncError(comm, &async);
  gdrResult_t next = gdrAllReduce(d, d, count, gdrFloat32, gdrSum, comm, s);
  const std::string text = gdrGetLastError(comm);
  CK(rc != gdrSuccess || async != gdrSuccess, "the failed write went unnoticed");
  CK(next != gdrSuccess, "the call after the failed write succeeded");
  const std::string peer = "rank " + std::to_string(1 - me);
  CK(text.find(peer) != std::string::npos, "the error does not name %s: %s", peer.c_str(),
     text.c_str());
  std::printf("[rank %d] failed write: stream free after %.0f ms; next call: %s\n", me, ms,
              text.c_str());
  cudaStreamSynchronize(s);
  return 0;
}

// --bench: one path (the caller's environment picks it), every size, rank 0
// prints table rows.
int bench(int me, int n, gdrComm_t comm) {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) return kNoDevice;
  const char* path = std::getenv("GDR_NET_GDR") && std::string(std::getenv("GDR_NET_GDR")) == "0"
                         ? "staged"
                         : "direct";
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const size_t sizes[] = {4096, 65536, 1 << 20, 16 << 20, 64 << 20};
  const size_t maxBytes = 64u << 20;
  char *in = nullptr, *out = nullptr;
  CUDA_OK(cudaMalloc(&in, maxBytes * n));
  CUDA_OK(cudaMalloc(&out, maxBytes * n));
  CUDA_OK(cudaMemset(in, 0, maxBytes * n));
  CUDA_OK(cudaDeviceSynchronize());
  for (const char* coll : {"allreduce", "allgather"}) {
    for (size_t bytes : sizes) {
      const size_t count = bytes / 4;
      auto once = [&] {
        return std::string(coll) == "allreduce"
                   ? gdrAllReduce(in, out, count, gdrFloat32, gdrSum, comm, s)
                   : gdrAllGather(in, count, out, gdrFloat32, comm, s);
      };
      const int iters = bytes <= (1 << 20) ? 50 : 8;
      once();
      cudaStreamSynchronize(s);
      rusage r0, r1;
      getrusage(RUSAGE_SELF, &r0);
      const uint64_t ops0 = gdr::paths::direct::opsRun();
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i) once();
      cudaStreamSynchronize(s);
      const double us =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
          iters;
      getrusage(RUSAGE_SELF, &r1);
      auto sec = [](const timeval& t) { return t.tv_sec + t.tv_usec * 1e-6; };
      const double cpu = sec(r1.ru_utime) - sec(r0.ru_utime) + sec(r1.ru_stime) - sec(r0.ru_stime);
      // Bytes this rank's links carried per call: (n - 1) blocks each way.
      const double moved = static_cast<double>(bytes) * (n - 1) * iters;
      gdrResult_t async = gdrSuccess;
      gdrCommGetAsyncError(comm, &async);
      CK(async == gdrSuccess, "bench %s %zu: %s", coll, bytes, gdrGetLastError(comm));
      const bool direct = gdr::paths::direct::opsRun() - ops0 == static_cast<uint64_t>(iters);
      CK(direct == (std::string(path) == "direct"), "bench: the %s run went the other path", path);
      if (me == 0)
        std::printf("| %s | %s | %zu | %.1f | %.3f | %.2f |\n", path, coll, bytes, us,
                    bytes / us / 1e3, cpu / (moved / 1e9));
    }
  }
  cudaFree(in);
  cudaFree(out);
  return 0;
}

int report(const char* what, const std::vector<gdrtest::RankExit>& exits) {
  bool skipped = true;
  for (const auto& e : exits) skipped &= e.code == kNoDevice;
  if (skipped) {
    std::printf("skipped: no CUDA device\n");
    return kNoDevice;
  }
  std::string why;
  const bool ok = gdrtest::allOk(exits, &why);
  bool hung = false;
  for (const auto& e : exits) hung |= e.timedOut;
  std::printf("%s: %s%s%s\n", what, ok ? "passed" : "FAILED: ", ok ? "" : why.c_str(),
              hung ? " (a rank hung: killed at the deadline)" : "");
  return ok ? 0 : hung ? 3 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const bool benchMode = argc > 1 && std::string(argv[1]) == "--bench";
  const gdrtest::Env env = {{"GDR_IB_PROVIDER", "softnic"},
                            {"GDR_TRANSPORT", "ib"},
                            {"NCCL_NVLS_ENABLE", "0"},
                            {"GDR_TIMEOUT_MS", "10000"}};
  auto twoHosts = [](int rank) {
    setenv("GDR_HOST_ID", ("direct-host-" + std::to_string(rank)).c_str(), 1);
  };
  if (benchMode) {
    std::printf(
        "| path | collective | bytes | time (us) | GB/s (bytes/time) | CPU s per GB moved (per "
        "rank) |\n");
    std::printf("|---|---|---:|---:|---:|---:|\n");
    int rc = report("bench direct", gdrtest::runRanks(2, bench, env, 40, twoHosts));
    if (rc == kNoDevice) return rc;
    gdrtest::Env staged = env;
    staged.push_back({"GDR_NET_GDR", "0"});
    return report("bench staged", gdrtest::runRanks(2, bench, staged, 40, twoHosts)) | rc;
  }
  int rc =
      report("GPUDirect path correctness", gdrtest::runRanks(2, correctness, env, 45, twoHosts));
  if (rc == kNoDevice) return rc;
  gdrtest::Env three = env;
  three.push_back({"GDR_CHUNK_BYTES", "65536"});
  rc |= report("GPUDirect path correctness np 3 (ring)",
               gdrtest::runRanks(3, correctness, three, 90, twoHosts));
  rc |= report("GPUDirect path failed write", gdrtest::runRanks(2, failedWrite, env, 35, twoHosts));
  return rc;
}

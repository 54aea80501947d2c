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
//    ranks' streams, and the next call fails naming the peer;
//  - GDR_TEST_EXPECT_ORDER=flags|host: every operation took that order
//    (CTest gpu_direct: host, CUDA's default lazy loading; gpu_direct_flags:
//    CUDA_MODULE_LOADING=EAGER, where GDR_DIRECT_ORDER=auto takes flags).
// The bench of this path against the staged one: gpu_direct_bench.cc.
//
// The parent never touches CUDA (a forked child of a process that did
// cannot use it). Exit 0 when everything passed, 77 without a CUDA device,
// 3 when a rank hung (killed at its deadline), 1 on other failures.
#include <cuda_runtime.h>
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
#include "direct_ranks.h"
#include "gdrcoll.h"
#include "gpu_kernels.h"
#include "paths/direct/path.h"
#include "transport/ib/ib_endpoint.h"
#include "transport/ib/softnic.h"

namespace {

using gdrtest::direct::kNoDevice;
using gdrtest::direct::report;
// Below and above the default GDR_IB_ZCOPY_BYTES (256 KiB) in bytes, for
// 4-byte elements; odd so blocks are uneven.
const size_t kCounts[] = {999, 100003};

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
  const uint64_t flags0 = gdr::paths::direct::flagsOpsQueued();
  const auto t0 = std::chrono::steady_clock::now();
  gdrResult_t rc = gdrAllReduce(in, out, count, gdrInt32, gdrSum, comm, s);
  const double callMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const bool flags = gdr::paths::direct::flagsOpsQueued() > flags0;
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
  // Stream-flags order never waits for the stream on the host: the call
  // returns while the spinning kernel before it still runs.
  CK(!flags || callMs * 4 < totalMs,
     "stream order: in stream-flags order the call took %.2f of the stream's %.2f ms", callMs,
     totalMs);
  std::printf(
      "[rank %d] stream order (%s): call returned after %.2f ms, stream done after %.2f ms\n", me,
      flags ? "stream flags" : "host order", callMs, totalMs);
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

// Capture is refused in every capture mode, with gdrNotSupported and a text
// naming capture, before the call queued anything: the capture itself ends
// cleanly (an empty graph, which replays), and the communicator still works.
int captureRefused(gdrComm_t comm, cudaStream_t s) {
  float* d = nullptr;
  CUDA_OK(cudaMalloc(&d, 4096));
  CUDA_OK(cudaMemset(d, 0, 4096));
  CUDA_OK(cudaDeviceSynchronize());
  std::string last;
  for (cudaStreamCaptureMode mode : {cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeGlobal,
                                     cudaStreamCaptureModeRelaxed}) {
    CUDA_OK(cudaStreamBeginCapture(s, mode));
    gdrResult_t rc = gdrAllReduce(d, d, 1024, gdrFloat32, gdrSum, comm, s);
    const std::string text = gdrGetLastError(comm);
    last = text;
    cudaGraph_t g = nullptr;
    cudaError_t e = cudaStreamEndCapture(s, &g);
    size_t nodes = 0;
    if (g) cudaGraphGetNodes(g, nullptr, &nodes);
    cudaGraphExec_t x = nullptr;
    cudaError_t ix = g ? cudaGraphInstantiate(&x, g, 0) : cudaErrorInvalidValue;
    if (x) {
      ix = cudaGraphLaunch(x, s);
      cudaStreamSynchronize(s);
      cudaGraphExecDestroy(x);
    }
    if (g) cudaGraphDestroy(g);
    cudaGetLastError();
    CK(rc == gdrNotSupported && text.find("capture") != std::string::npos,
       "capture mode %d: rc %d, text '%s' (want gdrNotSupported naming capture)",
       static_cast<int>(mode), static_cast<int>(rc), text.c_str());
    CK(e == cudaSuccess && nodes == 0 && ix == cudaSuccess,
       "capture mode %d: end %s, %zu nodes, replay %s", static_cast<int>(mode),
       cudaGetErrorString(e), nodes, cudaGetErrorString(ix));
    gdrResult_t async = gdrSuccess;
    gdrCommGetAsyncError(comm, &async);
    CK(async == gdrSuccess, "capture mode %d failed the communicator: %s", static_cast<int>(mode),
       gdrGetLastError(comm));
  }
  std::printf("[rank %d] capture refused in 3 modes: %s\n", gdrtest::childRank(), last.c_str());
  gdrResult_t rc = gdrAllReduce(d, d, 1024, gdrFloat32, gdrSum, comm, s);  // still usable
  CK(rc == gdrSuccess, "after the refused capture: %s", gdrGetLastError(comm));
  CUDA_OK(cudaStreamSynchronize(s));
  cudaFree(d);
  return 0;
}

// GDR_TEST_EXPECT_ORDER=flags|host: the order GDR_DIRECT_ORDER (auto by
// default: flags only under CUDA_MODULE_LOADING=EAGER) must have given this
// rank's operations; `all`: every one that ran, not only some.
void checkOrder(int me, bool all) {
  const uint64_t ops = gdr::paths::direct::opsRun();
  const uint64_t flags = gdr::paths::direct::flagsOpsQueued();
  std::printf("[rank %d] %llu of %llu GPUDirect operations queued in stream-flags order\n", me,
              static_cast<unsigned long long>(flags), static_cast<unsigned long long>(ops));
  const char* want = std::getenv("GDR_TEST_EXPECT_ORDER");
  if (!want || !*want) return;
  if (std::string(want) == "flags")
    CK(flags > 0 && (!all || flags == ops), "expected stream-flags order: %llu of %llu",
       static_cast<unsigned long long>(flags), static_cast<unsigned long long>(ops));
  else
    CK(flags == 0, "expected host order, %llu operations in flags order",
       static_cast<unsigned long long>(flags));
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
  checkOrder(me, true);
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
  checkOrder(me, false);
  return 0;
}

}  // namespace

// gdr-gpu-direct-test [np2] [np3] [failed]: those runs only (default all).
int main(int argc, char** argv) {
  auto wanted = [&](const char* part) {
    if (argc < 2) return true;
    for (int i = 1; i < argc; ++i)
      if (std::string(argv[i]) == part) return true;
    return false;
  };
  const gdrtest::Env env = gdrtest::direct::softNicEnv();
  auto twoHosts = gdrtest::direct::ownHost;
  int rc = 0;
  bool skipped = false;
  auto run = [&](const char* part, const char* what, int n, gdrtest::RankFn fn,
                 const gdrtest::Env& e, int timeoutSec) {
    if (skipped || !wanted(part)) return;
    const int one = report(what, gdrtest::runRanks(n, fn, e, timeoutSec, twoHosts));
    skipped = one == kNoDevice;
    rc = skipped ? one : rc | one;
  };
  run("np2", "GPUDirect path correctness", 2, correctness, env, 45);
  gdrtest::Env three = env;
  three.push_back({"GDR_CHUNK_BYTES", "65536"});
  run("np3", "GPUDirect path correctness np 3 (ring)", 3, correctness, three, 90);
  run("failed", "GPUDirect path failed write", 2, failedWrite, env, 35);
  return rc;
}

// One process drives every GPU (one communicator per GPU, created inside
// gdrGroupStart/gdrGroupEnd, as NCCL programs do): every collective x type x
// op x size (0, 1, odd, large) x in-place, all communicators' calls inside one
// group, on device buffers. Ranks of one process reach each other by raw
// pointers with peer access (not CUDA IPC handles). Fresh random inputs,
// outputs poisoned first, each element checked against a host reference;
// also a send/recv ring, and a group captured in CUDA graphs and replayed.
// No MPI. Fewer than two GPUs: "skipped" and exit 77.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gdrcoll.h"
#include "gpu_kernels.h"
#include "gpu_values.h"

namespace {

int gN = 2;
long gFailures = 0, gChecks = 0;
std::mt19937_64 gRng;
std::vector<gdrComm_t> gComms;
std::vector<cudaStream_t> gStreams;

#define CUDA_OK(x)                                                                                        \
  do {                                                                                                    \
    cudaError_t rc_ = (x);                                                                                \
    if (rc_ != cudaSuccess) {                                                                             \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(rc_));           \
      std::exit(2);                                                                                       \
    }                                                                                                     \
  } while (0)
#define GDR_OK(x)                                                                                         \
  do {                                                                                                    \
    gdrResult_t rc_ = (x);                                                                                \
    if (rc_ != gdrSuccess) {                                                                              \
      std::fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #x, gdrGetErrorString(rc_),        \
                   gdrGetLastError(nullptr));                                                             \
      std::exit(2);                                                                                       \
    }                                                                                                     \
  } while (0)

size_t tsize(gdrDataType_t t) { return gdrtest::typeBytes(t); }

std::vector<char> randomInput(gdrDataType_t t, size_t count) { return gdrtest::randomValues(t, count, gRng); }

// op over ranks (in rank order) of in[r][off, off + count).
std::vector<char> reduceRef(const std::vector<std::vector<char>>& in, size_t offBytes, size_t count, gdrDataType_t t,
                            gdrRedOp_t op) {
  std::vector<const char*> src;
  for (int r = 0; r < gN; ++r) src.push_back(in[r].data() + offBytes);
  return gdrtest::reduceRef(src, count, t, op);
}

void check(const std::string& what, int rank, gdrDataType_t t, gdrRedOp_t op, size_t count, bool inPlace,
           const char* got, const char* want, size_t n) {
  ++gChecks;
  if (gdrtest::mismatches(what.c_str(), rank, gN, t, op, count, inPlace, got, want, n)) ++gFailures;
}

// A buffer on rank r's GPU.
struct DevBuf {
  int dev;
  char* p = nullptr;
  size_t bytes;
  DevBuf(int d, size_t b) : dev(d), bytes(b) {
    CUDA_OK(cudaSetDevice(dev));
    CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&p), b ? b : 16));
  }
  ~DevBuf() {
    cudaSetDevice(dev);
    cudaFree(p);
  }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  void poison() {
    CUDA_OK(cudaSetDevice(dev));
    CUDA_OK(cudaMemset(p, 0xA5, bytes ? bytes : 16));
    CUDA_OK(cudaDeviceSynchronize());
  }
  void put(const std::vector<char>& h, size_t off = 0) {
    CUDA_OK(cudaSetDevice(dev));
    if (!h.empty()) CUDA_OK(cudaMemcpy(p + off, h.data(), h.size(), cudaMemcpyHostToDevice));
    CUDA_OK(cudaDeviceSynchronize());
  }
  std::vector<char> get(size_t off, size_t n) const {
    std::vector<char> h(n);
    CUDA_OK(cudaSetDevice(dev));
    if (n) CUDA_OK(cudaMemcpy(h.data(), p + off, n, cudaMemcpyDeviceToHost));
    return h;
  }
};

struct RankBufs {
  std::vector<char> in;
  std::unique_ptr<DevBuf> din, dout;
};

// One group holding every rank's call, then every stream synchronized. The
// caller's device is set to the last GPU on purpose: each call must run on
// its communicator's device whatever is current.
void groupRound(const std::function<void(int rank)>& issue) {
  CUDA_OK(cudaSetDevice(gN - 1));
  GDR_OK(gdrGroupStart());
  for (int r = 0; r < gN; ++r) issue(r);
  GDR_OK(gdrGroupEnd());
  for (int r = 0; r < gN; ++r) {
    CUDA_OK(cudaSetDevice(r));
    CUDA_OK(cudaStreamSynchronize(gStreams[r]));
  }
}

const std::vector<gdrDataType_t> kTypes = {gdrInt8,   gdrUint8,    gdrInt32,   gdrUint32,  gdrInt64,
                                          gdrUint64, gdrFloat16, gdrBfloat16, gdrFloat32, gdrFloat64};
const std::vector<gdrRedOp_t> kOps = {gdrSum, gdrProd, gdrMax, gdrMin, gdrAvg};
std::vector<size_t> gCounts = {0, 1, 7, 1000003};

// Inputs of `inElems` per rank on every GPU, outputs of `outElems` poisoned
// (or, in place, holding the input).
std::vector<RankBufs> prepare(gdrDataType_t t, size_t inElems, size_t outElems, bool inPlace) {
  std::vector<RankBufs> b(gN);
  for (int r = 0; r < gN; ++r) {
    b[r].in = randomInput(t, inElems);
    b[r].din = std::make_unique<DevBuf>(r, b[r].in.size());
    b[r].dout = std::make_unique<DevBuf>(r, std::max(outElems, inElems) * tsize(t));
    b[r].din->put(b[r].in);
    b[r].dout->poison();
    if (inPlace) b[r].dout->put(b[r].in);
  }
  return b;
}

std::vector<std::vector<char>> inputsOf(const std::vector<RankBufs>& b) {
  std::vector<std::vector<char>> in;
  for (const auto& x : b) in.push_back(x.in);
  return in;
}

void testReductions() {
  for (gdrDataType_t t : kTypes)
    for (gdrRedOp_t op : kOps)
      for (size_t count : gCounts)
        for (bool ip : {false, true}) {
          const size_t eb = tsize(t);
          auto b = prepare(t, count, count, ip);
          groupRound([&](int r) {
            GDR_OK(gdrAllReduce(ip ? GDR_IN_PLACE : b[r].din->p, b[r].dout->p, count, t, op, gComms[r], gStreams[r]));
          });
          auto ref = reduceRef(inputsOf(b), 0, count, t, op);
          for (int r = 0; r < gN; ++r)
            check("allreduce", r, t, op, count, ip, b[r].dout->get(0, count * eb).data(), ref.data(), count);

          const int root = static_cast<int>(count % gN);
          b = prepare(t, count, count, false);
          if (ip) b[root].dout->put(b[root].in);
          groupRound([&](int r) {
            const void* send = ip && r == root ? GDR_IN_PLACE : b[r].din->p;
            GDR_OK(gdrReduce(send, b[r].dout->p, count, t, op, root, gComms[r], gStreams[r]));
          });
          ref = reduceRef(inputsOf(b), 0, count, t, op);
          check("reduce", root, t, op, count, ip, b[root].dout->get(0, count * eb).data(), ref.data(), count);
          const std::vector<char> untouched(count * eb, static_cast<char>(0xA5));
          for (int r = 0; r < gN; ++r)
            if (r != root)
              check("reduce (non-root output untouched)", r, gdrUint8, gdrSum, count * eb, ip,
                    b[r].dout->get(0, count * eb).data(), untouched.data(), count * eb);

          b = prepare(t, count * gN, count, ip);
          groupRound([&](int r) {
            GDR_OK(gdrReduceScatter(ip ? GDR_IN_PLACE : b[r].din->p, b[r].dout->p, count, t, op, gComms[r],
                                    gStreams[r]));
          });
          for (int r = 0; r < gN; ++r) {
            ref = reduceRef(inputsOf(b), r * count * eb, count, t, op);
            check("reduce_scatter", r, t, op, count, ip, b[r].dout->get(0, count * eb).data(), ref.data(), count);
          }
        }
}

void testMoves() {
  for (gdrDataType_t t : kTypes)
    for (size_t count : gCounts)
      for (bool ip : {false, true}) {
        const size_t eb = tsize(t), bytes = count * eb;
        const int root = static_cast<int>((count + ip) % gN);
        auto b = prepare(t, count, count, false);
        b[root].dout->put(b[root].in);
        groupRound([&](int r) { GDR_OK(gdrBroadcast(b[r].dout->p, count, t, root, gComms[r], gStreams[r])); });
        for (int r = 0; r < gN; ++r)
          check("broadcast", r, t, gdrSum, count, true, b[r].dout->get(0, bytes).data(), b[root].in.data(), count);

        b = prepare(t, count, count * gN, false);
        for (int r = 0; r < gN; ++r)
          if (ip) b[r].dout->put(b[r].in, r * bytes);
        groupRound([&](int r) {
          GDR_OK(gdrAllGather(ip ? GDR_IN_PLACE : b[r].din->p, count, b[r].dout->p, t, gComms[r], gStreams[r]));
        });
        std::vector<char> all;
        for (int r = 0; r < gN; ++r) all.insert(all.end(), b[r].in.begin(), b[r].in.end());
        for (int r = 0; r < gN; ++r)
          check("allgather", r, t, gdrSum, count, ip, b[r].dout->get(0, bytes * gN).data(), all.data(), count * gN);

        b = prepare(t, count * gN, count * gN, ip);
        groupRound([&](int r) {
          GDR_OK(gdrAllToAll(ip ? GDR_IN_PLACE : b[r].din->p, count, b[r].dout->p, t, gComms[r], gStreams[r]));
        });
        for (int r = 0; r < gN; ++r) {
          std::vector<char> ref(bytes * gN);
          for (int p = 0; p < gN; ++p)
            if (bytes) std::memcpy(ref.data() + p * bytes, b[p].in.data() + r * bytes, bytes);
          check("alltoall", r, t, gdrSum, count, ip, b[r].dout->get(0, ref.size()).data(), ref.data(), count * gN);
        }
      }
}

// A ring (each rank to the next) plus a message to oneself, in one group.
void testSendRecv() {
  for (size_t count : {size_t{1}, size_t{7}, size_t{1000003}}) {
    const size_t bytes = count * 4;
    auto b = prepare(gdrInt32, count, count, false);
    std::vector<std::unique_ptr<DevBuf>> self(gN);
    for (int r = 0; r < gN; ++r) {
      self[r] = std::make_unique<DevBuf>(r, bytes);
      self[r]->poison();
    }
    groupRound([&](int r) {
      GDR_OK(gdrSend(b[r].din->p, count, gdrInt32, (r + 1) % gN, gComms[r], gStreams[r]));
      GDR_OK(gdrRecv(b[r].dout->p, count, gdrInt32, (r + gN - 1) % gN, gComms[r], gStreams[r]));
      GDR_OK(gdrSend(b[r].din->p, count, gdrInt32, r, gComms[r], gStreams[r]));
      GDR_OK(gdrRecv(self[r]->p, count, gdrInt32, r, gComms[r], gStreams[r]));
    });
    for (int r = 0; r < gN; ++r) {
      const int prev = (r + gN - 1) % gN;
      check("sendrecv ring", r, gdrInt32, gdrSum, count, false, b[r].dout->get(0, bytes).data(), b[prev].in.data(),
            count);
      check("sendrecv self", r, gdrInt32, gdrSum, count, false, self[r]->get(0, bytes).data(), b[r].in.data(), count);
    }
  }
}

// Every rank's add-one + all-reduce captured in one graph per GPU, replayed
// 100 times: the output ends at the sum over ranks of (x_r + 100).
void testGraph() {
  const size_t count = 777777;
  auto b = prepare(gdrInt32, count, count, false);
  std::vector<cudaGraphExec_t> exec(gN);
  std::vector<cudaGraph_t> graph(gN);
  for (int r = 0; r < gN; ++r) {
    CUDA_OK(cudaSetDevice(r));
    CUDA_OK(cudaStreamBeginCapture(gStreams[r], cudaStreamCaptureModeRelaxed));
    CUDA_OK(testAddOne(reinterpret_cast<int32_t*>(b[r].din->p), count, gStreams[r]));
  }
  GDR_OK(gdrGroupStart());
  for (int r = 0; r < gN; ++r)
    GDR_OK(gdrAllReduce(b[r].din->p, b[r].dout->p, count, gdrInt32, gdrSum, gComms[r], gStreams[r]));
  GDR_OK(gdrGroupEnd());
  for (int r = 0; r < gN; ++r) {
    CUDA_OK(cudaSetDevice(r));
    CUDA_OK(cudaStreamEndCapture(gStreams[r], &graph[r]));
    CUDA_OK(cudaGraphInstantiate(&exec[r], graph[r], 0));
  }
  for (int i = 0; i < 100; ++i)
    for (int r = 0; r < gN; ++r) {
      CUDA_OK(cudaSetDevice(r));
      CUDA_OK(cudaGraphLaunch(exec[r], gStreams[r]));
    }
  std::vector<int32_t> ref(count, 0);
  for (int r = 0; r < gN; ++r) {
    CUDA_OK(cudaSetDevice(r));
    CUDA_OK(cudaStreamSynchronize(gStreams[r]));
    for (size_t i = 0; i < count; ++i) ref[i] += reinterpret_cast<const int32_t*>(b[r].in.data())[i] + 100;
  }
  for (int r = 0; r < gN; ++r) {
    check("graph x100", r, gdrInt32, gdrSum, count, false, b[r].dout->get(0, count * 4).data(),
          reinterpret_cast<const char*>(ref.data()), count);
    CUDA_OK(cudaGraphExecDestroy(exec[r]));
    CUDA_OK(cudaGraphDestroy(graph[r]));
  }
}

}  // namespace

int main(int argc, char** argv) {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("skipped: no CUDA device\n");
    return 77;
  }
  if (ndev < 2) {
    std::printf("skipped: one process driving several GPUs needs 2, found %d\n", ndev);
    return 77;
  }
  gN = std::min(ndev, 8);
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  if (!quick) gCounts.push_back(3u << 20);
  std::random_device rd;
  gRng.seed((static_cast<uint64_t>(rd()) << 32) ^ rd());

  gdrUniqueId id;
  GDR_OK(gdrGetUniqueId(&id));
  gComms.assign(gN, nullptr);
  gStreams.assign(gN, nullptr);
  GDR_OK(gdrGroupStart());
  for (int r = 0; r < gN; ++r) {
    CUDA_OK(cudaSetDevice(r));  // the communicator's device: current at its init
    CUDA_OK(cudaStreamCreateWithFlags(&gStreams[r], cudaStreamNonBlocking));
    GDR_OK(gdrCommInitRank(&gComms[r], gN, id, r));
  }
  GDR_OK(gdrGroupEnd());

  auto section = [&](const char* name, auto&& fn) {
    const long before = gFailures;
    fn();
    std::printf("[%s] %s\n", gFailures > before ? "FAIL" : " ok ", name);
    std::fflush(stdout);
  };
  section("barrier on streams (sets up peer access)", [&] {
    groupRound([&](int r) { GDR_OK(gdrBarrier(gComms[r], gStreams[r])); });
  });
  section("allreduce, reduce, reduce_scatter", testReductions);
  section("broadcast, allgather, alltoall", testMoves);
  section("send/recv ring + self", testSendRecv);
  section("cuda graph replay x100", testGraph);

  for (int r = 0; r < gN; ++r) {
    GDR_OK(gdrCommDestroy(gComms[r]));
    CUDA_OK(cudaSetDevice(r));
    CUDA_OK(cudaStreamDestroy(gStreams[r]));
  }
  std::printf("gpu multi-device tests (%d GPUs, one process): %ld checks, %ld failed\n", gN, gChecks, gFailures);
  return gFailures ? 1 : 0;
}

// GPU tests: every collective x type x op x size x in-place on device buffers,
// one process per GPU (mpirun -np 1 or 2). Fresh random inputs every run,
// outputs poisoned before every call, each element checked against a host
// reference built from every rank's inputs (gathered with MPI). Also: stream
// order, CUDA-graph replay, the staged path (GDR_TRANSPORT=socket), mixed
// host/device refusal, and gdrcoll vs NCCL on integers (bit-exact).
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gdrcoll.h"
#include "gdrcoll_mpi.h"
#include "gpu_kernels.h"
#include "gpu_mpi_check.h"
#include "gpu_values.h"
#include "security/aead.h"

#if GDR_TEST_NCCL
#include <nccl.h>
#endif

namespace {

int gRank = 0, gSize = 1;
long gFailures = 0, gChecks = 0;
std::mt19937_64 gRng;

size_t tsize(gdrDataType_t t) { return gdrtest::typeBytes(t); }

void fillRandom(std::vector<char>& buf, gdrDataType_t t, size_t count) { buf = gdrtest::randomValues(t, count, gRng); }

// Every rank's buffer of `bytes` (same size everywhere).
std::vector<char> gatherAll(const std::vector<char>& mine) {
  std::vector<char> all(mine.size() * gSize);
  MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, all.data(), static_cast<int>(mine.size()),
                MPI_BYTE, MPI_COMM_WORLD);
  return all;
}

// ref = op over ranks (in rank order) of all[r][off, off + count).
std::vector<char> reduceRef(const std::vector<char>& all, size_t rankBytes, size_t offBytes, size_t count,
                            gdrDataType_t t, gdrRedOp_t op) {
  std::vector<const char*> src;
  for (int r = 0; r < gSize; ++r) src.push_back(all.data() + r * rankBytes + offBytes);
  return gdrtest::reduceRef(src, count, t, op);
}

void check(const char* what, gdrDataType_t t, gdrRedOp_t op, size_t count, bool inPlace, const char* got,
           const char* want, size_t n) {
  ++gChecks;
  if (gdrtest::mismatches(what, gRank, gSize, t, op, count, inPlace, got, want, n)) ++gFailures;
}

using gdrtest::DevBuf;

const std::vector<gdrDataType_t> kTypes = {gdrInt8,    gdrUint8,   gdrInt32,      gdrUint32,    gdrInt64,  gdrUint64,
                                          gdrFloat16, gdrBfloat16, gdrFloat32, gdrFloat64, gdrFloat8e4m3, gdrFloat8e5m2};
const std::vector<gdrRedOp_t> kOps = {gdrSum, gdrProd, gdrMax, gdrMin, gdrAvg};
// 0, 1, odd, not a multiple of any chunk or vector, and a few MiB.
const std::vector<size_t> kCounts = {0, 1, 7, 1000003, 3u << 20};

void testAllReduce(gdrComm_t comm, cudaStream_t s, const char* tag) {
  for (gdrDataType_t t : kTypes)
    for (gdrRedOp_t op : kOps)
      for (size_t count : kCounts)
        for (bool ip : {false, true}) {
          std::vector<char> in;
          fillRandom(in, t, count);
          const size_t bytes = in.size();
          DevBuf din(bytes), dout(bytes);
          din.put(in);
          if (ip) dout.put(in); else dout.poison();
          GDR_OK(gdrAllReduce(ip ? GDR_IN_PLACE : din.p, dout.p, count, t, op, comm, s));
          CUDA_OK(cudaStreamSynchronize(s));
          std::vector<char> all = gatherAll(in);
          std::vector<char> ref = reduceRef(all, bytes, 0, count, t, op);
          check(tag, t, op, count, ip, dout.get(0, bytes).data(), ref.data(), count);
        }
}

void testReduce(gdrComm_t comm, cudaStream_t s) {
  for (int root : {0, gSize - 1})
    for (gdrDataType_t t : kTypes)
      for (gdrRedOp_t op : kOps)
        for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1000003}})
          for (bool ip : {false, true}) {
            std::vector<char> in;
            fillRandom(in, t, count);
            const size_t bytes = in.size();
            DevBuf din(bytes), dout(bytes);
            din.put(in);
            const bool isRoot = gRank == root;
            if (ip && isRoot) dout.put(in); else dout.poison();
            GDR_OK(gdrReduce(ip && isRoot ? GDR_IN_PLACE : din.p, dout.p, count, t, op, root, comm, s));
            CUDA_OK(cudaStreamSynchronize(s));
            std::vector<char> all = gatherAll(in);
            if (isRoot) {
              std::vector<char> ref = reduceRef(all, bytes, 0, count, t, op);
              check("reduce", t, op, count, ip, dout.get(0, bytes).data(), ref.data(), count);
            } else {
              std::vector<char> untouched(bytes, static_cast<char>(0xA5));
              check("reduce(non-root output untouched)", gdrUint8, gdrSum, bytes, ip, dout.get(0, bytes).data(),
                    untouched.data(), bytes);
            }
          }
}

void testReduceScatter(gdrComm_t comm, cudaStream_t s) {
  for (gdrDataType_t t : kTypes)
    for (gdrRedOp_t op : kOps)
      for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{500001}})
        for (bool ip : {false, true}) {
          std::vector<char> in;
          fillRandom(in, t, count * gSize);
          const size_t eb = tsize(t), bytes = in.size();
          DevBuf din(bytes), dout(bytes);
          din.put(in);
          if (ip) dout.put(in); else dout.poison();
          GDR_OK(gdrReduceScatter(ip ? GDR_IN_PLACE : din.p, dout.p, count, t, op, comm, s));
          CUDA_OK(cudaStreamSynchronize(s));
          std::vector<char> all = gatherAll(in);
          std::vector<char> ref = reduceRef(all, bytes, gRank * count * eb, count, t, op);
          check("reduce_scatter", t, op, count, ip, dout.get(0, count * eb).data(), ref.data(), count);
        }
}

// Byte-moving collectives: types only change the element size.
void testMoves(gdrComm_t comm, cudaStream_t s) {
  for (gdrDataType_t t : kTypes)
    for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1000003}}) {
      const size_t eb = tsize(t), bytes = count * eb;
      for (int root = 0; root < gSize; ++root) {  // broadcast
        std::vector<char> in;
        fillRandom(in, t, count);
        std::vector<char> all = gatherAll(in);
        DevBuf d(bytes);
        if (gRank == root) d.put(in); else d.poison();
        GDR_OK(gdrBroadcast(d.p, count, t, root, comm, s));
        CUDA_OK(cudaStreamSynchronize(s));
        check("broadcast", t, gdrSum, count, true, d.get(0, bytes).data(), all.data() + root * bytes, count);
        // Out of place (gdrBroadcastFrom): the root's copy rides in the
        // kernel on the cuda_ipc path; its sendbuf stays as it was.
        DevBuf from(bytes), to(bytes);
        from.put(in);
        to.poison();
        GDR_OK(gdrBroadcastFrom(gRank == root ? from.p : nullptr, to.p, count, t, root, comm, s));
        CUDA_OK(cudaStreamSynchronize(s));
        check("broadcast(from)", t, gdrSum, count, false, to.get(0, bytes).data(),
              all.data() + root * bytes, count);
        if (gRank == root)
          check("broadcast(from) sendbuf", t, gdrSum, count, false, from.get(0, bytes).data(),
                in.data(), count);
      }
      for (bool ip : {false, true}) {  // all-gather
        std::vector<char> in;
        fillRandom(in, t, count);
        std::vector<char> all = gatherAll(in);
        DevBuf din(bytes), dout(bytes * gSize);
        din.put(in);
        dout.poison();
        if (ip) dout.put(in, gRank * bytes);
        GDR_OK(gdrAllGather(ip ? GDR_IN_PLACE : din.p, count, dout.p, t, comm, s));
        CUDA_OK(cudaStreamSynchronize(s));
        check("allgather", t, gdrSum, count, ip, dout.get(0, bytes * gSize).data(), all.data(), count * gSize);
      }
      for (bool ip : {false, true}) {  // all-to-all
        std::vector<char> in;
        fillRandom(in, t, count * gSize);
        std::vector<char> all = gatherAll(in);
        DevBuf din(bytes * gSize), dout(bytes * gSize);
        din.put(in);
        if (ip) dout.put(in); else dout.poison();
        GDR_OK(gdrAllToAll(ip ? GDR_IN_PLACE : din.p, count, dout.p, t, comm, s));
        CUDA_OK(cudaStreamSynchronize(s));
        std::vector<char> ref(bytes * gSize);
        for (int p = 0; p < gSize; ++p)
          if (bytes) std::memcpy(ref.data() + p * bytes, all.data() + p * bytes * gSize + gRank * bytes, bytes);
        check("alltoall", t, gdrSum, count, ip, dout.get(0, ref.size()).data(), ref.data(), count * gSize);
      }
    }
  // all-to-all-v: rank r sends (r + 1) * (p + 2) * k elements to rank p.
  for (size_t k : {size_t{0}, size_t{1}, size_t{3001}}) {
    const gdrDataType_t t = gdrInt32;
    std::vector<size_t> sc(gSize), sd(gSize), rc(gSize), rd(gSize);
    size_t stot = 0, rtot = 0;
    for (int p = 0; p < gSize; ++p) {
      sc[p] = (gRank + 1) * (p + 2) * k;
      rc[p] = (p + 1) * (gRank + 2) * k;
      sd[p] = stot + 5;  // gaps between blocks
      rd[p] = rtot + 3;
      stot += sc[p] + 5;
      rtot += rc[p] + 3;
    }
    std::vector<char> in;
    fillRandom(in, t, stot);
    DevBuf din(in.size()), dout(rtot * 4);
    din.put(in);
    dout.poison();
    GDR_OK(gdrAllToAllv(din.p, sc.data(), sd.data(), dout.p, rc.data(), rd.data(), t, comm, s));
    CUDA_OK(cudaStreamSynchronize(s));
    std::vector<char> got = dout.get(0, rtot * 4);
    // Each peer's block, re-derived from its inputs: peers send their whole input.
    std::vector<int> sizes(gSize);
    int mySize = static_cast<int>(in.size());
    MPI_Allgather(&mySize, 1, MPI_INT, sizes.data(), 1, MPI_INT, MPI_COMM_WORLD);
    for (int p = 0; p < gSize; ++p) {
      std::vector<char> theirs(sizes[p]);
      if (p == gRank) theirs = in;
      MPI_Bcast(theirs.data(), sizes[p], MPI_BYTE, p, MPI_COMM_WORLD);
      size_t off = 0;  // p's displacement for me
      for (int q = 0; q < gRank; ++q) off += (p + 1) * (q + 2) * k + 5;
      off += 5;
      check("alltoallv", t, gdrSum, rc[p], false, got.data() + rd[p] * 4, theirs.data() + off * 4, rc[p]);
    }
  }
}

void testSendRecv(gdrComm_t comm, cudaStream_t s) {
  for (size_t count : {size_t{1}, size_t{1000003}}) {
    const size_t bytes = count * 4;
    std::vector<char> in;
    fillRandom(in, gdrInt32, count);
    std::vector<char> all = gatherAll(in);
    DevBuf din(bytes), dout(bytes), dself(bytes);
    din.put(in);
    dout.poison();
    dself.poison();
    const int next = (gRank + 1) % gSize, prev = (gRank + gSize - 1) % gSize;
    GDR_OK(gdrGroupStart());
    GDR_OK(gdrSend(din.p, count, gdrInt32, next, comm, s));
    GDR_OK(gdrRecv(dout.p, count, gdrInt32, prev, comm, s));
    if (gSize > 1) {
      GDR_OK(gdrSend(din.p, count, gdrInt32, gRank, comm, s));
      GDR_OK(gdrRecv(dself.p, count, gdrInt32, gRank, comm, s));
    }
    GDR_OK(gdrGroupEnd());
    CUDA_OK(cudaStreamSynchronize(s));
    check("sendrecv(group ring)", gdrInt32, gdrSum, count, false, dout.get(0, bytes).data(),
          all.data() + prev * bytes, count);
    if (gSize > 1)
      check("sendrecv(self)", gdrInt32, gdrSum, count, false, dself.get(0, bytes).data(), in.data(), count);
    if (gSize > 1) {  // outside a group: rank 0 -> rank 1
      dout.poison();
      if (gRank == 0) GDR_OK(gdrSend(din.p, count, gdrInt32, 1, comm, s));
      if (gRank == 1) GDR_OK(gdrRecv(dout.p, count, gdrInt32, 0, comm, s));
      CUDA_OK(cudaStreamSynchronize(s));
      if (gRank == 1)
        check("sendrecv(blocking)", gdrInt32, gdrSum, count, false, dout.get(0, bytes).data(), all.data(), count);
    }
  }
}

// A kernel queued before the collective is seen; work after it sees the result.
void testStreamOrder(gdrComm_t comm, cudaStream_t s) {
  const size_t count = 1 << 20;
  DevBuf d(count * 4), o(count * 4);
  d.poison();
  o.poison();
  CUDA_OK(testSpinThenFill(reinterpret_cast<uint32_t*>(d.p), count, 7u + gRank, 20000000, s));
  GDR_OK(gdrAllReduce(d.p, o.p, count, gdrUint32, gdrSum, comm, s));
  CUDA_OK(testAddOne(reinterpret_cast<int32_t*>(o.p), count, s));
  CUDA_OK(cudaStreamSynchronize(s));
  uint32_t want = 0;
  for (int r = 0; r < gSize; ++r) want += 7u + r;
  want += 1;
  std::vector<uint32_t> ref(count, want);
  check("stream order", gdrUint32, gdrSum, count, false, o.get(0, count * 4).data(),
        reinterpret_cast<const char*>(ref.data()), count);
}

// Captured once, replayed 100 times: each replay adds one to the input and
// all-reduces it, so the output ends at sum over ranks of (x_r + 100).
void testGraph(gdrComm_t comm, cudaStream_t s) {
  const size_t count = 777777;
  std::vector<char> in;
  fillRandom(in, gdrInt32, count);
  std::vector<char> all = gatherAll(in);
  DevBuf d(count * 4), o(count * 4);
  d.put(in);
  o.poison();
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  CUDA_OK(testAddOne(reinterpret_cast<int32_t*>(d.p), count, s));
  GDR_OK(gdrAllReduce(d.p, o.p, count, gdrInt32, gdrSum, comm, s));
  CUDA_OK(cudaStreamEndCapture(s, &graph));
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 100; ++i) CUDA_OK(cudaGraphLaunch(exec, s));
  CUDA_OK(cudaStreamSynchronize(s));
  std::vector<int32_t> ref(count, 0);
  for (int r = 0; r < gSize; ++r)
    for (size_t i = 0; i < count; ++i)
      ref[i] += reinterpret_cast<const int32_t*>(all.data() + r * count * 4)[i] + 100;
  check("graph x100", gdrInt32, gdrSum, count, false, o.get(0, count * 4).data(),
        reinterpret_cast<const char*>(ref.data()), count);
  CUDA_OK(cudaGraphExecDestroy(exec));
  CUDA_OK(cudaGraphDestroy(graph));
}

void testLarge(gdrComm_t comm, cudaStream_t s) {
  const size_t count = (256u << 20) / 4 + 3;  // >= 256 MiB, odd
  for (gdrDataType_t t : {gdrFloat32, gdrInt32}) {
    std::vector<char> in;
    fillRandom(in, t, count);
    DevBuf din(in.size()), dout(in.size());
    din.put(in);
    dout.poison();
    GDR_OK(gdrAllReduce(din.p, dout.p, count, t, gdrSum, comm, s));
    CUDA_OK(cudaStreamSynchronize(s));
    std::vector<char> all = gatherAll(in);
    std::vector<char> ref = reduceRef(all, in.size(), 0, count, t, gdrSum);
    check("allreduce 256MiB", t, gdrSum, count, false, dout.get(0, in.size()).data(), ref.data(), count);
  }
}

void testMixedRefused(gdrComm_t comm, cudaStream_t s) {
  ++gChecks;
  DevBuf d(64);
  std::vector<char> h(64);
  gdrResult_t rc = gdrAllReduce(h.data(), d.p, 16, gdrInt32, gdrSum, comm, s);
  if (rc != gdrInvalidArgument) {
    std::fprintf(stderr, "rank %d: mixed host/device all-reduce returned %d, expected gdrInvalidArgument\n", gRank, rc);
    ++gFailures;
  }
}

// Not a check: host cost per call of the pieces of a small device
// collective, printed for bench/results (a small all-reduce is bound by it).
void reportHostOverhead(gdrComm_t comm, cudaStream_t s) {
  DevBuf a(64), b(64);
  const int n = 2000;
  auto perCall = [&](auto&& fn) {
    CUDA_OK(cudaStreamSynchronize(s));
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < n; ++i) fn();
    const double us = (MPI_Wtime() - t0) * 1e6 / n;
    CUDA_OK(cudaStreamSynchronize(s));
    return us;
  };
  cudaPointerAttributes attr;
  const double ptr = perCall([&] { (void)cudaPointerGetAttributes(&attr, a.p); });
  const double launch = perCall([&] { (void)testAddOne(reinterpret_cast<int32_t*>(a.p), 1, s); });
  const double coll = perCall([&] { (void)gdrAllReduce(a.p, b.p, 2, gdrFloat32, gdrSum, comm, s); });
  if (gRank == 0)
    std::printf("host cost per call (us): cudaPointerGetAttributes %.2f, kernel launch %.2f, gdrAllReduce 8 B %.2f\n",
                ptr, launch, coll);
}

#if GDR_TEST_NCCL
void testVsNccl(gdrComm_t comm, cudaStream_t s) {
  // NCCL refuses ranks that share a GPU (gdrcoll allows them), so there is
  // nothing to compare with then.
  cudaDeviceProp prop{};
  int dev = -1;
  cudaGetDevice(&dev);
  cudaGetDeviceProperties(&prop, dev);
  std::vector<char> uuids(static_cast<size_t>(gSize) * sizeof(prop.uuid));
  MPI_Allgather(&prop.uuid, sizeof(prop.uuid), MPI_BYTE, uuids.data(), sizeof(prop.uuid), MPI_BYTE,
                MPI_COMM_WORLD);
  const size_t u = sizeof(prop.uuid);
  for (int a = 0; a < gSize; ++a)  // the same answer on every rank
    for (int b = a + 1; b < gSize; ++b)
      if (!std::memcmp(&uuids[a * u], &uuids[b * u], u)) {
        if (gRank == 0) std::printf("[skip] gdrcoll vs NCCL: ranks share a GPU, which NCCL refuses\n");
        return;
      }
  ncclUniqueId id;
  if (gRank == 0) ncclGetUniqueId(&id);
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t nc;
  if (ncclCommInitRank(&nc, gSize, id, gRank) != ncclSuccess) {
    std::fprintf(stderr, "rank %d: ncclCommInitRank failed\n", gRank);
    ++gFailures;
    return;
  }
  const struct { gdrDataType_t g; ncclDataType_t n; } types[] = {
      {gdrInt8, ncclInt8}, {gdrUint8, ncclUint8}, {gdrInt32, ncclInt32},
      {gdrUint32, ncclUint32}, {gdrInt64, ncclInt64}, {gdrUint64, ncclUint64}};
  const struct { gdrRedOp_t g; ncclRedOp_t n; } ops[] = {
      {gdrSum, ncclSum}, {gdrProd, ncclProd}, {gdrMax, ncclMax}, {gdrMin, ncclMin}, {gdrAvg, ncclAvg}};
  for (auto t : types)
    for (auto op : ops) {
      if (op.g == gdrAvg) continue;  // NCCL's avg is float-only
      const size_t count = 1000003;
      std::vector<char> in;
      fillRandom(in, t.g, count);
      DevBuf din(in.size()), a(in.size()), b(in.size());
      din.put(in);
      a.poison();
      b.poison();
      GDR_OK(gdrAllReduce(din.p, a.p, count, t.g, op.g, comm, s));
      if (ncclAllReduce(din.p, b.p, count, t.n, op.n, nc, s) != ncclSuccess) ++gFailures;
      CUDA_OK(cudaStreamSynchronize(s));
      check("gdrcoll vs nccl", t.g, op.g, count, false, a.get(0, in.size()).data(), b.get(0, in.size()).data(), count);
    }
  ncclCommDestroy(nc);
}
#endif

}  // namespace

// GDR_ENCRYPT=1 on the staged path: rank 0 flips a bit of its sealed
// all-gather row on the host (the test hook); every rank's GPU must refuse
// that row (zeros, not data), deliver the others, and put the communicator
// in the error state naming rank 0. Leaves `comm` failed.
void testSealedTamper(gdrComm_t comm, cudaStream_t s) {
  if (gSize < 2) return;
  const size_t count = 4096, bytes = count * 4;
  std::vector<char> in;
  fillRandom(in, gdrInt32, count);
  std::vector<char> all = gatherAll(in);
  DevBuf din(bytes), dout(bytes * gSize);
  din.put(in);
  dout.poison();
  if (gRank == 0) gdr::security::testing::corruptNextRecord();
  GDR_OK(gdrAllGather(din.p, count, dout.p, gdrInt32, comm, s));
  cudaStreamSynchronize(s);
  gdrResult_t err = gdrSuccess;
  gdrCommGetAsyncError(comm, &err);
  // The next call on a failed communicator fails fast with the stored reason.
  const gdrResult_t again = gdrAllGather(din.p, count, dout.p, gdrInt32, comm, s);
  const std::string text = gdrGetLastError(comm) ? gdrGetLastError(comm) : "";
  auto expect = [](bool ok, const std::string& what) {
    ++gChecks;
    if (!ok) {
      ++gFailures;
      std::printf("rank %d: sealed tamper: %s\n", gRank, what.c_str());
    }
  };
  expect(err != gdrSuccess, "the communicator is not in the error state");
  expect(again != gdrSuccess, "a call after the failure did not fail fast");
  expect(text.find("rank 0") != std::string::npos && text.find("failed authentication") != std::string::npos,
         "the error does not name rank 0's failed authentication: '" + text + "'");
  cudaStreamSynchronize(s);
  std::vector<char> got = dout.get(0, bytes * gSize);
  expect(std::all_of(got.begin(), got.begin() + bytes, [](char c) { return c == 0; }),
         "rank 0's forged row was not replaced by zeros");
  expect(std::memcmp(got.data() + bytes, all.data() + bytes, bytes * (gSize - 1)) == 0,
         "the other ranks' rows were not delivered intact");
}

// The totals over every rank; the exit status.
int finish(cudaStream_t s) {
  long tot = 0, checks = 0;
  MPI_Allreduce(&gFailures, &tot, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&gChecks, &checks, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (gRank == 0) std::printf("gpu tests: %ld checks, %ld failed (%d ranks)\n", checks, tot, gSize);
  CUDA_OK(cudaStreamDestroy(s));
  MPI_Finalize();
  return tot ? 1 : 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &gRank);
  gdrtest::gMpiRank = gRank;
  MPI_Comm_size(MPI_COMM_WORLD, &gSize);
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    if (gRank == 0) std::printf("skipped: no CUDA device\n");
    MPI_Finalize();
    return 77;
  }
  CUDA_OK(cudaSetDevice(gRank % ndev));
  std::random_device rd;
  gRng.seed((static_cast<uint64_t>(rd()) << 32) ^ rd() ^ gRank);
  // --quick: without the 256 MiB all-reduce; --ipc-only: without the
  // staged-path sections (runs that force a fused kernel never reach them).
  bool quick = false, ipcOnly = false;
  for (int i = 1; i < argc; ++i) {
    quick = quick || std::string(argv[i]) == "--quick";
    ipcOnly = ipcOnly || std::string(argv[i]) == "--ipc-only";
  }

  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  gdrComm_t comm;
  GDR_OK(gdrCommInitMPI(&comm, MPI_COMM_WORLD));
  auto section = [&](const char* name, auto&& fn) {
    const long before = gFailures;
    fn();
    long f = gFailures - before, tot = 0;
    MPI_Allreduce(&f, &tot, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (gRank == 0) std::printf("[%s] %s\n", tot ? "FAIL" : " ok ", name);
    std::fflush(stdout);
  };
  section("barrier on a stream", [&] {
    GDR_OK(gdrBarrier(comm, s));
    CUDA_OK(cudaStreamSynchronize(s));
  });
  section("allreduce (cuda_ipc)", [&] { testAllReduce(comm, s, "allreduce"); });
  section("reduce", [&] { testReduce(comm, s); });
  section("reduce_scatter", [&] { testReduceScatter(comm, s); });
  section("broadcast, allgather, alltoall(v)", [&] { testMoves(comm, s); });
  section("send/recv", [&] { testSendRecv(comm, s); });
  section("stream order", [&] { testStreamOrder(comm, s); });
  section("cuda graph replay x100", [&] { testGraph(comm, s); });
  section("mixed host/device refused", [&] { testMixedRefused(comm, s); });
  if (!quick) section("allreduce >= 256 MiB", [&] { testLarge(comm, s); });
  reportHostOverhead(comm, s);
#if GDR_TEST_NCCL
  section("gdrcoll vs NCCL (integers, exact)", [&] { testVsNccl(comm, s); });
#endif
  GDR_OK(gdrCommDestroy(comm));
  if (ipcOnly) return finish(s);

  // The staged path (what ranks on different hosts get), forced on one host.
  setenv("GDR_TRANSPORT", "socket", 1);
  gdrComm_t staged;
  GDR_OK(gdrCommInitMPI(&staged, MPI_COMM_WORLD));
  unsetenv("GDR_TRANSPORT");
  section("staged path: allreduce", [&] { testAllReduce(staged, s, "allreduce(staged)"); });
  section("staged path: moves", [&] { testMoves(staged, s); });
  GDR_OK(gdrCommDestroy(staged));

  // The same with GDR_ENCRYPT=1: reductions sealed on the CPU by the socket
  // transport, data movement sealed and opened on the GPU.
  setenv("GDR_TRANSPORT", "socket", 1);
  setenv("GDR_ENCRYPT", "1", 1);
  gdrComm_t sealed;
  GDR_OK(gdrCommInitMPI(&sealed, MPI_COMM_WORLD));
  section("encrypted staged path: allreduce", [&] { testAllReduce(sealed, s, "allreduce(encrypted)"); });
  section("encrypted staged path: moves (GPU-sealed)", [&] { testMoves(sealed, s); });
  section("encrypted staged path: send/recv (GPU-sealed)", [&] { testSendRecv(sealed, s); });
  section("encrypted staged path: a flipped bit is refused", [&] { testSealedTamper(sealed, s); });
  gdrCommDestroy(sealed);  // failed on purpose by the last section
  unsetenv("GDR_TRANSPORT");
  unsetenv("GDR_ENCRYPT");
  return finish(s);
}

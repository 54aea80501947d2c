// gdr-rdma-test modes colls and zcopy (see rdma_driver.cc's header): every
// collective and send/recv with the data checked element by element, and
// zero-copy over verbs both sides of GDR_IB_ZCOPY_BYTES.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "comm/comm.h"
#include "core/error.h"
#include "gdrcoll.h"
#include "rdma_checks.h"
#include "rdma_common.h"
#if GDR_HAVE_IB
#include "transport/ib/ib_endpoint.h"
#endif

namespace rdmatest {

void checkTransport(gdrComm_t comm) {
  auto* c = static_cast<gdr::Communicator*>(comm);
  const char* want = std::getenv("GDR_TEST_EXPECT_TRANSPORT");
  for (int p = 0; p < gSize; ++p) {
    if (p == gRank) continue;
    std::string name = c->transportTo(p);
    std::printf("[rank %d] peer %d: transport %s\n", gRank, p, name.c_str());
    if (want && name != want) {
      std::fprintf(stderr, "[rank %d] peer %d uses %s, expected %s\n", gRank, p, name.c_str(),
                   want);
      ++gFailures;
    }
  }
}


void runColls(gdrComm_t comm) {
  std::vector<size_t> sizes = {0, 1, 7, 1024, 4099, 65536 + 3, 300001};
  if (const char* only = std::getenv("GDR_TEST_SIZES")) {  // e.g. "0,7" to narrow a failure down
    sizes.clear();
    for (const char* p = only; *p;) {
      char* end = nullptr;
      sizes.push_back(std::strtoull(p, &end, 10));
      p = *end ? end + 1 : end;
    }
  }
  int t = 0;
  for (size_t n : sizes) {
    testAllReduce<int32_t>(comm, gdrInt32, gdrSum, n, ++t, false);
    testAllReduce<float>(comm, gdrFloat32, gdrSum, n, ++t, n % 2 == 1);
    testAllReduce<double>(comm, gdrFloat64, gdrMax, n, ++t, false);
    testAllReduce<int64_t>(comm, gdrInt64, gdrMin, n, ++t, false);
    testAllReduce<uint8_t>(comm, gdrUint8, gdrSum, n, ++t, false);
    for (int root = 0; root < gSize; ++root) testBcast<int32_t>(comm, gdrInt32, n, root, ++t);
    testAllGather<float>(comm, gdrFloat32, n, ++t);
    if (!std::getenv("GDR_TEST_NO_REDUCE")) testReduce<int64_t>(comm, gdrInt64, n, gSize - 1, ++t);
    if (!std::getenv("GDR_TEST_NO_RS")) testReduceScatter<float>(comm, gdrFloat32, n, ++t);
    testAllToAll<int32_t>(comm, gdrInt32, n, (t += gSize + 1));
    testSendRecv(comm, n, ++t);
  }
  std::printf(
      "[rank %d] colls: %d sizes x (allreduce x5 types, bcast x%d roots, allgather, reduce, "
      "reduce-scatter, "
      "alltoall, send/recv)\n",
      gRank, (int)sizes.size(), gSize);
  reportIb(comm);
}

#if GDR_HAVE_IB
// This rank's verbs statistics summed over its peers.
gdr::transport::ib::IbStats ibTotals(gdrComm_t comm, size_t* zcopyBytes) {
  gdr::transport::ib::IbStats t;
  auto* c = static_cast<gdr::Communicator*>(comm);
  *zcopyBytes = 0;
  for (int p = 0; p < gSize; ++p) {
    auto* ep = p == gRank ? nullptr : dynamic_cast<gdr::transport::ib::IbEndpoint*>(c->endpoint(p));
    if (!ep) continue;
    auto s = ep->stats();
    t.cpuCopyBytes += s.cpuCopyBytes;
    t.zcopyReceived += s.zcopyReceived;
    t.zcopySent += s.zcopySent;
    *zcopyBytes = ep->zcopyBytes();
  }
  return t;
}
#endif

// Zero-copy over verbs: every collective x type x op at element counts both
// sides of GDR_IB_ZCOPY_BYTES, data checked; above it, the collectives that
// only move data (all-gather, broadcast, all-to-all, send/recv) must not
// have copied one byte with the CPU on the receiving side, and must have
// gone by rendezvous.
void runZcopy(gdrComm_t comm) {
#if GDR_HAVE_IB
  size_t zb = 0;
  ibTotals(comm, &zb);
  if (zb == 0) {
    std::fprintf(stderr, "[rank %d] zcopy: zero-copy is off (GDR_IB_ZCOPY_BYTES=0?)\n", gRank);
    ++gFailures;
    return;
  }
  // Element counts: every message (at most n int64 for send/recv) below the
  // threshold; then the smallest one (a block of n int32, or n / ranks of
  // them for a broadcast cut into pieces) at it, and well above it.
  // GDR_TEST_ZCOPY_QUICK=1 (many ranks in a slow VM): the largest count and
  // the max/min reductions left out.
  const bool quick = envInt("GDR_TEST_ZCOPY_QUICK", 0) == 1;
  const size_t at = zb / 4 * gSize;
  int t = 1000;
  std::vector<size_t> counts = {zb / 8 - 1, at};
  if (!quick) counts.push_back(3 * at + 5);
  std::vector<gdrRedOp_t> ops = {gdrSum};
  if (!quick) ops.insert(ops.end(), {gdrMax, gdrMin});
  for (size_t n : counts) {
    const bool above = n * 4 / gSize >= zb;
    size_t unused = 0;
    auto before = ibTotals(comm, &unused);
    testAllGather<float>(comm, gdrFloat32, n, ++t);
    for (int root = 0; root < gSize; ++root) testBcast<int32_t>(comm, gdrInt32, n, root, ++t);
    testAllToAll<int32_t>(comm, gdrInt32, n, (t += gSize + 1));
    testSendRecv(comm, n, ++t);
    auto after = ibTotals(comm, &unused);
    const uint64_t copied = after.cpuCopyBytes - before.cpuCopyBytes;
    const uint64_t zc = after.zcopyReceived - before.zcopyReceived;
    std::printf(
        "[rank %d] zcopy: n=%zu (%s the threshold of %zu bytes): data-moving collectives "
        "copied %" PRIu64 " bytes with the CPU, %" PRIu64 " messages by rendezvous\n",
        gRank, n, above ? "above" : "at or below", zb, copied, zc);
    if (above && (copied != 0 || zc == 0)) {
      std::fprintf(stderr,
                   "[rank %d] zcopy: n=%zu copied %" PRIu64 " bytes, %" PRIu64
                   " rendezvous messages (want 0 and > 0)\n",
                   gRank, n, copied, zc);
      ++gFailures;
    }
    if (n * 8 < zb && (copied == 0 || zc != 0)) {
      std::fprintf(stderr,
                   "[rank %d] zcopy: n=%zu below the threshold copied %" PRIu64 " bytes, %" PRIu64
                   " rendezvous messages (want > 0 and 0)\n",
                   gRank, n, copied, zc);
      ++gFailures;
    }
    for (gdrRedOp_t op : ops) {
      testAllReduce<int32_t>(comm, gdrInt32, op, n, ++t, false);
      testAllReduce<uint32_t>(comm, gdrUint32, op, n, ++t, true);
      testAllReduce<int64_t>(comm, gdrInt64, op, n, ++t, false);
      testAllReduce<uint64_t>(comm, gdrUint64, op, n, ++t, false);
      testAllReduce<float>(comm, gdrFloat32, op, n, ++t, false);
      testAllReduce<double>(comm, gdrFloat64, op, n, ++t, true);
      testAllReduce<int8_t>(comm, gdrInt8, op, n, ++t, false);
      testAllReduce<uint8_t>(comm, gdrUint8, op, n, ++t, false);
      testReduce<int64_t>(comm, gdrInt64, n, gSize - 1, ++t, op);
      testReduce<float>(comm, gdrFloat32, n, 0, ++t, op);
      testReduceScatter<float>(comm, gdrFloat32, n, ++t, op);
      testReduceScatter<int32_t>(comm, gdrInt32, n, ++t, op);
    }
  }
  reportIb(comm);
#else
  (void)comm;
#endif
}

}  // namespace rdmatest

// The data checks gdr-rdma-test's modes share: what each rank contributes,
// the expected result of every collective, and one test per collective that
// runs it on fresh inputs over poisoned outputs and compares element by
// element (failures counted in gFailures).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <vector>

#include "gdrcoll.h"
#include "rdma_common.h"

namespace rdmatest {

// The value rank r contributes at index i of test t: small integers, so sums
// are exact in every type.
template <typename T>
T val(int t, int r, size_t i) {
  uint64_t h = mix(gSeed ^ (static_cast<uint64_t>(t) << 48) ^ (static_cast<uint64_t>(r) << 40) ^ i);
  return static_cast<T>(static_cast<int>(h % 61) - 30 + (std::is_unsigned<T>::value ? 30 : 0));
}

template <typename T>
bool expectEq(const char* what, const std::vector<T>& got, const std::vector<T>& want) {
  for (size_t i = 0; i < want.size(); ++i)
    if (!(got[i] == want[i])) {
      std::fprintf(stderr, "[rank %d] %s: element %zu of %zu is %g, expected %g\n", gRank, what, i,
                   want.size(), static_cast<double>(got[i]), static_cast<double>(want[i]));
      ++gFailures;
      return false;
    }
  return true;
}

template <typename T>
T combine(T acc, T v, gdrRedOp_t op) {
  return op == gdrSum   ? static_cast<T>(acc + v)
         : op == gdrMax ? std::max(acc, v)
                        : std::min(acc, v);
}

template <typename T>
void testAllReduce(gdrComm_t comm, gdrDataType_t dt, gdrRedOp_t op, size_t n, int t, bool inPlace) {
  std::vector<T> in(n), out(n, poison<T>()), want(n);
  for (size_t i = 0; i < n; ++i) {
    in[i] = val<T>(t, gRank, i);
    T acc = val<T>(t, 0, i);
    for (int r = 1; r < gSize; ++r) acc = combine(acc, val<T>(t, r, i), op);
    want[i] = acc;
  }
  if (inPlace) {
    out = in;
    CHECK_OK(gdrAllReduce(GDR_IN_PLACE, out.data(), n, dt, op, comm, nullptr));
  } else {
    CHECK_OK(gdrAllReduce(in.data(), out.data(), n, dt, op, comm, nullptr));
  }
  char what[96];
  std::snprintf(what, sizeof(what), "allreduce(n=%zu, type %d, op %d%s)", n, dt, op,
                inPlace ? ", in place" : "");
  expectEq(what, out, want);
}

template <typename T>
void testBcast(gdrComm_t comm, gdrDataType_t dt, size_t n, int root, int t) {
  std::vector<T> buf(n, poison<T>()), want(n);
  for (size_t i = 0; i < n; ++i) want[i] = val<T>(t, root, i);
  if (gRank == root) buf = want;
  CHECK_OK(gdrBroadcast(buf.data(), n, dt, root, comm, nullptr));
  char what[64];
  std::snprintf(what, sizeof(what), "bcast(n=%zu, root %d)", n, root);
  expectEq(what, buf, want);
}

template <typename T>
void testAllGather(gdrComm_t comm, gdrDataType_t dt, size_t n, int t) {
  std::vector<T> in(n), out(n * gSize, poison<T>()), want(n * gSize);
  for (size_t i = 0; i < n; ++i) in[i] = val<T>(t, gRank, i);
  for (int r = 0; r < gSize; ++r)
    for (size_t i = 0; i < n; ++i) want[r * n + i] = val<T>(t, r, i);
  CHECK_OK(gdrAllGather(in.data(), n, out.data(), dt, comm, nullptr));
  char what[64];
  std::snprintf(what, sizeof(what), "allgather(n=%zu)", n);
  expectEq(what, out, want);
}

template <typename T>
void testAllToAll(gdrComm_t comm, gdrDataType_t dt, size_t n, int t) {
  // Block d of rank s's input goes to rank d's block s: value tagged by (s, d).
  std::vector<T> in(n * gSize), out(n * gSize, poison<T>()), want(n * gSize);
  for (int d = 0; d < gSize; ++d)
    for (size_t i = 0; i < n; ++i) in[d * n + i] = val<T>(t + d, gRank, i);
  for (int s = 0; s < gSize; ++s)
    for (size_t i = 0; i < n; ++i) want[s * n + i] = val<T>(t + gRank, s, i);
  CHECK_OK(gdrAllToAll(in.data(), n, out.data(), dt, comm, nullptr));
  char what[64];
  std::snprintf(what, sizeof(what), "alltoall(n=%zu)", n);
  expectEq(what, out, want);
}

template <typename T>
void testReduce(gdrComm_t comm, gdrDataType_t dt, size_t n, int root, int t,
                gdrRedOp_t op = gdrSum) {
  std::vector<T> in(n), out(n, poison<T>()), want(n);
  for (size_t i = 0; i < n; ++i) {
    in[i] = val<T>(t, gRank, i);
    T acc = val<T>(t, 0, i);
    for (int r = 1; r < gSize; ++r) acc = combine(acc, val<T>(t, r, i), op);
    want[i] = acc;
  }
  CHECK_OK(gdrReduce(in.data(), out.data(), n, dt, op, root, comm, nullptr));
  char what[64];
  std::snprintf(what, sizeof(what), "reduce(n=%zu, type %d, op %d, root %d)", n, dt, op, root);
  if (gRank == root) expectEq(what, out, want);
}

template <typename T>
void testReduceScatter(gdrComm_t comm, gdrDataType_t dt, size_t n, int t, gdrRedOp_t op = gdrSum) {
  std::vector<T> in(n * gSize), out(n, poison<T>()), want(n);
  for (size_t i = 0; i < n * gSize; ++i) in[i] = val<T>(t, gRank, i);
  for (size_t i = 0; i < n; ++i) {
    T acc = val<T>(t, 0, gRank * n + i);
    for (int r = 1; r < gSize; ++r) acc = combine(acc, val<T>(t, r, gRank * n + i), op);
    want[i] = acc;
  }
  CHECK_OK(gdrReduceScatter(in.data(), out.data(), n, dt, op, comm, nullptr));
  char what[64];
  std::snprintf(what, sizeof(what), "reducescatter(n=%zu, type %d, op %d)", n, dt, op);
  expectEq(what, out, want);
}

inline void testSendRecv(gdrComm_t comm, size_t n, int t) {
  // A ring shift: every rank sends to the next and receives from the previous.
  int next = (gRank + 1) % gSize, prev = (gRank + gSize - 1) % gSize;
  std::vector<int64_t> in(n), out(n, poison<int64_t>()), want(n);
  for (size_t i = 0; i < n; ++i) {
    in[i] = val<int64_t>(t, gRank, i) * 1000003 + static_cast<int64_t>(i);
    want[i] = val<int64_t>(t, prev, i) * 1000003 + static_cast<int64_t>(i);
  }
  CHECK_OK(gdrGroupStart());
  CHECK_OK(gdrSend(in.data(), n, gdrInt64, next, comm, nullptr));
  CHECK_OK(gdrRecv(out.data(), n, gdrInt64, prev, comm, nullptr));
  CHECK_OK(gdrGroupEnd());
  char what[64];
  std::snprintf(what, sizeof(what), "send/recv ring shift(n=%zu)", n);
  expectEq(what, out, want);
}

}  // namespace rdmatest

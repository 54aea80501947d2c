// A program written for the NCCL API and nothing else: it is compiled once
// against gdrcoll's nccl.h and once against the system NCCL's header (and
// linked to the system libnccl), and runs with gdrcoll's libnccl.so.2 on
// LD_LIBRARY_PATH. Without a GPU it passes host buffers, which gdrcoll
// accepts and real NCCL would not (docs/compat.md).
//
//   nccl_api_test <nranks> [substring the loaded libnccl's path must contain]
//
// Ranks are forked processes; rank 0 makes the unique id and a fresh random
// seed and hands both to the others through pipes. Every rank can compute
// every rank's input, so each result is checked element by element.
#include <dlfcn.h>
#include <nccl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "nccl_api_check.h"
#include "nccl_values.h"

namespace nccltest {

int gRank = -1;
int gFailures = 0;
uint64_t gSeed = 0;

double input(int r, size_t i, ncclRedOp_t op) {
  uint64_t h = (gSeed ^ (static_cast<uint64_t>(r) * 0x9e3779b97f4a7c15ull)) + i * 0xbf58476d1ce4e5b9ull;
  h ^= h >> 31;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 29;
  return op == ncclProd ? static_cast<double>(1 + h % 2) : static_cast<double>(h % 15);
}
double combine(double a, double b, ncclRedOp_t op) {
  switch (op) {
    case ncclProd: return a * b;
    case ncclMax: return std::max(a, b);
    case ncclMin: return std::min(a, b);
    default: return a + b;
  }
}
double reduced(int nranks, size_t i, ncclRedOp_t op) {
  double v = input(0, i, op);
  for (int r = 1; r < nranks; ++r) v = combine(v, input(r, i, op), op);
  return op == ncclAvg ? v / nranks : v;
}

}  // namespace nccltest

namespace {

using namespace nccltest;

// ---- element access for every type, through double (tests/compat/nccl_values.h) ----
using ncclval::get;
using ncclval::isFp8;
using ncclval::put;
using ncclval::sizeOf;
using ncclval::typeName;

struct Buf {
  std::vector<unsigned char> bytes;
  ncclDataType_t t;
  Buf(size_t n, ncclDataType_t type) : bytes(n * sizeOf(type) + 1), t(type) { poison(); }
  void poison() { std::memset(bytes.data(), 0xa5, bytes.size()); }
  void* p() { return bytes.data(); }
  void* at(size_t elem) { return bytes.data() + elem * sizeOf(t); }
};

bool close(double got, double want, ncclDataType_t t) {
  if (t == ncclFloat16 || t == ncclBfloat16 || t == ncclFloat32 || t == ncclFloat64)
    return std::fabs(got - want) <= 1e-2 * std::max(1.0, std::fabs(want));
  return got == want;
}

const ncclDataType_t kTypes[] = {ncclInt8, ncclUint8, ncclInt32, ncclUint32, ncclInt64,
                                 ncclUint64, ncclFloat16, ncclFloat32, ncclFloat64, ncclBfloat16};

void testAllReduce(ncclComm_t comm, int rank, int n) {
  const size_t counts[] = {0, 1, 7, 1000, 40000};
  const ncclRedOp_t ops[] = {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg};
  for (ncclDataType_t t : kTypes)
    for (ncclRedOp_t op : ops)
      for (size_t count : counts)
        for (int inPlace = 0; inPlace < 2; ++inPlace) {
          bool isFloat = t == ncclFloat16 || t == ncclBfloat16 || t == ncclFloat32 || t == ncclFloat64;
          if (op == ncclAvg && !isFloat) continue;  // integer avg truncates; covered by gdrcoll's own tests
          if (op == ncclProd && n > 6 && (t == ncclInt8 || t == ncclUint8)) continue;
          Buf send(count, t), recv(count, t);
          for (size_t i = 0; i < count; ++i) put(inPlace ? recv.p() : send.p(), i, t, input(rank, i, op));
          NCCLOK(ncclAllReduce(inPlace ? recv.p() : send.p(), recv.p(), count, t, op, comm, nullptr));
          for (size_t i = 0; i < count; ++i) {
            double want = reduced(n, i, op), got = get(recv.p(), i, t);
            if (!close(got, want, t)) {
              CHECK(false, "allreduce %s op %d count %zu inplace %d: [%zu] = %g, want %g", typeName(t), op, count,
                    inPlace, i, got, want);
              break;
            }
          }
        }
}

// fp8: inputs 0..2 (prod: 1..2), so with up to 4 ranks every partial result
// is exact in both formats whatever the order; avg rounds once, so it is
// within half a unit in the last place (2^-4 relative for E4M3, 2^-3 E5M2).
double fp8Input(int r, size_t i, ncclRedOp_t op) { return op == ncclProd ? input(r, i, op) : std::fmod(input(r, i, op), 3.0); }

void testFp8(ncclComm_t comm, int rank, int n) {
  if (n > 4) return;
  const ncclRedOp_t ops[] = {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg};
  const size_t count = 1001;
  for (ncclDataType_t t : {ncclFloat8e4m3, ncclFloat8e5m2})
    for (ncclRedOp_t op : ops)
      for (int inPlace = 0; inPlace < 2; ++inPlace) {
        Buf send(count, t), recv(count, t);
        for (size_t i = 0; i < count; ++i) put(inPlace ? recv.p() : send.p(), i, t, fp8Input(rank, i, op));
        NCCLOK(ncclAllReduce(inPlace ? recv.p() : send.p(), recv.p(), count, t, op, comm, nullptr));
        for (size_t i = 0; i < count; ++i) {
          double want = fp8Input(0, i, op);
          for (int r = 1; r < n; ++r) want = combine(want, fp8Input(r, i, op), op);
          if (op == ncclAvg) want /= n;
          const double got = get(recv.p(), i, t), ulp = t == ncclFloat8e4m3 ? 0.0625 : 0.125;
          if (op == ncclAvg ? std::fabs(got - want) > ulp * std::max(1.0, std::fabs(want)) : got != want) {
            CHECK(false, "allreduce %s op %d inplace %d: [%zu] = %g, want %g", typeName(t), op, inPlace, i, got, want);
            break;
          }
        }
      }
  // reduce-scatter and all-gather move fp8 blocks like any 1-byte type
  for (ncclDataType_t t : {ncclFloat8e4m3, ncclFloat8e5m2}) {
    const size_t per = 333;
    Buf send(per * n, t), recv(per, t), all(per * n, t);
    for (size_t i = 0; i < per * n; ++i) put(send.p(), i, t, fp8Input(rank, i, ncclMax));
    NCCLOK(ncclReduceScatter(send.p(), recv.p(), per, t, ncclMax, comm, nullptr));
    NCCLOK(ncclAllGather(recv.p(), all.p(), per, t, comm, nullptr));
    for (size_t i = 0; i < per * n; ++i) {
      double want = fp8Input(0, i, ncclMax);
      for (int r = 1; r < n; ++r) want = std::max(want, fp8Input(r, i, ncclMax));
      if (get(all.p(), i, t) != want) { CHECK(false, "fp8 reduce-scatter+all-gather %s [%zu]", typeName(t), i); break; }
    }
  }
}

void testRooted(ncclComm_t comm, int rank, int n) {
  const ncclDataType_t t = ncclFloat32;
  const size_t count = 1025;
  const int root = static_cast<int>(gSeed % n);
  // reduce, out of place and in place
  for (int inPlace = 0; inPlace < 2; ++inPlace) {
    Buf send(count, t), recv(count, t);
    for (size_t i = 0; i < count; ++i) put(inPlace && rank == root ? recv.p() : send.p(), i, t, input(rank, i, ncclSum));
    NCCLOK(ncclReduce(inPlace && rank == root ? recv.p() : send.p(), recv.p(), count, t, ncclMax, root, comm, nullptr));
    if (rank == root)
      for (size_t i = 0; i < count; ++i) {
        double want = input(0, i, ncclSum);
        for (int r = 1; r < n; ++r) want = std::max(want, input(r, i, ncclSum));
        if (get(recv.p(), i, t) != want) { CHECK(false, "reduce inplace %d [%zu]", inPlace, i); break; }
      }
  }
  // broadcast (out of place), broadcast in place, bcast
  for (int form = 0; form < 3; ++form) {
    Buf send(count, t), recv(count, t);
    for (size_t i = 0; i < count; ++i) put(form == 0 ? send.p() : recv.p(), i, t, rank == root ? input(root, i, ncclSum) : -1);
    if (form == 0) NCCLOK(ncclBroadcast(send.p(), recv.p(), count, t, root, comm, nullptr));
    if (form == 1) NCCLOK(ncclBroadcast(recv.p(), recv.p(), count, t, root, comm, nullptr));
    if (form == 2) NCCLOK(ncclBcast(recv.p(), count, t, root, comm, nullptr));
    for (size_t i = 0; i < count; ++i)
      if (get(recv.p(), i, t) != input(root, i, ncclSum)) { CHECK(false, "broadcast form %d [%zu]", form, i); break; }
  }
  // gather and scatter, out of place and in place
  for (int inPlace = 0; inPlace < 2; ++inPlace) {
    Buf send(count, t), all(count * n, t);
    const bool ip = inPlace && rank == root;
    for (size_t i = 0; i < count; ++i) put(ip ? all.at(rank * count) : send.p(), i, t, input(rank, i, ncclSum));
    NCCLOK(ncclGather(ip ? all.at(rank * count) : send.p(), all.p(), count, t, root, comm, nullptr));
    if (rank == root)
      for (int r = 0; r < n; ++r)
        for (size_t i = 0; i < count; ++i)
          if (get(all.p(), r * count + i, t) != input(r, i, ncclSum)) { CHECK(false, "gather ip %d r %d [%zu]", inPlace, r, i); r = n; break; }
    Buf src(count * n, t), dst(count, t);
    if (rank == root)
      for (int r = 0; r < n; ++r)
        for (size_t i = 0; i < count; ++i) put(src.p(), r * count + i, t, input(r, i, ncclProd));
    NCCLOK(ncclScatter(src.p(), ip ? src.at(rank * count) : dst.p(), count, t, root, comm, nullptr));
    const void* mine = ip ? src.at(rank * count) : dst.p();
    for (size_t i = 0; i < count; ++i)
      if (get(mine, i, t) != input(rank, i, ncclProd)) { CHECK(false, "scatter ip %d [%zu]", inPlace, i); break; }
  }
}

void testGatherLike(ncclComm_t comm, int rank, int n) {
  const ncclDataType_t t = ncclInt32;
  const size_t count = 333;
  for (int inPlace = 0; inPlace < 2; ++inPlace) {
    Buf send(count, t), all(count * n, t);
    void* s = inPlace ? all.at(rank * count) : send.p();
    for (size_t i = 0; i < count; ++i) put(s, i, t, input(rank, i, ncclSum));
    NCCLOK(ncclAllGather(s, all.p(), count, t, comm, nullptr));
    for (int r = 0; r < n; ++r)
      for (size_t i = 0; i < count; ++i)
        if (get(all.p(), r * count + i, t) != input(r, i, ncclSum)) { CHECK(false, "allgather ip %d", inPlace); r = n; break; }
    // reduce-scatter: NCCL's in-place form has recvbuff at this rank's block of sendbuff
    Buf in(count * n, t), out(count, t);
    for (size_t i = 0; i < count * n; ++i) put(in.p(), i, t, input(rank, i, ncclSum));
    void* r = inPlace ? in.at(rank * count) : out.p();
    NCCLOK(ncclReduceScatter(in.p(), r, count, t, ncclSum, comm, nullptr));
    for (size_t i = 0; i < count; ++i)
      if (get(r, i, t) != reduced(n, rank * count + i, ncclSum)) { CHECK(false, "reducescatter ip %d [%zu]", inPlace, i); break; }
  }
  Buf a2aIn(count * n, t), a2aOut(count * n, t);
  for (int p = 0; p < n; ++p)
    for (size_t i = 0; i < count; ++i) put(a2aIn.p(), p * count + i, t, input(rank, p * count + i, ncclSum));
  NCCLOK(ncclAlltoAll(a2aIn.p(), a2aOut.p(), count, t, comm, nullptr));
  for (int p = 0; p < n; ++p)
    for (size_t i = 0; i < count; ++i)
      if (get(a2aOut.p(), p * count + i, t) != input(p, rank * count + i, ncclSum)) { CHECK(false, "alltoall from %d", p); p = n; break; }
}

// Every rank sends to both neighbours before receiving: blocking sends
// issued one by one would wait forever; inside a group they complete.
void testGroupSendRecv(ncclComm_t comm, int rank, int n) {
  const ncclDataType_t t = ncclFloat64;
  const size_t count = 100000;  // larger than any eager threshold
  const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  Buf toNext(count, t), toPrev(count, t), fromPrev(count, t), fromNext(count, t);
  for (size_t i = 0; i < count; ++i) {
    put(toNext.p(), i, t, input(rank, i, ncclSum));
    put(toPrev.p(), i, t, input(rank, i + 7, ncclSum));
  }
  NCCLOK(ncclGroupStart());
  NCCLOK(ncclSend(toNext.p(), count, t, next, comm, nullptr));
  NCCLOK(ncclSend(toPrev.p(), count, t, prev, comm, nullptr));
  NCCLOK(ncclRecv(fromPrev.p(), count, t, prev, comm, nullptr));
  NCCLOK(ncclRecv(fromNext.p(), count, t, next, comm, nullptr));
  NCCLOK(ncclGroupEnd());
  for (size_t i = 0; i < count; ++i) {
    if (get(fromPrev.p(), i, t) != input(prev, i, ncclSum)) { CHECK(false, "recv from prev [%zu]", i); break; }
    if (get(fromNext.p(), i, t) != input(next, i + 7, ncclSum)) { CHECK(false, "recv from next [%zu]", i); break; }
  }
}

// fp8 (at most 4 ranks): inputs 0..1 times scalars 1 or 2, so every partial
// sum is a small integer, exact in both formats.
void testPreMulSum(ncclComm_t comm, int rank, int n) {
  const size_t count = 999;
  for (ncclDataType_t t : {ncclFloat32, ncclInt32, ncclBfloat16, ncclInt8, ncclFloat8e4m3, ncclFloat8e5m2}) {
    if (isFp8(t) && n > 4) continue;
    auto scalarOf = [&](int r) { return isFp8(t) ? 1.0 + r % 2 : r + 1.0; };
    auto in = [&](int r, size_t i) { return isFp8(t) ? std::fmod(input(r, i, ncclSum), 2.0) : input(r, i, ncclSum); };
    for (ncclScalarResidence_t res : {ncclScalarHostImmediate, ncclScalarDevice}) {
      Buf scalar(1, t), send(count, t), recv(count, t);
      put(scalar.p(), 0, t, scalarOf(rank));  // ncclScalarDevice with a host pointer: gdrcoll reads it at call time
      ncclRedOp_t op;
      NCCLOK(ncclRedOpCreatePreMulSum(&op, scalar.p(), t, res, comm));
      CHECK(op >= ncclNumOps, "PreMulSum op %d is a built-in value", op);
      for (size_t i = 0; i < count; ++i) put(send.p(), i, t, in(rank, i));
      NCCLOK(ncclAllReduce(send.p(), recv.p(), count, t, op, comm, nullptr));
      for (size_t i = 0; i < count; ++i) {
        double want = 0;
        for (int r = 0; r < n; ++r) want += scalarOf(r) * in(r, i);
        if (t == ncclInt8) want = static_cast<int8_t>(static_cast<int64_t>(want));  // wraps like NCCL
        if (!close(get(recv.p(), i, t), want, t)) { CHECK(false, "premulsum %s res %d [%zu] = %g want %g", typeName(t), res, i, get(recv.p(), i, t), want); break; }
      }
      NCCLOK(ncclRedOpDestroy(op, comm));
      CHECK(ncclAllReduce(send.p(), recv.p(), count, t, op, comm, nullptr) == ncclInvalidArgument,
            "a destroyed op was accepted");
    }
  }
}

// A new two-rank communicator whose first operation is point-to-point (what
// PyTorch makes for send/recv): ranks pair up (0-1, 2-3, ...), a rank left
// over sits out.
void testPairFirstP2p(ncclComm_t comm, int rank, int n) {
  const bool paired = rank / 2 * 2 + 1 < n;
  ncclComm_t pair = nullptr;
  NCCLOK(ncclCommSplit(comm, paired ? rank / 2 : NCCL_SPLIT_NOCOLOR, rank, &pair, nullptr));
  if (!paired) return;
  const int peer = rank ^ 1;
  const size_t count = 3000;
  std::vector<int32_t> out(count), in(count, -1);
  for (size_t i = 0; i < count; ++i) out[i] = static_cast<int32_t>(input(rank, i, ncclSum));
  // Rank 0 of the pair sends first, then receives; outside a group, as
  // torch's dist.send/dist.recv do, with a group for the reply.
  if (rank % 2 == 0) {
    NCCLOK(ncclSend(out.data(), count, ncclInt32, 1, pair, nullptr));
    NCCLOK(ncclGroupStart());
    NCCLOK(ncclRecv(in.data(), count, ncclInt32, 1, pair, nullptr));
    NCCLOK(ncclGroupEnd());
  } else {
    NCCLOK(ncclRecv(in.data(), count, ncclInt32, 0, pair, nullptr));
    NCCLOK(ncclGroupStart());
    NCCLOK(ncclSend(out.data(), count, ncclInt32, 0, pair, nullptr));
    NCCLOK(ncclGroupEnd());
  }
  for (size_t i = 0; i < count; ++i)
    if (in[i] != static_cast<int32_t>(input(peer, i, ncclSum))) {
      CHECK(false, "pair p2p [%zu] = %d", i, in[i]);
      break;
    }
  NCCLOK(ncclCommDestroy(pair));
}

// One rank: every collective is a copy (or nothing, in place).
void testOneRank(ncclComm_t comm, int rank) {
  ncclComm_t self = nullptr;
  NCCLOK(ncclCommSplit(comm, rank, 0, &self, nullptr));
  const size_t count = 4099;
  std::vector<float> a(count), b(count, -1.0f);
  for (size_t i = 0; i < count; ++i) a[i] = static_cast<float>(input(rank, i, ncclSum));
  const std::vector<float> orig = a;
  for (ncclRedOp_t op : {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg}) {
    NCCLOK(ncclAllReduce(a.data(), a.data(), count, ncclFloat32, op, self, nullptr));
    CHECK(a == orig, "one-rank in-place all-reduce op %d changed the data", op);
    std::fill(b.begin(), b.end(), -1.0f);
    NCCLOK(ncclAllReduce(a.data(), b.data(), count, ncclFloat32, op, self, nullptr));
    CHECK(b == orig, "one-rank all-reduce op %d", op);
  }
  std::fill(b.begin(), b.end(), -1.0f);
  NCCLOK(ncclReduce(a.data(), b.data(), count, ncclFloat32, ncclSum, 0, self, nullptr));
  CHECK(b == orig, "one-rank reduce");
  std::fill(b.begin(), b.end(), -1.0f);
  NCCLOK(ncclReduceScatter(a.data(), b.data(), count, ncclFloat32, ncclMax, self, nullptr));
  CHECK(b == orig, "one-rank reduce-scatter");
  std::fill(b.begin(), b.end(), -1.0f);
  NCCLOK(ncclAllGather(a.data(), b.data(), count, ncclFloat32, self, nullptr));
  CHECK(b == orig, "one-rank all-gather");
  std::fill(b.begin(), b.end(), -1.0f);
  NCCLOK(ncclBroadcast(a.data(), b.data(), count, ncclFloat32, 0, self, nullptr));
  CHECK(b == orig, "one-rank broadcast");
  std::fill(b.begin(), b.end(), -1.0f);
  NCCLOK(ncclAlltoAll(a.data(), b.data(), count, ncclFloat32, self, nullptr));
  CHECK(b == orig, "one-rank all-to-all");
  CHECK(a == orig, "one-rank collectives changed their input");
  NCCLOK(ncclCommDestroy(self));
}

void testSplit(ncclComm_t comm, int rank, int n) {
  const int color = (n > 2 && rank == n - 1) ? NCCL_SPLIT_NOCOLOR : rank % 2;
  ncclComm_t sub = nullptr;
  NCCLOK(ncclCommSplit(comm, color, -rank, &sub, nullptr));  // key -rank: reversed order
  if (color == NCCL_SPLIT_NOCOLOR) {
    CHECK(sub == nullptr, "NCCL_SPLIT_NOCOLOR gave a communicator");
    return;
  }
  std::vector<int> members;
  for (int r = n - 1; r >= 0; --r)
    if (r % 2 == color && !(n > 2 && r == n - 1)) members.push_back(r);
  int subRank = -1, subSize = -1;
  NCCLOK(ncclCommUserRank(sub, &subRank));
  NCCLOK(ncclCommCount(sub, &subSize));
  CHECK(subSize == static_cast<int>(members.size()), "split size %d, want %zu", subSize, members.size());
  CHECK(subRank >= 0 && subRank < subSize && members[subRank] == rank, "split rank %d", subRank);
  int64_t mine = rank + 1, sum = -1;
  NCCLOK(ncclAllReduce(&mine, &sum, 1, ncclInt64, ncclSum, sub, nullptr));
  int64_t want = 0;
  for (int r : members) want += r + 1;
  CHECK(sum == want, "split allreduce %lld want %lld", (long long)sum, (long long)want);
  NCCLOK(ncclCommDestroy(sub));
}

void testErrors(ncclComm_t comm, int rank, int n) {
  float x[4] = {0};
  CHECK(ncclBcast(x, 4, ncclFloat32, n + 3, comm, nullptr) == ncclInvalidArgument, "bad root accepted");
  CHECK(ncclAllReduce(x, x, 4, static_cast<ncclDataType_t>(99), ncclSum, comm, nullptr) == ncclInvalidArgument,
        "bad type accepted");
  // Shrink and revoke refuse flags they do not know, naming themselves
  // (both work: testShrinkRevoke).
  ncclComm_t shrunk = reinterpret_cast<ncclComm_t>(&x);
  int exclude = 0;
  ncclResult_t r = ncclCommShrink(comm, &exclude, 1, &shrunk, nullptr, 0x40);
  CHECK(r == ncclInvalidArgument, "ncclCommShrink with bad flags returned %d", r);
  CHECK(std::strstr(ncclGetLastError(comm), "ncclCommShrink") != nullptr, "shrink message: %s", ncclGetLastError(comm));
  CHECK(shrunk == nullptr, "ncclCommShrink left newcomm set");
  // Looked up by name: nccl.h before 2.29 does not declare it.
  using RevokeFn = ncclResult_t (*)(ncclComm_t, int);
  auto revoke = reinterpret_cast<RevokeFn>(dlsym(RTLD_DEFAULT, "ncclCommRevoke"));
  CHECK(revoke != nullptr, "ncclCommRevoke is not exported");
  r = revoke ? revoke(comm, 7) : ncclInvalidArgument;
  CHECK(r == ncclInvalidArgument, "ncclCommRevoke with bad flags returned %d", r);
  CHECK(std::strstr(ncclGetLastError(comm), "ncclCommRevoke") != nullptr, "revoke message: %s",
        ncclGetLastError(comm));
  // Registration handles and windows (gdrCommRegister underneath).
  void* handle = nullptr;
  NCCLOK(ncclCommRegister(comm, x, sizeof(x), &handle));
  CHECK(handle != nullptr, "no registration handle");
  NCCLOK(ncclCommDeregister(comm, handle));
  ncclWindow_t win = nullptr;
  NCCLOK(ncclCommWindowRegister(comm, x, sizeof(x), &win, NCCL_WIN_DEFAULT));
  CHECK(win != nullptr, "no window");
  NCCLOK(ncclCommWindowDeregister(comm, win));
  CHECK(ncclCommWindowDeregister(comm, win) != ncclSuccess, "a window deregistered twice");
#ifdef NCCL_GDRCOLL_COMPAT
  // The device API's host side: properties say there is none, creating a
  // device communicator is refused by name, teams are arithmetic.
  ncclCommProperties_t props = NCCL_COMM_PROPERTIES_INITIALIZER;
  NCCLOK(ncclCommQueryProperties(comm, &props));
  CHECK(props.rank == rank && props.nRanks == n && !props.deviceApiSupport &&
            props.ginType == NCCL_GIN_TYPE_NONE,
        "properties: rank %d of %d, device API %d", props.rank, props.nRanks,
        props.deviceApiSupport);
  ncclDevComm_t* devComm = nullptr;
  r = ncclDevCommCreate(comm, nullptr, devComm);
  CHECK(r == ncclInvalidUsage && std::strstr(ncclGetLastError(comm), "ncclDevCommCreate"),
        "ncclDevCommCreate %d: %s", r, ncclGetLastError(comm));
  ncclTeam_t world = ncclTeamWorld(comm);
  CHECK(world.nRanks == n && world.rank == rank && world.stride == 1, "world team");
  CHECK(ncclTeamRankToWorld(comm, world, (rank + 1) % n) == (rank + 1) % n, "team rank to world");
  CHECK(ncclTeamLsa(comm).nRanks == 1 && ncclLLA2ACalcSlots(3, 12) == 6, "lsa team, LL slots");
  r = ncclCommGrow(comm, n + 1, nullptr, -1, nullptr, nullptr);
  CHECK(r == ncclInvalidUsage && std::strstr(ncclGetLastError(comm), "ncclCommGrow"),
        "ncclCommGrow %d", r);
  CHECK(ncclCommSuspend(comm, NCCL_SUSPEND_MEM) == ncclInvalidUsage, "ncclCommSuspend");
#endif
  // Still usable.
  int one = 1, total = 0;
  NCCLOK(ncclAllReduce(&one, &total, 1, ncclInt32, ncclSum, comm, nullptr));
  CHECK(total == n, "allreduce after errors: %d", total);
  (void)rank;
}

// The last rank is left out (it does not call); the others shrink to a
// communicator of n - 1, use it, revoke it and see a call fail.
void testShrinkRevoke(ncclComm_t comm, int rank, int n) {
  if (rank == n - 1) return;
  int exclude = n - 1;
  ncclComm_t sub = nullptr;
  NCCLOK(ncclCommShrink(comm, &exclude, 1, &sub, nullptr, NCCL_SHRINK_DEFAULT));
  int count = -1, me = -1;
  NCCLOK(ncclCommCount(sub, &count));
  NCCLOK(ncclCommUserRank(sub, &me));
  CHECK(count == n - 1 && me == rank, "shrunk: rank %d of %d", me, count);
  int one = rank + 1, total = 0;
  NCCLOK(ncclAllReduce(&one, &total, 1, ncclInt32, ncclSum, sub, nullptr));
  CHECK(total == (n - 1) * n / 2, "shrunk allreduce %d", total);
  using RevokeFn = ncclResult_t (*)(ncclComm_t, int);
  auto revoke = reinterpret_cast<RevokeFn>(dlsym(RTLD_DEFAULT, "ncclCommRevoke"));
  CHECK(revoke && revoke(sub, 0) == ncclSuccess, "ncclCommRevoke failed");
  ncclResult_t r = ncclAllReduce(&one, &total, 1, ncclInt32, ncclSum, sub, nullptr);
  CHECK(r != ncclSuccess && std::strstr(ncclGetLastError(sub), "revoked"),
        "after the revoke: %d %s", r, ncclGetLastError(sub));
  NCCLOK(ncclCommDestroy(sub));
}

int runRank(int rank, int n, ncclUniqueId id) {
  gRank = rank;
  ncclComm_t comm = nullptr;
  NCCLOK(ncclCommInitRank(&comm, n, id, rank));
  int count = -1, me = -1, dev = -2;
  NCCLOK(ncclCommCount(comm, &count));
  NCCLOK(ncclCommUserRank(comm, &me));
  NCCLOK(ncclCommCuDevice(comm, &dev));
  CHECK(count == n && me == rank, "count %d rank %d", count, me);
  testAllReduce(comm, rank, n);
  testFp8(comm, rank, n);
  testRooted(comm, rank, n);
  testGatherLike(comm, rank, n);
  testGroupSendRecv(comm, rank, n);
  testGroupOrder(comm, rank, n);
  testPreMulSum(comm, rank, n);
  testSplit(comm, rank, n);
  testPairFirstP2p(comm, rank, n);
  testOneRank(comm, rank);
  testErrors(comm, rank, n);
  ncclResult_t async = ncclInternalError;
  NCCLOK(ncclCommGetAsyncError(comm, &async));
  CHECK(async == ncclSuccess, "async error %d", async);
  testShrinkRevoke(comm, rank, n);
  NCCLOK(ncclCommFinalize(comm));
  NCCLOK(ncclCommDestroy(comm));
  return gFailures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 2;
  if (argc > 2) {
    Dl_info info{};
    dladdr(reinterpret_cast<void*>(&ncclGetVersion), &info);
    const char* path = info.dli_fname ? info.dli_fname : "?";
    std::printf("libnccl in use: %s\n", path);
    if (!std::strstr(path, argv[2])) {
      std::fprintf(stderr, "FAIL: expected a libnccl under '%s', got %s\n", argv[2], path);
      return 1;
    }
  }
  gSeed = std::random_device{}();
  gSeed = (gSeed << 32) ^ std::random_device{}();
  std::printf("seed %llu, %d ranks\n", (unsigned long long)gSeed, n);
  std::fflush(stdout);
  // Fork before any library thread exists; rank 0 makes the id.
  std::vector<int> fds(2 * n);
  for (int r = 1; r < n; ++r)
    if (pipe(&fds[2 * r]) != 0) return 3;
  std::vector<pid_t> kids;
  for (int r = 0; r < n; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      ncclUniqueId id;
      if (r == 0) {
        NCCLOK(ncclGetUniqueId(&id));
        for (int p = 1; p < n; ++p)
          if (write(fds[2 * p + 1], &id, sizeof(id)) != sizeof(id)) _exit(3);
      } else if (read(fds[2 * r], &id, sizeof(id)) != sizeof(id)) {
        _exit(3);
      }
      int rc = runRank(r, n, id);
      if (r == 0 && rc == 0) {
        testProcessLocal();
        rc = gFailures ? 1 : 0;
      }
      std::fflush(stdout);
      _exit(rc);
    }
    kids.push_back(pid);
  }
  int failed = 0;
  for (pid_t k : kids) {
    int st = 0;
    waitpid(k, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) ++failed;
  }
  std::printf("%s: %d of %d ranks failed\n", failed ? "FAIL" : "PASS", failed, n);
  return failed ? 1 : 0;
}

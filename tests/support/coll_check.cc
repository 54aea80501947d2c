#include "support/coll_check.h"

#include <cstdio>
#include <cstring>
#include <vector>

#include "core/datatype.h"
#include "reference.h"
#include "support/multiproc.h"

namespace gdrtest {

namespace {

size_t tsize(gdrDataType_t t) { return gdr::typeSize(t); }

constexpr unsigned char kPoison = 0x7b;

std::vector<char> inputs(const CollCase& c, int rank, size_t elems) {
  std::vector<char> b(elems * tsize(c.type) + 1);
  for (size_t i = 0; i < elems; ++i)
    gdrref::store(c.type, b.data(), i, static_cast<double>(gdrref::inputValue(c.type, c.op, rank, i, c.seed)));
  return b;
}

std::vector<char> poisoned(const CollCase& c, size_t elems) {
  return std::vector<char>(elems * tsize(c.type) + 1, static_cast<char>(kPoison));
}

// Compares out[i] with want(i) for i < elems; reports the first mismatch.
template <typename Want>
void expectAll(const char* what, const CollCase& c, const void* out, size_t elems, Want&& want) {
  size_t bad = 0, first = 0;
  double firstGot = 0, firstWant = 0;
  for (size_t i = 0; i < elems; ++i) {
    double w = want(i), g = gdrref::load(c.type, out, i);
    if (!gdrref::matches(c.type, g, w)) {
      if (!bad) first = i, firstGot = g, firstWant = w;
      ++bad;
    }
  }
  CHILD_CHECK(bad == 0, "%s type %d op %d count %zu inplace %d root %d: %zu wrong, first at %zu: got %g want %g",
              what, c.type, c.op, c.count, c.inPlace, c.root, bad, first, firstGot, firstWant);
}

void expectOk(gdrResult_t r, const char* what, gdrComm_t comm) {
  CHILD_CHECK(r == gdrSuccess, "%s returned %d: %s", what, r, gdrGetLastError(comm));
}

}  // namespace

void checkAllReduce(gdrComm_t comm, int rank, int n, const CollCase& c) {
  auto in = inputs(c, rank, c.count);
  auto out = c.inPlace ? in : poisoned(c, c.count);
  expectOk(gdrAllReduce(c.inPlace ? GDR_IN_PLACE : in.data(), out.data(), c.count, c.type, c.op, comm, nullptr),
           "gdrAllReduce", comm);
  expectAll("allreduce", c, out.data(), c.count, [&](size_t i) { return gdrref::expectedReduce(c.type, c.op, i, n, c.seed); });
}

void checkReduce(gdrComm_t comm, int rank, int n, const CollCase& c) {
  const bool root = rank == c.root;
  auto in = inputs(c, rank, c.count);
  auto out = root && c.inPlace ? in : poisoned(c, c.count);
  const void* send = root && c.inPlace ? GDR_IN_PLACE : in.data();
  expectOk(gdrReduce(send, out.data(), c.count, c.type, c.op, c.root, comm, nullptr), "gdrReduce", comm);
  if (root)
    expectAll("reduce", c, out.data(), c.count, [&](size_t i) { return gdrref::expectedReduce(c.type, c.op, i, n, c.seed); });
  else  // a non-root's receive buffer is not touched
    CHILD_CHECK(out == poisoned(c, c.count), "reduce wrote the receive buffer of non-root rank %d", rank);
}

void checkReduceScatter(gdrComm_t comm, int rank, int n, const CollCase& c) {
  auto in = inputs(c, rank, c.count * n);
  std::vector<char> out = c.inPlace ? in : poisoned(c, c.count);
  expectOk(gdrReduceScatter(c.inPlace ? GDR_IN_PLACE : in.data(), out.data(), c.count, c.type, c.op, comm, nullptr),
           "gdrReduceScatter", comm);
  expectAll("reducescatter", c, out.data(), c.count,
            [&](size_t i) { return gdrref::expectedReduce(c.type, c.op, rank * c.count + i, n, c.seed); });
}

// In place: gdrBroadcast; else gdrBroadcastFrom, whose sendbuf only the
// root has (NULL elsewhere: never read there) and keeps unchanged.
void checkBroadcast(gdrComm_t comm, int rank, int, const CollCase& c) {
  const bool root = rank == c.root;
  auto buf = root && c.inPlace ? inputs(c, c.root, c.count) : poisoned(c, c.count);
  const auto send = inputs(c, c.root, c.count);
  if (c.inPlace)
    expectOk(gdrBroadcast(buf.data(), c.count, c.type, c.root, comm, nullptr), "gdrBroadcast",
             comm);
  else
    expectOk(gdrBroadcastFrom(root ? send.data() : nullptr, buf.data(), c.count, c.type, c.root,
                              comm, nullptr),
             "gdrBroadcastFrom", comm);
  expectAll(c.inPlace ? "broadcast" : "broadcast(from)", c, buf.data(), c.count, [&](size_t i) {
    return static_cast<double>(gdrref::inputValue(c.type, c.op, c.root, i, c.seed));
  });
  if (root && !c.inPlace)
    CHILD_CHECK(send == inputs(c, c.root, c.count), "gdrBroadcastFrom changed the root's sendbuf");
}

void checkAllGather(gdrComm_t comm, int rank, int n, const CollCase& c) {
  auto in = inputs(c, rank, c.count);
  auto out = poisoned(c, c.count * n);
  if (c.inPlace) std::memcpy(out.data() + rank * c.count * tsize(c.type), in.data(), c.count * tsize(c.type));
  expectOk(gdrAllGather(c.inPlace ? GDR_IN_PLACE : in.data(), c.count, out.data(), c.type, comm, nullptr),
           "gdrAllGather", comm);
  expectAll("allgather", c, out.data(), c.count * n, [&](size_t i) {
    return static_cast<double>(gdrref::inputValue(c.type, c.op, static_cast<int>(i / c.count), i % c.count, c.seed));
  });
}

void checkAllToAll(gdrComm_t comm, int rank, int n, const CollCase& c) {
  auto in = inputs(c, rank, c.count * n);  // block d goes to rank d
  auto out = c.inPlace ? in : poisoned(c, c.count * n);
  expectOk(gdrAllToAll(c.inPlace ? GDR_IN_PLACE : in.data(), c.count, out.data(), c.type, comm, nullptr),
           "gdrAllToAll", comm);
  expectAll("alltoall", c, out.data(), c.count * n, [&](size_t i) {
    int src = static_cast<int>(i / c.count);
    return static_cast<double>(gdrref::inputValue(c.type, c.op, src, rank * c.count + i % c.count, c.seed));
  });
}

// Rank s sends (s + d) % 3 * count elements to rank d, zeros included.
void checkAllToAllv(gdrComm_t comm, int rank, int n, const CollCase& c) {
  auto cnt = [&](int s, int d) { return static_cast<size_t>((s + d) % 3) * c.count; };
  std::vector<size_t> sc(n), sd(n), rc(n), rd(n);
  size_t stot = 0, rtot = 0;
  for (int d = 0; d < n; ++d) {
    sc[d] = cnt(rank, d), sd[d] = stot, stot += sc[d];
    rc[d] = cnt(d, rank), rd[d] = rtot, rtot += rc[d];
  }
  auto in = inputs(c, rank, stot);
  auto out = poisoned(c, rtot);
  expectOk(gdrAllToAllv(in.data(), sc.data(), sd.data(), out.data(), rc.data(), rd.data(), c.type, comm, nullptr),
           "gdrAllToAllv", comm);
  // Element j of the block from s is s's input at s's send displacement to us.
  for (int s = 0; s < n; ++s) {
    size_t sOff = 0;
    for (int d = 0; d < rank; ++d) sOff += cnt(s, d);
    expectAll("alltoallv", c, out.data() + rd[s] * tsize(c.type), rc[s],
              [&](size_t j) { return static_cast<double>(gdrref::inputValue(c.type, c.op, s, sOff + j, c.seed)); });
  }
}

// Each rank sends to the next and receives from the previous, in one group
// (issued one by one this pattern would wait on itself for large messages).
void checkSendRecvRing(gdrComm_t comm, int rank, int n, const CollCase& c) {
  auto in = inputs(c, rank, c.count);
  auto out = poisoned(c, c.count);
  int next = (rank + 1) % n, prev = (rank - 1 + n) % n;
  expectOk(gdrGroupStart(), "gdrGroupStart", comm);
  expectOk(gdrSend(in.data(), c.count, c.type, next, comm, nullptr), "gdrSend", comm);
  expectOk(gdrRecv(out.data(), c.count, c.type, prev, comm, nullptr), "gdrRecv", comm);
  expectOk(gdrGroupEnd(), "gdrGroupEnd", comm);
  expectAll("sendrecv", c, out.data(), c.count,
            [&](size_t i) { return static_cast<double>(gdrref::inputValue(c.type, c.op, prev, i, c.seed)); });
}

}  // namespace gdrtest
